import { randomBytes } from 'node:crypto';
import { newRecordId } from '@recordbase/db/ids';
import { qualifiedTable } from '@recordbase/db/physical';
import type pg from 'pg';
import type { ApiClient } from '../lib/api';
import { random } from '../lib/random';
import type { BenchConfig } from './config';
import { HttpRunner } from './http-runner';
import { type Measurement, measure, medianOf } from './measure';
import type { Machine } from './results';
import { fmt, measureOptions, type SuiteContext } from './run';

/**
 * Issue 30's costs of history and the trash, through records-api as `npm start` starts it: bulk
 * create, upsert and bulk delete of 100 records per request with history on, and the same on a
 * fresh table with PostgreSQL's `recordbase.history = 'off'` for the database (records-api started
 * again to open its connections with it), in rounds of both orders (on then off, off then on: the
 * first phase after a start runs colder, 10-25 % here), medians shown; and a page of a table's
 * history with 1,000,000 revisions (its newest page and its oldest) against a table with 1,000.
 */

export const HISTORY_MODES = ['on', 'off'] as const;
export type HistoryMode = (typeof HISTORY_MODES)[number];

export interface HistoryWrite {
  id: string;
  title: string;
  concurrency: number;
  on: Measurement;
  off: Measurement;
}

export interface HistoryPage {
  id: string;
  title: string;
  revisions: number;
  api: Measurement;
}

export interface HistoryResults {
  config: BenchConfig;
  machine: Machine;
  startedAt: string;
  writes: HistoryWrite[];
  pages: HistoryPage[];
}

const PER_REQUEST = 100;
const STATUSES = ['Lead', 'Won', 'Lost'];
const TAGS = ['a', 'b', 'c'];
/** Records made ready for the deletes: more than any run of 2 + 10 s of deletes here. */
const DELETABLE = 600_000;

interface Table {
  databaseId: string;
  schemaName: string;
  tableId: string;
  emailFieldId: string;
  path: string;
}

async function createTable(api: ApiClient, name: string): Promise<Table> {
  const base = await api.expect<{
    id: string;
    tables: { id: string; fields: { id: string; name: string }[] }[];
  }>(201, 'POST', '/bases', {
    name,
    tables: [
      {
        name: 'Items',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Email', type: 'email' },
          { name: 'Amount', type: 'number', template: { decimalPlaces: 2 } },
          {
            name: 'Status',
            type: 'single_select',
            template: { options: STATUSES.map((s) => ({ name: s })) },
          },
          { name: 'Tags', type: 'multiple_select', template: { options: TAGS.map((t) => ({ name: t })) } },
        ],
      },
    ],
  });
  const table = base.tables[0]!;
  return {
    databaseId: base.id,
    schemaName: `base_${base.id.replaceAll('-', '')}`,
    tableId: table.id,
    emailFieldId: table.fields.find((field) => field.name === 'Email')!.id,
    path: `/bases/${base.id}/tables/${table.id}/records`,
  };
}

/** Bulk create, upsert (half existing, half new) and bulk delete, each measured on `table`. */
async function measureWrites(
  context: SuiteContext,
  table: Table,
  mode: HistoryMode,
): Promise<Record<string, Measurement>> {
  const { config, server, apiKey, admin } = context;
  const concurrency = config.writeConcurrency;
  const options = measureOptions(config, server, concurrency);
  const next = random(30);
  const runId = randomBytes(4).toString('hex');
  const item = (key: string) => ({
    Name: `Item ${key}`,
    Email: `${key}@example.com`,
    Amount: Math.round(next() * 100_000) / 100,
    Status: STATUSES[Math.floor(next() * STATUSES.length)],
    Tags: TAGS.filter(() => next() < 0.4),
  });
  const http = new HttpRunner(server.baseUrl, apiKey, concurrency);
  const results: Record<string, Measurement> = {};
  try {
    console.log(`H-bulk c=${concurrency} (history ${mode}): bulk create, ${PER_REQUEST} per request`);
    results['H-bulk'] = await measure(
      http.post(
        `${table.path}/bulk`,
        201,
        (worker, sequence) =>
          JSON.stringify({
            records: Array.from({ length: PER_REQUEST }, (_, i) =>
              item(`${runId}.${worker}.${sequence}.${i}`),
            ),
          }),
        PER_REQUEST,
      ),
      options,
    );
    console.log(`  API      ${fmt(results['H-bulk'])}`);

    // The emails the creates wrote, each worker upserting its own share: no two requests lock a row.
    const existing = (
      await admin.query<{ email: string }>(
        `SELECT ${`"${table.emailFieldId}"`} AS email FROM ${qualifiedTable(table.schemaName, table.tableId)} ORDER BY seq LIMIT 100000`,
      )
    ).rows.map((row) => row.email);
    await http.once(`${table.path}/bulk`, {
      records: [item(`${runId}.prepare`)],
      matchOn: [table.emailFieldId],
    });
    // The API builds the matchOn index in the background after the first upsert.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    console.log(
      `H-upsert c=${concurrency} (history ${mode}): upsert by Email, ${PER_REQUEST} per request, half existing`,
    );
    results['H-upsert'] = await measure(
      http.post(
        `${table.path}/bulk`,
        200,
        (worker, sequence) => {
          const records = Array.from({ length: PER_REQUEST }, (_, i) => {
            if (i % 2 === 1) return item(`${runId}.up.${worker}.${sequence}.${i}`);
            const email =
              existing[(worker + concurrency * (sequence * (PER_REQUEST / 2) + i / 2)) % existing.length]!;
            return { ...item(`${runId}.x`), Email: email, Name: `Upserted ${sequence}` };
          });
          return JSON.stringify({ records, matchOn: [table.emailFieldId] });
        },
        PER_REQUEST,
      ),
      options,
    );
    console.log(`  API      ${fmt(results['H-upsert'])}`);

    // Deletable records written straight into the table, their ids handed out 100 at a time. Ids
    // as the API makes them (UUID v7, in time order): random ones would make every index keyed by
    // record id, history's included, take its inserts all over instead of at its right edge.
    const ids = Array.from({ length: DELETABLE }, () => newRecordId());
    for (let from = 0; from < DELETABLE; from += 50_000) {
      await admin.query(
        `INSERT INTO ${qualifiedTable(table.schemaName, table.tableId)} (id, created_at, updated_at)
         SELECT id, now(), now() FROM unnest($1::uuid[]) AS id`,
        [ids.slice(from, from + 50_000)],
      );
    }
    let taken = 0;
    console.log(`H-delete c=${concurrency} (history ${mode}): bulk delete, ${PER_REQUEST} per request`);
    results['H-delete'] = await measure(
      http.post(
        `${table.path}/bulk-delete`,
        200,
        () => {
          const batch = ids.slice(taken, taken + PER_REQUEST);
          taken += PER_REQUEST;
          if (batch.length < PER_REQUEST) throw new Error('H-delete: no records left to delete');
          return JSON.stringify({ ids: batch });
        },
        PER_REQUEST,
      ),
      options,
    );
    console.log(`  API      ${fmt(results['H-delete'])}`);
  } finally {
    await http.close();
  }
  return results;
}

/**
 * `events` record events of 100 records each for the table, appended straight into the outbox (the
 * revisions trigger indexes them as for any write): a history `events * 100` revisions deep.
 */
async function appendRevisions(admin: pg.Pool, table: Table, events: number): Promise<void> {
  for (let done = 0; done < events; done += 1000) {
    await admin.query(
      `INSERT INTO outbox_events (id, database_id, table_id, type, source, data, dispatched_at)
       SELECT gen_random_uuid(), $1::uuid, $2, 'record.created', 'public_api',
              json_build_object('tableId', $2::text,
                'recordIds', (SELECT json_agg(gen_random_uuid()) FROM generate_series(1, 100) WHERE g > 0),
                'records', (SELECT json_agg(json_build_object('id', gen_random_uuid(), 'data',
                             json_build_object('fldName', 'Item ' || k, 'fldAmount', k)))
                              FROM generate_series(1, 100) k WHERE g > 0)),
              now()
         FROM generate_series(1, $3::int) g`,
      [table.databaseId, table.tableId, Math.min(1000, events - done)],
    );
  }
}

/** The cursor after the revision (seq, position), as records-api writes it (domain/records/history.ts). */
const cursorAt = (tableId: string, seq: string, position: number) =>
  Buffer.from(`${tableId}/*/${seq}-${position}`, 'utf8').toString('base64url');

async function measurePages(context: SuiteContext): Promise<HistoryPage[]> {
  const { config, server, apiKey, admin, api } = context;
  const shallow = await createTable(api, `bench history shallow ${randomBytes(3).toString('hex')}`);
  const deep = await createTable(api, `bench history deep ${randomBytes(3).toString('hex')}`);
  console.log('appending 1,000 revisions to one table and 1,000,000 to another ...');
  await appendRevisions(admin, shallow, 10);
  await appendRevisions(admin, deep, 10_000);
  const oldest = (
    await admin.query<{ seq: string }>(
      'SELECT min(event_seq)::text AS seq FROM record_revisions WHERE table_id = $1',
      [deep.tableId],
    )
  ).rows[0]!.seq;
  const http = new HttpRunner(server.baseUrl, apiKey, 1);
  const options = measureOptions(config, server, 1);
  const historyOf = (table: Table) => `/bases/${table.databaseId}/tables/${table.tableId}/history`;
  const cases = [
    {
      id: 'P-1k',
      title: 'newest page of 20, a table with 1,000 revisions',
      table: shallow,
      query: '',
      revisions: 1000,
    },
    {
      id: 'P-1m',
      title: 'newest page of 20, a table with 1,000,000 revisions',
      table: deep,
      query: '',
      revisions: 1_000_000,
    },
    {
      id: 'P-1m-oldest',
      title: 'a page of 20 among the oldest of 1,000,000 revisions (by cursor)',
      table: deep,
      query: `&cursor=${cursorAt(deep.tableId, oldest, 30)}`,
      revisions: 1_000_000,
    },
  ];
  const pages: HistoryPage[] = [];
  try {
    for (const page of cases) {
      console.log(`${page.id} c=1: ${page.title}`);
      const result = await measure(
        http.get(`${historyOf(page.table)}?limit=20${page.query}`, 200, 20),
        options,
      );
      console.log(`  API      ${fmt(result)}`);
      pages.push({ id: page.id, title: page.title, revisions: page.revisions, api: result });
    }
  } finally {
    await http.close();
    // The synthetic events go with their revisions (ON DELETE CASCADE).
    await admin.query('DELETE FROM outbox_events WHERE table_id = ANY($1::text[])', [
      [shallow.tableId, deep.tableId],
    ]);
    for (const table of [shallow, deep]) await api.call('DELETE', `/bases/${table.databaseId}`);
  }
  return pages;
}

/**
 * One mode's writes on a fresh table (deleted after); the pages with history on. `withServer`
 * starts records-api (again) so that its connections are opened under the mode.
 */
export async function runHistorySuite(
  config: BenchConfig,
  admin: pg.Pool,
  machine: Machine,
  startedAt: Date,
  withServer: (work: (context: SuiteContext) => Promise<void>) => Promise<void>,
): Promise<HistoryResults> {
  const database = (await admin.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!.db;
  const byMode: Record<HistoryMode, Record<string, Measurement>[]> = { on: [], off: [] };
  let pages: HistoryPage[] = [];
  const order: HistoryMode[] = [];
  for (let round = 0; round < Math.max(2, config.repeats); round++) {
    order.push(...(round % 2 === 0 ? HISTORY_MODES : [...HISTORY_MODES].reverse()));
  }
  try {
    for (const mode of order) {
      await admin.query(
        mode === 'off'
          ? `ALTER DATABASE "${database}" SET recordbase.history = 'off'`
          : `ALTER DATABASE "${database}" RESET recordbase.history`,
      );
      await withServer(async (context) => {
        const table = await createTable(
          context.api,
          `bench history ${mode} ${randomBytes(3).toString('hex')}`,
        );
        try {
          byMode[mode].push(await measureWrites(context, table, mode));
        } finally {
          await admin.query('DELETE FROM outbox_events WHERE table_id = $1', [table.tableId]);
          await context.api.call('DELETE', `/bases/${table.databaseId}`);
        }
        if (mode === 'on' && pages.length === 0) pages = await measurePages(context);
      });
    }
  } finally {
    await admin.query(`ALTER DATABASE "${database}" RESET recordbase.history`);
  }
  const titles: Record<string, string> = {
    'H-bulk': `bulk create, ${PER_REQUEST} per request`,
    'H-upsert': `upsert by Email (matchOn), ${PER_REQUEST} per request, half existing`,
    'H-delete': `bulk delete, ${PER_REQUEST} per request`,
  };
  return {
    config,
    machine,
    startedAt: startedAt.toISOString(),
    writes: Object.keys(titles).map((id) => ({
      id,
      title: titles[id]!,
      concurrency: config.writeConcurrency,
      on: medianOf(byMode.on.map((round) => round[id]!)),
      off: medianOf(byMode.off.map((round) => round[id]!)),
    })),
    pages,
  };
}
