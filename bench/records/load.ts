import { linkTableName, qualifiedTable, quoteIdent } from '@recordbase/db/physical';
import type pg from 'pg';
import type { ApiClient } from '../lib/api';
import {
  COMPANIES_FIELDS,
  type CompaniesFieldName,
  type Dataset,
  DEALS_FIELDS,
  type DealsFieldName,
  INDUSTRY_OPTIONS,
  KINDS,
  NOTE_WORDS,
  ORGS,
  RARE_SHARE,
  RARE_WORD,
  SECTORS,
  STATUS_OPTIONS,
  TAG_OPTIONS,
} from './dataset';

export {
  type DatabaseDto,
  type FieldDto,
  fieldIdsOf,
  pick,
  seededInsert,
  sqlArray,
  type TableDto,
  timed,
  uuidV7,
} from '../lib/sql-dataset';

import {
  type DatabaseDto,
  fieldIdsOf,
  pick,
  seededInsert,
  sqlArray,
  timed,
  uuidV7,
} from '../lib/sql-dataset';

/**
 * Creates the benchmark data, or reuses it when an earlier run left it complete. The database,
 * tables and the 1,000 companies go through the HTTP API; the Deals records are generated in
 * SQL straight into the physical table and its link table (INSERT ... SELECT generate_series),
 * then VACUUM ANALYZE. State of the load is kept in bench.state of the benchmark database.
 */

/** Bump when the generated data changes, so an older load is not reused. */
const DATA_VERSION = 1;
const BASE_NAME = 'records-bench';

interface LoadState {
  version: number;
  databaseId: string;
  rows: number;
  companies: number;
  loadedMaxSeq: number;
  loadSeconds: number;
  steps: [string, number][];
}

/** Load state of a suite, kept in bench.state of the benchmark database under `name`. */
export async function readState<T>(pool: pg.Pool, name: string): Promise<T | null> {
  await pool.query('CREATE SCHEMA IF NOT EXISTS bench');
  await pool.query(
    'CREATE TABLE IF NOT EXISTS bench.state (name text PRIMARY KEY, value jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())',
  );
  const result = await pool.query<{ value: T }>(`SELECT value FROM bench.state WHERE name = $1`, [name]);
  return result.rows[0]?.value ?? null;
}

export async function writeState(pool: pg.Pool, name: string, state: unknown): Promise<void> {
  await pool.query(
    `INSERT INTO bench.state (name, value) VALUES ($1, $2)
     ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
    [name, JSON.stringify(state)],
  );
}

function datasetOf(database: DatabaseDto, companyIds: string[], state: LoadState, reused: boolean): Dataset {
  const companies = database.tables.find((table) => table.name === 'Companies');
  const deals = database.tables.find((table) => table.name === 'Deals');
  if (!companies || !deals) throw new Error('benchmark database lacks the Companies or Deals table');
  const fieldIds = fieldIdsOf<DealsFieldName>(deals, DEALS_FIELDS);
  return {
    databaseId: database.id,
    schemaName: `base_${database.id.replace(/-/g, '')}`,
    companies: {
      tableId: companies.id,
      fieldIds: fieldIdsOf<CompaniesFieldName>(companies, COMPANIES_FIELDS),
      ids: companyIds,
    },
    deals: {
      tableId: deals.id,
      fieldIds,
      columnFieldIds: DEALS_FIELDS.filter((f) => f.type !== 'linked_record').map((f) => fieldIds[f.name]),
    },
    rows: state.rows,
    loadedMaxSeq: state.loadedMaxSeq,
    load: { reused, seconds: state.loadSeconds, steps: state.steps },
  };
}

async function companyIdsOf(pool: pg.Pool, schemaName: string, tableId: string): Promise<string[]> {
  const result = await pool.query<{ id: string }>(
    `SELECT id::text FROM ${qualifiedTable(schemaName, tableId)} ORDER BY seq`,
  );
  return result.rows.map((row) => row.id);
}

/** Removes what benchmark runs wrote (records past the load) and tidies the table for the next run. */
export async function resetWrites(pool: pg.Pool, dataset: Dataset): Promise<number> {
  const deals = qualifiedTable(dataset.schemaName, dataset.deals.tableId);
  const deleted = await pool.query(`DELETE FROM ${deals} WHERE seq > $1`, [dataset.loadedMaxSeq]);
  await pool.query(`VACUUM (ANALYZE) ${deals}`);
  await pool.query(
    `VACUUM (ANALYZE) ${qualifiedTable(dataset.schemaName, linkTableName(dataset.deals.fieldIds.Company))}`,
  );
  await deleteEvents(pool, dataset.databaseId);
  return deleted.rowCount ?? 0;
}

/** Nothing dispatches the events the benchmark's writes queue; they would only grow. */
export async function deleteEvents(pool: pg.Pool, databaseId: string): Promise<void> {
  const outbox = await pool.query<{ exists: boolean }>(
    `SELECT to_regclass('public.outbox_events') IS NOT NULL AS exists`,
  );
  if (outbox.rows[0]?.exists)
    await pool.query('DELETE FROM outbox_events WHERE database_id = $1', [databaseId]);
}

async function tryReuse(
  pool: pg.Pool,
  api: ApiClient,
  state: LoadState | null,
  rows: number,
  companies: number,
) {
  if (!state || state.version !== DATA_VERSION || state.rows !== rows || state.companies !== companies)
    return null;
  const { status, json } = await api.call<DatabaseDto>('GET', `/bases/${state.databaseId}`);
  if (status !== 200) return null;
  const dataset = datasetOf(json, [], state, true);
  const deals = qualifiedTable(dataset.schemaName, dataset.deals.tableId);
  const count = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${deals} WHERE seq <= $1`, [
    state.loadedMaxSeq,
  ]);
  if (Number(count.rows[0]?.n) !== rows) return null;
  dataset.companies.ids = await companyIdsOf(pool, dataset.schemaName, dataset.companies.tableId);
  if (dataset.companies.ids.length !== companies) return null;
  const removed = await resetWrites(pool, dataset);
  if (removed > 0) console.log(`  removed ${removed} records written by an earlier run`);
  return dataset;
}

function dealsInsertSql(dataset: Dataset): string {
  const f = dataset.deals.fieldIds;
  const columns = [
    'id',
    'created_at',
    'updated_at',
    ...DEALS_FIELDS.filter((d) => d.type !== 'linked_record').map((d) => f[d.name]),
  ];
  const orEmpty = (share: number, value: string) =>
    `CASE WHEN random() < ${share} THEN NULL ELSE ${value} END`;
  const handle = `lower(s.org)`;
  const values: Record<Exclude<DealsFieldName, 'Company'>, string> = {
    Name: `s.org || ' ' || s.sector || ' ' || s.kind || CASE WHEN random() < ${RARE_SHARE} THEN ' ${RARE_WORD}' ELSE '' END || ' #' || s.g`,
    Notes: orEmpty(
      0.3,
      `(SELECT string_agg(${pick(NOTE_WORDS)}, ' ') FROM generate_series(1, 6 + (s.g % 15)))`,
    ),
    Email: orEmpty(0.3, `'buyer.' || s.g || '@' || ${handle} || '.example.com'`),
    Website: orEmpty(0.3, `'https://www.' || ${handle} || '.example.com/deals/' || s.g`),
    Phone: orEmpty(0.3, `'+1 555 ' || lpad(floor(random() * 10000000)::int::text, 7, '0')`),
    Quantity: orEmpty(0.1, `(1 + floor(random() * 500))::double precision`),
    Amount: orEmpty(0.05, `round((random() * 100000)::numeric, 2)::double precision`),
    Probability: orEmpty(0.1, `round(random()::numeric, 2)::double precision`),
    Rating: orEmpty(0.3, `floor(random() * 6)::smallint`),
    Duration: orEmpty(0.3, `floor(random() * 7200)::double precision`),
    CloseDate: orEmpty(0.3, `date '2024-01-01' + floor(random() * 730)::int`),
    LastContact: orEmpty(0.3, `s.ts + random() * interval '30 days'`),
    Status: orEmpty(0.05, pick(STATUS_OPTIONS)),
    Tags: `CASE WHEN s.tag_n < 0.4 THEN '{}'::text[] WHEN s.tag_n < 0.75 THEN ARRAY[s.tags[s.tag_i]] ELSE ARRAY[s.tags[s.tag_i], s.tags[1 + s.tag_i % 6]] END`,
    Won: 'random() < 0.2',
    Files: `CASE WHEN random() < 0.1 THEN jsonb_build_array(jsonb_build_object('url', 'https://cdn.example.com/contracts/' || s.g || '.pdf', 'fileName', 'contract-' || s.g || '.pdf', 'size', 10000 + floor(random() * 900000)::int, 'mimeType', 'application/pdf')) ELSE '[]'::jsonb END`,
    Ref: `'D-' || lpad(s.g::text, 7, '0')`,
  };
  const select = [
    uuidV7('s.ts', 's.h'),
    's.ts',
    's.ts',
    ...DEALS_FIELDS.filter((d) => d.type !== 'linked_record').map(
      (d) => values[d.name as keyof typeof values],
    ),
  ];
  return `INSERT INTO ${qualifiedTable(dataset.schemaName, dataset.deals.tableId)} (${columns.map(quoteIdent).join(', ')})
    SELECT ${select.join(',\n      ')}
    FROM (
      SELECT g, timestamptz '2024-01-01 00:00:00+00' + g * interval '15 seconds' AS ts, md5(g::text || random()::text) AS h,
             ${pick(ORGS)} AS org, ${pick(SECTORS)} AS sector, ${pick(KINDS)} AS kind,
             ${sqlArray(TAG_OPTIONS)} AS tags, random() AS tag_n, 1 + floor(random() * 6)::int AS tag_i
        FROM generate_series(1, $1::int) AS g
      OFFSET 0
    ) AS s`;
}

async function load(pool: pg.Pool, api: ApiClient, old: LoadState | null, rows: number, companies: number) {
  const steps: [string, number][] = [];
  const started = performance.now();
  if (old) {
    const { status } = await api.call('DELETE', `/bases/${old.databaseId}`);
    if (status === 200) console.log(`  dropped the earlier benchmark database ${old.databaseId}`);
  }
  const database = await timed(steps, 'create database and tables (API)', () =>
    api.expect<DatabaseDto>(201, 'POST', '/bases', {
      name: BASE_NAME,
      tables: [
        { name: 'Companies', fields: COMPANIES_FIELDS },
        { name: 'Deals', fields: DEALS_FIELDS },
      ],
    }),
  );
  const state: LoadState = {
    version: DATA_VERSION,
    databaseId: database.id,
    rows,
    companies,
    loadedMaxSeq: 0,
    loadSeconds: 0,
    steps,
  };
  const dataset = datasetOf(database, [], state, false);
  await timed(steps, `create ${companies} companies (API, bulk of 100)`, async () => {
    for (let start = 0; start < companies; start += 100) {
      const records = Array.from({ length: Math.min(100, companies - start) }, (_, i) => ({
        Name: `${ORGS[(start + i) % ORGS.length]} ${SECTORS[(start + i) % SECTORS.length]} ${start + i + 1}`,
        Industry: INDUSTRY_OPTIONS[(start + i) % INDUSTRY_OPTIONS.length],
        Employees: 10 + (((start + i) * 37) % 5000),
      }));
      await api.expect(201, 'POST', `/bases/${database.id}/tables/Companies/records/bulk`, { records });
    }
  });
  dataset.companies.ids = await companyIdsOf(pool, dataset.schemaName, dataset.companies.tableId);
  await timed(steps, `insert ${rows} Deals (SQL)`, () =>
    seededInsert(pool, 0.42, dealsInsertSql(dataset), rows),
  );
  const deals = qualifiedTable(dataset.schemaName, dataset.deals.tableId);
  const links = qualifiedTable(dataset.schemaName, linkTableName(dataset.deals.fieldIds.Company));
  await timed(steps, 'insert Company links, 90% of Deals (SQL)', () =>
    pool.query(
      `INSERT INTO ${links} (record_id, linked_id, position)
       SELECT d.id, c.id, 0
         FROM ${deals} d
         JOIN (SELECT id, row_number() OVER (ORDER BY seq) - 1 AS n FROM ${qualifiedTable(dataset.schemaName, dataset.companies.tableId)}) c
           ON c.n = (d.seq * 7919) % $1
        WHERE d.seq % 10 <> 0`,
      [companies],
    ),
  );
  await timed(steps, 'VACUUM ANALYZE', async () => {
    await pool.query(`VACUUM (ANALYZE) ${deals}`);
    await pool.query(`VACUUM (ANALYZE) ${links}`);
    await pool.query(`VACUUM (ANALYZE) ${qualifiedTable(dataset.schemaName, dataset.companies.tableId)}`);
  });
  const max = await pool.query<{ max: string }>(`SELECT max(seq) AS max FROM ${deals}`);
  state.loadedMaxSeq = Number(max.rows[0]?.max ?? 0);
  state.loadSeconds = (performance.now() - started) / 1000;
  dataset.loadedMaxSeq = state.loadedMaxSeq;
  dataset.load = { reused: false, seconds: state.loadSeconds, steps };
  await writeState(pool, 'records', state);
  return dataset;
}

export async function prepareDataset(
  pool: pg.Pool,
  api: ApiClient,
  rows: number,
  companies: number,
): Promise<Dataset> {
  const state = await readState<LoadState>(pool, 'records');
  const reused = await tryReuse(pool, api, state, rows, companies);
  if (reused) {
    console.log(`  reusing the loaded database ${reused.databaseId} (${rows} Deals)`);
    return reused;
  }
  console.log(`  loading ${rows} Deals ...`);
  const dataset = await load(pool, api, state, rows, companies);
  console.log(`  load finished in ${dataset.load.seconds.toFixed(1)} s`);
  return dataset;
}
