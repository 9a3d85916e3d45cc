import { randomBytes } from 'node:crypto';
import { matchIndexPrefix } from '@recordbase/db/physical';
import type pg from 'pg';
import { random } from '../lib/random';
import { type BenchConfig, selected } from './config';
import { STATUS_OPTIONS, TAG_OPTIONS } from './dataset';
import type { HttpRunner } from './http-runner';
import {
  AMOUNT_MAX,
  dropPeople,
  FIRST_NAMES,
  indexesOf,
  LAST_NAMES,
  loadedEmail,
  loadPeople,
  NAME_WORD,
  PEOPLE_COLUMNS,
  type People,
  RAW_SCHEMA,
  resetPeople,
} from './people';
import {
  DEFAULT_ORDER,
  type RawShape,
  type RawWrite,
  RECORDS_PER_REQUEST,
  type ReadCase,
  rawList,
  type WriteCase,
} from './queries';
import type { Machine, ReadResult, WriteResult } from './results';
import { mergeRepeats, runOf, runReads, runWrites, type SuiteContext, type Target } from './run';
import type { SqlQuery } from './sql-runner';

/**
 * The People workloads, on 100,000 People, each beside raw SQL on an equivalent indexed table in
 * the same run: Q1-Q3 (raw page only, and page plus exact count), then bulk create and upsert by
 * email (raw INSERT and INSERT ... ON CONFLICT, on the indexed raw table and on one without the
 * read indexes). The writes run before the reads and again after them: indexes the API may build
 * when a field is first filtered or sorted are paid for by the writes that follow.
 */

export const PHASES = ['before reads', 'after reads'] as const;

export interface PeopleResults {
  config: BenchConfig;
  machine: Machine;
  serverMode: string;
  startedAt: string;
  data: { rows: number; load: People['load'] };
  /** The indexes of each table when each write phase ended (last round). */
  indexes: { api: Record<string, string[]>; raw: string[]; rawBare: string[] };
  reads: ReadResult[];
  writes: WriteResult[];
}

/** Q2's filter: amount above half its range, status one of two (~19% of People); the airtable suite's L2 too. */
export const Q2_AMOUNT = AMOUNT_MAX / 2;
export const Q2_STATUSES = ['Qualified', 'Proposal'];

export function peopleReadCases(people: People): ReadCase[] {
  const source = {
    table: `${people.raw.table}`,
    columns: ['id', 'created_at', 'updated_at', ...PEOPLE_COLUMNS],
  };
  const pageAndCount = (shape: Omit<RawShape, 'withTotal'>) => ({
    raw: rawList(source, { ...shape, withTotal: false }),
    rawWithTotal: rawList(source, { ...shape, withTotal: true }),
  });
  return [
    {
      id: 'Q1',
      title: 'first page of 100, default order',
      body: { limit: 100 },
      ...pageAndCount({ where: 'TRUE', values: [], order: DEFAULT_ORDER, limit: 100, offset: 0 }),
    },
    {
      id: 'Q2',
      title: `amount > ${Q2_AMOUNT} and status in [${Q2_STATUSES.join(', ')}], amount desc, offset 1000, limit 100`,
      body: {
        filter: {
          and: [
            { field: 'amount', greater_than: Q2_AMOUNT },
            { field: 'status', in: Q2_STATUSES },
          ],
        },
        sort: [{ field: 'amount', direction: 'desc' }],
        limit: 100,
        offset: 1000,
      },
      ...pageAndCount({
        where: '(r.amount > $1::double precision AND r.status = ANY($2::text[]))',
        values: [Q2_AMOUNT, Q2_STATUSES],
        order: 'r.amount DESC NULLS LAST, r.seq ASC',
        limit: 100,
        offset: 1000,
      }),
    },
    {
      id: 'Q3',
      title: `name contains '${NAME_WORD}', limit 100`,
      body: { filter: { field: 'name', contains: NAME_WORD }, limit: 100 },
      ...pageAndCount({
        where: `r.name ILIKE $1::text ESCAPE '\\'`,
        values: [`%${NAME_WORD}%`],
        order: DEFAULT_ORDER,
        limit: 100,
        offset: 0,
      }),
    },
  ];
}

export type Row = Record<string, unknown>;

/** `INSERT INTO table (columns) VALUES (…), (…) [suffix]` of `rows`, every value a typed parameter. */
function insertRows(
  table: string,
  columns: [name: string, type: string][],
  rows: Row[],
  suffix = '',
): SqlQuery {
  const values: unknown[] = [];
  const tuples = rows.map((row) => {
    const params = columns.map(([name, type]) => {
      values.push(row[name] ?? null);
      return `$${values.length}::${type}`;
    });
    return `(${params.join(', ')})`;
  });
  const names = columns.map(([name]) => name).join(', ');
  return { text: `INSERT INTO ${table} (${names}) VALUES ${tuples.join(', ')}${suffix}`, values };
}

const FULL_COLUMNS: [string, string][] = [
  ['name', 'text'],
  ['email', 'text'],
  ['amount', 'double precision'],
  ['status', 'text'],
  ['tags', 'text[]'],
  ['due', 'date'],
  ['active', 'boolean'],
];
const UPSERT_COLUMNS: [string, string][] = [
  ['email', 'text'],
  ['tags', 'text[]'],
  ['due', 'date'],
  ['active', 'boolean'],
];
const ON_CONFLICT =
  ' ON CONFLICT (email) DO UPDATE SET tags = EXCLUDED.tags, due = EXCLUDED.due, active = EXCLUDED.active, updated_at = now()';

/** Waits (at most a minute) until the index the API builds for an upsert's matchOn is usable. */
async function matchIndexReady(pool: pg.Pool, people: People): Promise<boolean> {
  for (let waited = 0; waited < 60_000; waited += 200) {
    const result = await pool.query<{ ready: boolean }>(
      `SELECT bool_or(i.indisvalid) AS ready FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = to_regclass($1) AND starts_with(c.relname, $2)`,
      [people.table, matchIndexPrefix(people.tableId)],
    );
    if (result.rows[0]?.ready) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

/**
 * Seeded values of People as the writes send them, keys the field names (also the raw columns):
 * a new person with every field set, and the parts of one.
 */
export function personValues(seed: number) {
  const next = random(seed);
  const pickOf = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const day = () =>
    new Date(Date.UTC(2024, 0, 1) + Math.floor(next() * 730) * 86_400_000).toISOString().slice(0, 10);
  const tags = () => (next() < 0.4 ? [] : [...new Set([pickOf(TAG_OPTIONS), pickOf(TAG_OPTIONS)])]);
  const person = (key: string): Row => ({
    name: `${pickOf(FIRST_NAMES)} ${pickOf(LAST_NAMES)}`,
    email: `${key}@new.example.com`,
    amount: Math.round(next() * AMOUNT_MAX * 100) / 100,
    status: pickOf(STATUS_OPTIONS),
    tags: tags(),
    due: day(),
    active: next() < 0.6,
  });
  return { next, day, tags, person };
}

export function peopleWriteCases(
  people: People,
  pool: pg.Pool,
  runId: string,
  concurrency: number,
): WriteCase[] {
  const { next, day, tags, person } = personValues(11);
  const newPeople = (prefix: string, sequence: number) =>
    Array.from({ length: RECORDS_PER_REQUEST }, (_, i) => person(`${prefix}.${runId}.${sequence}.${i}`));
  /**
   * Half emails of loaded people (updated: tags, due, active; no field the reads filter on), half
   * new ones (created). Each worker updates its own share of the loaded rows, so concurrent
   * requests never lock the same rows (no deadlock in either the API or raw SQL).
   */
  const upserts = (prefix: string, worker: number, sequence: number): Row[] => {
    const existing = new Set<number>();
    const perWorker = Math.floor(people.rows / concurrency);
    while (existing.size < RECORDS_PER_REQUEST / 2)
      existing.add(1 + worker + concurrency * Math.floor(next() * perWorker));
    const keys = [...existing].sort((a, b) => a - b);
    return Array.from({ length: RECORDS_PER_REQUEST }, (_, i) => ({
      email: i % 2 === 0 ? loadedEmail(keys[i / 2]!) : `${prefix}.${runId}.${sequence}.${i}@new.example.com`,
      tags: tags(),
      due: day(),
      active: next() < 0.6,
    }));
  };
  const rawVariants = (
    label: string,
    statement: (table: string, prefix: string, worker: number, sequence: number) => SqlQuery,
  ): RawWrite[] => [
    {
      key: 'raw',
      label: `raw ${label}, read indexes`,
      statement: (worker, sequence) => statement(people.raw.table, 'raw', worker, sequence),
    },
    {
      key: 'rawBare',
      label: `raw ${label}, no read indexes`,
      statement: (worker, sequence) => statement(people.raw.bare, 'bare', worker, sequence),
    },
  ];
  // Upsert first: its matchOn index on email then exists for both phases of both cases, so what
  // differs between the phases is what the reads left behind.
  return [
    {
      id: 'upsert',
      title: `upsert by email (matchOn), ${RECORDS_PER_REQUEST} per request, half existing, half new`,
      expectedStatus: 200,
      recordsPerRequest: RECORDS_PER_REQUEST,
      body: (worker, sequence) =>
        JSON.stringify({ records: upserts('api', worker, sequence), matchOn: [people.fieldIds.email] }),
      // The first upsert makes the API build its matchOn index in the background: measured once built.
      async prepare(http: HttpRunner) {
        await http.once(`/bases/${people.databaseId}/tables/${people.tableId}/records/bulk`, {
          records: [{ email: `prepare.${runId}@new.example.com` }],
          matchOn: [people.fieldIds.email],
        });
        if (!(await matchIndexReady(pool, people)))
          console.warn('  the matchOn index of email was not ready after 60 s; measuring anyway');
      },
      raw: rawVariants('INSERT … ON CONFLICT (email)', (table, prefix, worker, sequence) =>
        insertRows(table, UPSERT_COLUMNS, upserts(prefix, worker, sequence), ON_CONFLICT),
      ),
    },
    {
      id: 'bulk',
      title: `bulk create, ${RECORDS_PER_REQUEST} per request`,
      expectedStatus: 201,
      recordsPerRequest: RECORDS_PER_REQUEST,
      body: (_worker, sequence) => JSON.stringify({ records: newPeople('api', sequence) }),
      raw: rawVariants('INSERT', (table, prefix, _worker, sequence) =>
        insertRows(table, FULL_COLUMNS, newPeople(prefix, sequence)),
      ),
    },
  ];
}

/** One round per BENCH_REPEATS, each on a freshly loaded table: writes, reads, writes again. */
export async function runPeopleSuite(context: SuiteContext): Promise<PeopleResults> {
  const { config, server, apiKey, admin, api } = context;
  const readRounds: ReadResult[][] = [];
  const writeRounds: WriteResult[][] = [];
  let people: People | undefined;
  const indexes: PeopleResults['indexes'] = { api: {}, raw: [], rawBare: [] };
  for (let round = 1; round <= config.repeats; round++) {
    console.log(`--- people round ${round} of ${config.repeats}: loading ${config.peopleRows} People ...`);
    people = await loadPeople(admin, api, config.peopleRows);
    const target: Target = {
      config,
      server,
      apiKey,
      recordsPath: `/bases/${people.databaseId}/tables/${people.tableId}/records`,
      table: { name: people.table, pool: admin },
    };
    const writes = peopleWriteCases(people, admin, randomBytes(4).toString('hex'), config.writeConcurrency);
    const roundWrites: WriteResult[] = [];
    const writePhase = async (phase: string) => {
      roundWrites.push(...(await runWrites(target, writes, phase)));
      indexes.api[phase] = await indexesOf(admin, people!.table);
      const removed = await resetPeople(admin, people!);
      console.log(`removed the ${removed} rows the writes ${phase} added`);
    };
    await writePhase(PHASES[0]);
    readRounds.push(
      await runReads(
        target,
        peopleReadCases(people).filter((c) => selected(config, c.id)),
      ),
    );
    await writePhase(PHASES[1]);
    writeRounds.push(roundWrites);
  }
  indexes.raw = await indexesOf(admin, `${RAW_SCHEMA}.people`);
  indexes.rawBare = await indexesOf(admin, `${RAW_SCHEMA}.people_bare`);
  await dropPeople(admin, api);
  return {
    ...runOf(context),
    data: { rows: config.peopleRows, load: people!.load },
    indexes,
    ...mergeRepeats(readRounds, writeRounds),
  };
}
