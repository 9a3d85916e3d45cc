import { qualifiedTable, quoteIdent, schemaNameForDatabase } from '@recordbase/db/physical';
import type pg from 'pg';
import type { ApiClient } from '../lib/api';
import { STATUS_OPTIONS, select, TAG_OPTIONS } from './dataset';
import {
  type DatabaseDto,
  deleteEvents,
  fieldIdsOf,
  pick,
  readState,
  seededInsert,
  sqlArray,
  timed,
  uuidV7,
  writeState,
} from './load';

/**
 * The People table (name, email, amount, status, tags, due, active), 100,000 generated
 * rows, through the API (table created with POST /bases, rows generated in SQL straight into its
 * physical table, as load.ts does for Deals), and the raw baseline: the same rows copied into
 * plain tables of the schema bench_people. Each round loads afresh, so every round's first writes
 * meet the table as the API created it (no index the reads may have made).
 */

export const FIRST_NAMES = [
  'Ada',
  'Alan',
  'Grace',
  'Linus',
  'Margaret',
  'Dennis',
  'Barbara',
  'Ken',
  'Frances',
  'Edsger',
  'Radia',
  'Tim',
  'Sophie',
  'Niklaus',
  'Hedy',
  'John',
  'Katherine',
  'Donald',
  'Joan',
  'Bjarne',
  'Anita',
  'Guido',
  'Karen',
  'James',
  'Shafi',
  'Leslie',
  'Mary',
  'Robert',
  'Carol',
  'Yukihiro',
] as const;
export const LAST_NAMES = [
  'Lovelace',
  'Turing',
  'Hopper',
  'Torvalds',
  'Hamilton',
  'Ritchie',
  'Liskov',
  'Thompson',
  'Allen',
  'Dijkstra',
  'Perlman',
  'Berners-Lee',
  'Wilson',
  'Wirth',
  'Lamarr',
  'McCarthy',
  'Johnson',
  'Knuth',
  'Clarke',
  'Stroustrup',
  'Borg',
  'Rossum',
  'Jones',
  'Gosling',
  'Goldwasser',
  'Lamport',
  'Shaw',
  'Kahn',
  'Shannon',
  'Matsumoto',
] as const;
/** Real surnames holding the substring `abc`: ~3% of names, the matches of Q3's `contains 'abc'`. */
export const ABC_LAST_NAMES = ['Abcarian', 'Grabczyk', 'Dabcovich'] as const;
export const NAME_WORD = 'abc';
export const NAME_WORD_SHARE = 0.03;
/** Q2 filters `amount > 500`: amount is uniform over 0..1000 (2% empty). */
export const AMOUNT_MAX = 1000;

export const PEOPLE_FIELDS = [
  { name: 'name', type: 'single_line_text' },
  { name: 'email', type: 'email' },
  { name: 'amount', type: 'number' },
  { name: 'status', type: 'single_select', template: select(STATUS_OPTIONS) },
  { name: 'tags', type: 'multiple_select', template: select(TAG_OPTIONS) },
  { name: 'due', type: 'date' },
  { name: 'active', type: 'checkbox' },
] as const;

export type PeopleFieldName = (typeof PEOPLE_FIELDS)[number]['name'];
export const PEOPLE_COLUMNS = PEOPLE_FIELDS.map((field) => field.name);

/** The raw baseline's schema; its tables have a column per field, named as the field. */
export const RAW_SCHEMA = 'bench_people';

/** The email of the n-th loaded person (1-based): the keys the upserts update. */
export const loadedEmail = (n: number) => `person.${n}@people.example.com`;

export interface People {
  databaseId: string;
  tableId: string;
  fieldIds: Record<PeopleFieldName, string>;
  /** The API's physical table. */
  table: string;
  /** The raw baseline: `table` with the read indexes, `bare` with only the primary key and unique email. */
  raw: { table: string; bare: string };
  rows: number;
  /** Rows past it were written by the benchmark. */
  loadedMaxSeq: number;
  load: { seconds: number; steps: [step: string, seconds: number][] };
}

const BASE_NAME = 'records-bench-people';
const STATE_NAME = 'people';

/** The generated rows, as SQL over `s` (g: 1..rows, ts, h: random hex), in PEOPLE_COLUMNS order. */
function peopleValues(): string[] {
  const orEmpty = (share: number, value: string) =>
    `CASE WHEN random() < ${share} THEN NULL ELSE ${value} END`;
  const values: Record<PeopleFieldName, string> = {
    name: `${pick(FIRST_NAMES)} || ' ' || CASE WHEN random() < ${NAME_WORD_SHARE} THEN ${pick(ABC_LAST_NAMES)} ELSE ${pick(LAST_NAMES)} END`,
    email: `'person.' || s.g || '@people.example.com'`,
    amount: orEmpty(0.02, `round((random() * ${AMOUNT_MAX})::numeric, 2)::double precision`),
    status: orEmpty(0.05, pick(STATUS_OPTIONS)),
    tags: `CASE WHEN s.tag_n < 0.4 THEN '{}'::text[] WHEN s.tag_n < 0.75 THEN ARRAY[s.tags[s.tag_i]] ELSE ARRAY[s.tags[s.tag_i], s.tags[1 + s.tag_i % 6]] END`,
    due: orEmpty(0.2, `date '2024-01-01' + floor(random() * 730)::int`),
    active: 'random() < 0.6',
  };
  return PEOPLE_COLUMNS.map((name) => values[name]);
}

function insertPeopleSql(people: People): string {
  const columns = ['id', 'created_at', 'updated_at', ...PEOPLE_FIELDS.map((f) => people.fieldIds[f.name])];
  const expressions = [uuidV7('s.ts', 's.h'), 's.ts', 's.ts', ...peopleValues()];
  return `INSERT INTO ${people.table} (${columns.map(quoteIdent).join(', ')})
    SELECT ${expressions.join(',\n      ')}
    FROM (
      SELECT g, timestamptz '2024-01-01 00:00:00+00' + g * interval '15 seconds' AS ts, md5(g::text || random()::text) AS h,
             ${sqlArray(TAG_OPTIONS)} AS tags, random() AS tag_n, 1 + floor(random() * 6)::int AS tag_i
        FROM generate_series(1, $1::int) AS g
      OFFSET 0
    ) AS s`;
}

const RAW_COLUMNS = `id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigint GENERATED BY DEFAULT AS IDENTITY,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  name text, email text, amount double precision, status text,
  tags text[] NOT NULL DEFAULT '{}', due date, active boolean NOT NULL DEFAULT false`;

/** The read indexes of the raw baseline: the default order, Q2's filter and sort, Q3's trigrams. */
const RAW_READ_INDEXES = [
  'CREATE INDEX people_created ON bench_people.people (created_at, seq)',
  'CREATE INDEX people_amount ON bench_people.people (amount DESC NULLS LAST, seq)',
  'CREATE INDEX people_status ON bench_people.people (status)',
  'CREATE INDEX people_name_trgm ON bench_people.people USING gin (name gin_trgm_ops)',
];

/** Copies the API table's rows (same ids, seq and values) into the raw tables and indexes them. */
async function loadRaw(pool: pg.Pool, people: People): Promise<void> {
  const fieldColumns = PEOPLE_FIELDS.map((f) => quoteIdent(people.fieldIds[f.name]));
  await pool.query(`CREATE SCHEMA ${RAW_SCHEMA}`);
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  for (const table of [people.raw.table, people.raw.bare]) {
    await pool.query(`CREATE TABLE ${table} (${RAW_COLUMNS})`);
    await pool.query(
      `INSERT INTO ${table} (id, seq, created_at, updated_at, ${PEOPLE_COLUMNS.join(', ')})
       SELECT id, seq, created_at, updated_at, ${fieldColumns.join(', ')} FROM ${people.table} ORDER BY seq`,
    );
    await pool.query(`SELECT setval(pg_get_serial_sequence($1, 'seq'), $2)`, [table, people.loadedMaxSeq]);
    // ON CONFLICT (email) needs it, in both.
    await pool.query(`CREATE UNIQUE INDEX ON ${table} (email)`);
  }
  for (const statement of RAW_READ_INDEXES) await pool.query(statement);
}

/** Deletes what the writes added (in the API's table and the raw ones) and tidies up for what follows. */
export async function resetPeople(pool: pg.Pool, people: People): Promise<number> {
  let removed = 0;
  for (const table of [people.table, people.raw.table, people.raw.bare]) {
    const deleted = await pool.query(`DELETE FROM ${table} WHERE seq > $1`, [people.loadedMaxSeq]);
    removed += deleted.rowCount ?? 0;
    await pool.query(`VACUUM (ANALYZE) ${table}`);
  }
  await deleteEvents(pool, people.databaseId);
  return removed;
}

/** The indexes of a table, as `CREATE INDEX` statements with the schema left out. */
export async function indexesOf(pool: pg.Pool, table: string): Promise<string[]> {
  const result = await pool.query<{ indexdef: string }>(
    `SELECT pg_get_indexdef(i.indexrelid) AS indexdef
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = to_regclass($1) ORDER BY c.relname`,
    [table],
  );
  return result.rows.map((row) => row.indexdef.replace(/ ON \S+\.\S+ USING/, ' USING'));
}

/** Drops the People base of an earlier round or run, if any, and the raw tables. */
export async function dropPeople(pool: pg.Pool, api: ApiClient): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS ${RAW_SCHEMA} CASCADE`);
  const old = await readState<{ databaseId: string }>(pool, STATE_NAME);
  if (!old) return;
  await api.call('DELETE', `/bases/${old.databaseId}`);
  await pool.query(`DELETE FROM bench.state WHERE name = $1`, [STATE_NAME]);
}

/** A fresh People table with `rows` generated rows, and its raw copies. */
export async function loadPeople(pool: pg.Pool, api: ApiClient, rows: number): Promise<People> {
  const steps: [string, number][] = [];
  const started = performance.now();
  await dropPeople(pool, api);
  const database = await timed(steps, 'create database and People (API)', () =>
    api.expect<DatabaseDto>(201, 'POST', '/bases', {
      name: BASE_NAME,
      tables: [{ name: 'People', fields: PEOPLE_FIELDS }],
    }),
  );
  await writeState(pool, STATE_NAME, { databaseId: database.id });
  const table = database.tables.find((t) => t.name === 'People');
  if (!table) throw new Error('the new database lacks People');
  const fieldIds = fieldIdsOf<PeopleFieldName>(table, PEOPLE_FIELDS);
  const people: People = {
    databaseId: database.id,
    tableId: table.id,
    fieldIds,
    table: qualifiedTable(schemaNameForDatabase(database.id), table.id),
    raw: { table: `${RAW_SCHEMA}.people`, bare: `${RAW_SCHEMA}.people_bare` },
    rows,
    loadedMaxSeq: 0,
    load: { seconds: 0, steps },
  };
  await timed(steps, `insert ${rows} People (SQL)`, () =>
    seededInsert(pool, 0.11, insertPeopleSql(people), rows),
  );
  const max = await pool.query<{ max: string }>(`SELECT max(seq) AS max FROM ${people.table}`);
  people.loadedMaxSeq = Number(max.rows[0]?.max ?? 0);
  await timed(steps, 'copy into the raw tables and index them (SQL)', () => loadRaw(pool, people));
  await timed(steps, 'VACUUM ANALYZE', () => resetPeople(pool, people));
  people.load.seconds = (performance.now() - started) / 1000;
  console.log(`  loaded in ${people.load.seconds.toFixed(1)} s`);
  return people;
}
