import { randomUUID } from 'node:crypto';
import type { RecordbaseClient } from '@recordbase/client';
import { random } from '../records/queries';

/**
 * The mixed workload: each operation a user of the API does, with its share of the requests.
 * Every write carries fresh values, so the table grows through the run as it would in use.
 */

export const STATUSES = ['Lead', 'Qualified', 'Proposal', 'Won', 'Lost'] as const;

export interface SoakTarget {
  client: RecordbaseClient;
  baseId: string;
  tableId: string;
  /** The Email field's id, which upserts match on. */
  emailFieldId: string;
  /** Ids of records written so far, for single updates. */
  recordIds: string[];
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
      const emails = [...known].map((n) => `known-${n}@soak.example`);
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
      const id = target.recordIds.length > 0 ? pick(target.recordIds, rand) : undefined;
      if (!id) return;
      await target.client.records.update(target.baseId, target.tableId, id, {
        Amount: amount(rand),
        Status: pick(STATUSES, rand),
      });
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

/** The seeded generator of the run (bench/records' mulberry32), so two runs send the same requests. */
export const soakRandom = () => random(20261124);
