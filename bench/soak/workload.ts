import { randomUUID } from 'node:crypto';
import type { RecordbaseClient } from '@recordbase/client';
import { random } from '../lib/random';

/**
 * The mixed workload: each operation a user of the API does, with its share of the requests.
 * Every write carries fresh values; the oldest records are deleted as fast as records are added
 * (see `operationSchedule`), so the table stays near its seeded size and each minute's latencies
 * are of the same work. What a growing table costs is bench/records' subject, at each size.
 */

export const STATUSES = ['Lead', 'Qualified', 'Proposal', 'Won', 'Lost'] as const;

export interface SoakTarget {
  client: RecordbaseClient;
  baseId: string;
  tableId: string;
  /** The Email field's id, which upserts match on. */
  emailFieldId: string;
  /** Ids of records bulk-created so far (seeded ones first), for single updates. */
  recordIds: string[];
  /**
   * Ids a delete has taken (in flight or done): a delete listing the oldest records before
   * another's commit must not take them again.
   */
  deleted: Set<string>;
  /** Imports started, to be waited for once the load stops. */
  importIds: string[];
}

export interface Operation {
  name: string;
  /** Relative share of the requests. */
  weight: number;
  run(target: SoakTarget, rand: () => number): Promise<void>;
}

const pick = <T>(items: readonly T[], rand: () => number): T => items[Math.floor(rand() * items.length)]!;

/**
 * Single updates pick among the newest bulk-created records; deletes take the oldest, which are
 * thousands of records older, so no update meets a record deleted under it.
 */
const UPDATED_AMONG_NEWEST = 1_000;
const DELETED_PER_REQUEST = 100;
/** Emails the upserts match on: records carrying one are never deleted (see `seed`). */
const KNOWN_EMAIL_MARK = 'known-';
export const knownEmail = (n: number) => `${KNOWN_EMAIL_MARK}${n}@soak.example`;
const amount = (rand: () => number) => Math.round(rand() * 100_000_00) / 100;

export function dealRecord(rand: () => number, email = `${randomUUID()}@soak.example`) {
  return {
    Name: `Deal ${Math.floor(rand() * 1_000_000)}`,
    Amount: amount(rand),
    Status: pick(STATUSES, rand),
    Email: email,
  };
}

/** A 1×1 PNG: the upload-service judges a file's type from its bytes. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

function csvOf(rows: number, rand: () => number): string {
  const lines = ['Name,Amount,Status,Email'];
  for (let i = 0; i < rows; i += 1) {
    const deal = dealRecord(rand);
    lines.push(`${deal.Name},${deal.Amount},${deal.Status},${deal.Email}`);
  }
  return `${lines.join('\n')}\n`;
}

export const operations: Operation[] = [
  {
    name: 'list (filter, sort, page of 50)',
    weight: 30,
    async run({ client, baseId, tableId }, rand) {
      const low = amount(rand);
      await client.records.list(baseId, tableId, {
        filter: {
          and: [
            { field: 'Status', in: [pick(STATUSES, rand), pick(STATUSES, rand)] },
            { field: 'Amount', greater_than: low },
          ],
        },
        sort: [{ field: 'Amount', direction: 'desc' }],
        limit: 50,
      });
    },
  },
  {
    name: 'aggregate (per Status)',
    weight: 5,
    async run({ client, baseId, tableId }) {
      await client.records.aggregate(baseId, tableId, {
        groupBy: ['Status'],
        aggregations: [{ fn: 'count' }, { field: 'Amount', fn: 'sum' }],
      });
    },
  },
  {
    name: 'bulk create (10)',
    weight: 15,
    async run(target, rand) {
      const answer = await target.client.records.createMany(
        target.baseId,
        target.tableId,
        Array.from({ length: 10 }, () => dealRecord(rand)),
      );
      for (const record of answer.records) target.recordIds.push(record.id);
    },
  },
  {
    name: 'upsert (10 on Email, half new)',
    weight: 10,
    async run(target, rand) {
      // Half the records match one written earlier (an email the run knows), half are new; the
      // known ones are distinct, as a request naming one email twice is refused.
      const known = new Set<number>();
      while (known.size < 5) known.add(Math.floor(rand() * 2_000));
      const emails = [...known].map(knownEmail);
      const records = Array.from({ length: 10 }, (_, i) =>
        dealRecord(rand, i % 2 === 0 ? emails[i / 2] : undefined),
      );
      await target.client.records.upsert(target.baseId, target.tableId, {
        matchOn: [target.emailFieldId],
        records,
      });
    },
  },
  {
    name: 'update one record',
    weight: 15,
    async run(target, rand) {
      const newest = target.recordIds.slice(-UPDATED_AMONG_NEWEST);
      const id = newest.length > 0 ? pick(newest, rand) : undefined;
      if (!id) return;
      await target.client.records.update(target.baseId, target.tableId, id, {
        Amount: amount(rand),
        Status: pick(STATUSES, rand),
      });
    },
  },
  {
    name: `delete the ${DELETED_PER_REQUEST} oldest (a list, then a bulk delete)`,
    weight: 4,
    async run(target) {
      const { client, baseId, tableId, deleted } = target;
      const oldest = await client.records.list(baseId, tableId, {
        filter: { field: 'Email', does_not_contain: KNOWN_EMAIL_MARK },
        sort: [{ field: 'createdAt', direction: 'asc' }],
        fields: ['Name'],
        limit: 3 * DELETED_PER_REQUEST,
      });
      const ids = oldest.records
        .map((record) => record.id)
        .filter((id) => !deleted.has(id))
        .slice(0, DELETED_PER_REQUEST);
      if (ids.length === 0) return;
      for (const id of ids) deleted.add(id);
      try {
        await client.records.deleteMany(baseId, tableId, ids);
      } catch (error) {
        // Nothing was deleted: they may be taken again.
        for (const id of ids) deleted.delete(id);
        throw error;
      }
    },
  },
  {
    name: 'read-only SQL (GROUP BY)',
    weight: 10,
    async run({ client, baseId }, rand) {
      await client.sql.query(baseId, {
        query: 'SELECT "Status", count(*), avg("Amount") FROM "Deals" WHERE "Amount" > $1 GROUP BY 1',
        params: [amount(rand)],
      });
    },
  },
  {
    name: 'upload an attachment',
    weight: 4,
    async run({ client, baseId, tableId }) {
      await client.uploads.attachment(new File([PNG], 'pixel.png', { type: 'image/png' }), {
        baseId,
        tableId,
        fieldId: 'Files',
      });
    },
  },
  {
    name: 'import a CSV (200 rows)',
    weight: 1,
    async run(target, rand) {
      const uploaded = await target.client.uploads.csv(
        new File([csvOf(200, rand)], 'deals.csv', { type: 'text/csv' }),
      );
      const started = await target.client.imports.start(target.baseId, {
        s3Key: uploaded.s3Key,
        tableId: target.tableId,
      });
      target.importIds.push(started.id);
    },
  },
];

/**
 * The operations in a seeded random order, each `weight` times per cycle of
 * `sum(weight)` requests: one cycle adds 400 records (bulk creates 150, upserts 50, an import
 * 200) and deletes as many, so the table's size stays within a cycle's swing of the seeded one.
 */
export function operationSchedule(rand: () => number): () => Operation {
  let cycle: Operation[] = [];
  return () => {
    if (cycle.length === 0) {
      cycle = operations.flatMap((op) => Array.from({ length: op.weight }, () => op));
      // Fisher-Yates with the run's generator.
      for (let i = cycle.length - 1; i > 0; i -= 1) {
        const j = Math.floor(rand() * (i + 1));
        [cycle[i], cycle[j]] = [cycle[j]!, cycle[i]!];
      }
    }
    return cycle.pop()!;
  };
}

/** The seeded generator of the run (bench/records' mulberry32), so two runs send the same requests. */
export const soakRandom = () => random(20261124);
