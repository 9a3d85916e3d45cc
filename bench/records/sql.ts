import { MAX_LIST_LIMIT } from '@recordbase/contracts/records';
import { quoteIdent } from '@recordbase/db/physical';
import type pg from 'pg';
import { ApiClient } from '../lib/api';
import { random } from '../lib/random';
import { type BenchConfig, selected } from './config';
import { HttpRunner } from './http-runner';
import { type Measurement, measure, mediansOfRounds, type Op } from './measure';
import { dropPeople, indexesOf, loadedEmail, loadPeople, PEOPLE_COLUMNS, type People } from './people';
import type { Machine } from './results';
import { fmt, indexBuildsSettled, measureOptions, runOf, type SuiteContext } from './run';
import { type SqlQuery, SqlRunner } from './sql-runner';

/**
 * Read-only SQL (`POST /bases/{id}/sql`) against the same reads through `POST …/records/list` and
 * as raw SQL, on the people suite's 100,000 People: a lookup of one person by email, and count and sum of
 * amount per status over the whole table. Raw SQL is what psql would send as the superuser: the
 * same SELECT on the API's own physical table (field-id columns), so the three paths read the same
 * rows through the same indexes and differ only by what stands between the client and PostgreSQL.
 */

/** `sql`: POST …/sql; `list`: POST …/records/list; `raw`: a pg client on the physical table. */
export const SQL_PATHS = ['sql', 'list', 'raw'] as const;
export type SqlPath = (typeof SQL_PATHS)[number];
const LABELS: Record<SqlPath, string> = { sql: '/sql', list: 'records/list', raw: 'raw SQL' };

export interface SqlCaseResult extends Record<SqlPath, Measurement> {
  id: string;
  title: string;
  concurrency: number;
}

export interface StatusTotal {
  status: string | null;
  count: number;
  sum: number | null;
}

export interface SqlResults {
  config: BenchConfig;
  machine: Machine;
  serverMode: string;
  startedAt: string;
  data: { rows: number; load: People['load'] };
  /** People's indexes on email when the lookups ran. */
  emailIndexes: string[];
  /** How each path finds a person by email: EXPLAIN ANALYZE for /sql and raw, scans counted for records/list. */
  lookupPlans: Record<SqlPath, string[]>;
  /** The aggregate's answer, checked to be the same on the three paths. */
  totals: StatusTotal[];
  /** Requests records/list needs for one aggregate. */
  listPages: number;
  cases: SqlCaseResult[];
}

// Tables and fields by name, as a user of /sql writes them (PEOPLE_FIELDS are lower case).
const SQL_COLUMNS = ['id', 'createdAt', 'updatedAt', ...PEOPLE_COLUMNS].map(quoteIdent).join(', ');
/** The columns records/list returns: id, the two timestamps and every field. */
export const LOOKUP_SQL = `SELECT ${SQL_COLUMNS} FROM "People" WHERE "email" = $1`;
export const AGGREGATE_SQL = 'SELECT "status", count(*), sum("amount") FROM "People" GROUP BY 1';

/** The same statements on the physical table, whose columns are named by field id. */
function rawStatements(people: People): { lookup: string; aggregate: string } {
  const f = people.fieldIds;
  const columns = ['id', 'created_at', 'updated_at', ...PEOPLE_COLUMNS.map((name) => f[name])];
  return {
    lookup: `SELECT ${columns.map(quoteIdent).join(', ')} FROM ${people.table} WHERE ${quoteIdent(f.email)} = $1`,
    aggregate: `SELECT ${quoteIdent(f.status)} AS status, count(*), sum(${quoteIdent(f.amount)}) FROM ${people.table} GROUP BY 1`,
  };
}

const lookupBody = (email: string) => ({ filter: { field: 'email', equals: email }, limit: 1 });

interface SqlAnswer {
  rows: unknown[][];
  rowCount: number;
  truncated: boolean;
}
interface ListPage {
  records: { id: string; fields: Record<string, unknown> }[];
  total: number;
  nextCursor: string | null;
}

/** Null (empty status) first, then by name: the order the paths' answers are compared in. */
const sortTotals = (totals: StatusTotal[]) =>
  totals.sort((a, b) => (a.status === null ? -1 : b.status === null ? 1 : a.status.localeCompare(b.status)));

/**
 * What a user without SQL must do for the aggregate: read every record, page after page of the
 * largest page the API allows, by cursor, and add up on the client. records/list has no choice of
 * fields, so every page carries every field of its records.
 */
async function aggregateByList(
  http: HttpRunner,
  recordsPath: string,
): Promise<{ totals: StatusTotal[]; pages: number; bytes: number }> {
  const groups = new Map<string | null, StatusTotal>();
  let cursor: string | null = null;
  let pages = 0;
  let bytes = 0;
  do {
    const page: { body: ListPage; bytes: number } = await http.json<ListPage>(`${recordsPath}/list`, {
      limit: MAX_LIST_LIMIT,
      ...(cursor ? { cursor } : {}),
    });
    pages += 1;
    bytes += page.bytes;
    for (const record of page.body.records) {
      const status = (record.fields.status ?? null) as string | null;
      const amount = (record.fields.amount ?? null) as number | null;
      const group = groups.get(status) ?? { status, count: 0, sum: null };
      group.count += 1;
      // As SQL's sum: empty amounts are left out, and a group of only empty ones sums to null.
      if (amount !== null) group.sum = (group.sum ?? 0) + amount;
      groups.set(status, group);
    }
    cursor = page.body.nextCursor;
  } while (cursor);
  return { totals: sortTotals([...groups.values()]), pages, bytes };
}

const totalsOfRows = (rows: [unknown, unknown, unknown][]): StatusTotal[] =>
  sortTotals(
    rows.map(([status, count, sum]) => ({
      status: status as string | null,
      // bigint comes back as text from pg, and may from /sql.
      count: Number(count),
      sum: sum === null ? null : Number(sum),
    })),
  );

/** Sums of doubles differ in their last digits with the order they are added in. */
const sameSum = (a: number | null, b: number | null) =>
  a === null || b === null ? a === b : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a));

function assertSameTotals(label: string, expected: StatusTotal[], actual: StatusTotal[]): void {
  const same =
    expected.length === actual.length &&
    expected.every((e, i) => {
      const a = actual[i]!;
      return e.status === a.status && e.count === a.count && sameSum(e.sum, a.sum);
    });
  if (!same)
    throw new Error(
      `aggregate: ${label} differs from raw SQL: ${JSON.stringify(actual)} vs ${JSON.stringify(expected)}`,
    );
}

interface SqlCase {
  id: string;
  title: string;
  ops(http: HttpRunner, raw: SqlRunner): Record<SqlPath, Op>;
}

function sqlCases(people: People, sqlPath: string, recordsPath: string): SqlCase[] {
  const raw = rawStatements(people);
  /** Each path draws the same sequence of people, one at random per request. */
  const emails = () => {
    const next = random(23);
    return () => loadedEmail(1 + Math.floor(next() * people.rows));
  };
  const aggregateBody = JSON.stringify({ query: AGGREGATE_SQL });
  return [
    {
      id: 'lookup',
      title: 'one person by email (a random one of the loaded people per request)',
      ops(http, sql) {
        const sqlEmail = emails();
        const listEmail = emails();
        const rawEmail = emails();
        return {
          sql: http.post(sqlPath, 200, () => JSON.stringify({ query: LOOKUP_SQL, params: [sqlEmail()] })),
          list: http.post(`${recordsPath}/list`, 200, () => JSON.stringify(lookupBody(listEmail()))),
          raw: sql.rows(() => ({ text: raw.lookup, values: [rawEmail()] })),
        };
      },
    },
    {
      id: 'aggregate',
      title: `count and sum of amount per status over all ${people.rows.toLocaleString('en-US')} records`,
      ops(http, sql) {
        const rawAggregate: SqlQuery = { text: raw.aggregate, values: [] };
        return {
          sql: http.post(sqlPath, 200, () => aggregateBody),
          list: async () => ({ bytes: (await aggregateByList(http, recordsPath)).bytes, items: 0 }),
          raw: sql.rows(() => rawAggregate),
        };
      },
    },
  ];
}

/**
 * Filtering a large table on a field makes the API build an index for it in the background (its
 * read indexes; on text, email included, a trigram GIN index, which serves equality too). The
 * table has none on email when loaded, and the matchOn index of upserts indexes a hash of email,
 * which `"email" = $1` cannot use. So the run asks the way a user would, one listing filtered on
 * email, and waits for the build: the three paths then look people up through that index.
 */
async function ensureEmailIndex(
  admin: pg.Pool,
  http: HttpRunner,
  people: People,
  recordsPath: string,
): Promise<string[]> {
  await http.once(`${recordsPath}/list`, lookupBody(loadedEmail(1)));
  await indexBuildsSettled(admin, people.table);
  const column = quoteIdent(people.fieldIds.email);
  const indexes = (await indexesOf(admin, people.table)).filter((d) => d.includes(column));
  if (indexes.length === 0)
    console.warn('  People has no index on email (BENCH_PEOPLE_ROWS below READ_INDEX_MIN_ROWS?)');
  return indexes;
}

/**
 * records/list's statement is the API's own, so how it finds the person is read off PostgreSQL's
 * statistics: the scans of People's indexes and of its heap while only these listings run.
 * Backends report their counts once idle, up to ~10 s later, hence the wait.
 */
async function listScans(admin: pg.Pool, http: HttpRunner, people: People, recordsPath: string) {
  const lookups = 20;
  const scans = async () => {
    const result = await admin.query<{ name: string; scans: string }>(
      `SELECT indexrelname AS name, idx_scan::text AS scans FROM pg_stat_user_indexes WHERE relid = to_regclass($1)
       UNION ALL SELECT 'sequential scans of the table', seq_scan::text FROM pg_stat_user_tables WHERE relid = to_regclass($1)`,
      [people.table],
    );
    return new Map(result.rows.map((row) => [row.name, Number(row.scans)]));
  };
  const before = await scans();
  for (let n = 1; n <= lookups; n++) {
    const page = await http.once<ListPage>(
      `${recordsPath}/list`,
      lookupBody(loadedEmail(1 + ((n * 4999) % people.rows))),
    );
    if (page.records.length !== 1) throw new Error('lookup: records/list did not find the person');
  }
  let grown: [string, number][] = [];
  for (let waited = 0; waited <= 15_000; waited += 500) {
    grown = [...(await scans())]
      .map(([name, count]): [string, number] => [name, count - (before.get(name) ?? 0)])
      .filter(([, delta]) => delta > 0);
    const indexScans = grown
      .filter(([name]) => !name.startsWith('sequential'))
      .reduce((s, [, d]) => s + d, 0);
    if (indexScans >= lookups) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return [
    `${lookups} listings filtered on email, then in pg_stat_user_indexes / pg_stat_user_tables:`,
    ...grown.map(([name, delta]) => `  ${name}: +${delta}`),
    ...(grown.some(([name]) => name.startsWith('sequential')) ? [] : ['  sequential scans of the table: +0']),
  ];
}

/** The lookup and the aggregate answer the same on the three paths; how each finds a person. */
async function checkAnswers(
  admin: pg.Pool,
  http: HttpRunner,
  people: People,
  sqlPath: string,
  recordsPath: string,
) {
  const raw = rawStatements(people);
  const email = loadedEmail(Math.ceil(people.rows / 2));
  const bySql = await http.once<SqlAnswer>(sqlPath, { query: LOOKUP_SQL, params: [email] });
  const byList = await http.once<ListPage>(`${recordsPath}/list`, lookupBody(email));
  const byRaw = await admin.query<{ id: string }>(raw.lookup, [email]);
  const ids = [bySql.rows[0]?.[0], byList.records[0]?.id, byRaw.rows[0]?.id];
  if (
    bySql.rowCount !== 1 ||
    byList.records.length !== 1 ||
    byRaw.rows.length !== 1 ||
    new Set(ids).size !== 1
  )
    throw new Error(`lookup: the paths found different people for ${email}: ${JSON.stringify(ids)}`);
  console.log(`lookup check: ${email} is ${ids[0]} on the three paths`);

  // ANALYZE: what the index scan itself costs PostgreSQL, a floor under every path's latency.
  const explained = await http.once<SqlAnswer>(sqlPath, {
    query: `EXPLAIN (ANALYZE) ${LOOKUP_SQL}`,
    params: [email],
  });
  const rawPlan = await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE) ${raw.lookup}`, [email]);
  const lookupPlans: Record<SqlPath, string[]> = {
    sql: explained.rows.map((row) => String(row[0])),
    list: await listScans(admin, http, people, recordsPath),
    raw: rawPlan.rows.map((row) => row['QUERY PLAN']),
  };
  for (const path of SQL_PATHS) console.log(`  ${LABELS[path]}:\n    ${lookupPlans[path].join('\n    ')}`);

  const rawTotals = totalsOfRows(
    (await admin.query<{ status: string | null; count: string; sum: number | null }>(raw.aggregate)).rows.map(
      (row) => [row.status, row.count, row.sum],
    ),
  );
  const sqlAnswer = await http.once<SqlAnswer>(sqlPath, { query: AGGREGATE_SQL });
  assertSameTotals('/sql', rawTotals, totalsOfRows(sqlAnswer.rows as [unknown, unknown, unknown][]));
  const listed = await aggregateByList(http, recordsPath);
  assertSameTotals('records/list', rawTotals, listed.totals);
  console.log(
    `aggregate check: the same count and sum per status on the three paths (records/list: ${listed.pages} pages of up to ${MAX_LIST_LIMIT}, ${(listed.bytes / 2 ** 20).toFixed(1)} MiB)`,
  );
  for (const t of rawTotals)
    console.log(`  ${t.status ?? '(empty)'}: ${t.count} records, sum of amount ${t.sum?.toFixed(2)}`);
  return { lookupPlans, totals: rawTotals, listPages: listed.pages };
}

async function runRound(context: SuiteContext, apiKey: string, cases: SqlCase[]): Promise<SqlCaseResult[]> {
  const { config, server } = context;
  const results: SqlCaseResult[] = [];
  for (const concurrency of config.readConcurrencies) {
    const http = new HttpRunner(server.baseUrl, apiKey, concurrency);
    const raw = new SqlRunner(config.databaseUrl, concurrency);
    const options = measureOptions(config, server, concurrency);
    try {
      for (const sqlCase of cases) {
        console.log(`${sqlCase.id} c=${concurrency}: ${sqlCase.title}`);
        const ops = sqlCase.ops(http, raw);
        const measured = {} as Record<SqlPath, Measurement>;
        for (const path of SQL_PATHS) {
          measured[path] = await measure(ops[path], options);
          console.log(`  ${LABELS[path].padEnd(12)} ${fmt(measured[path])}`);
        }
        results.push({ id: sqlCase.id, title: sqlCase.title, concurrency, ...measured });
      }
    } finally {
      await http.close();
      await raw.close();
    }
  }
  return results;
}

/** People loaded once (nothing here writes), then BENCH_REPEATS rounds of the cases; medians. */
export async function runSql(context: SuiteContext): Promise<SqlResults> {
  const { config, server, admin, api } = context;
  console.log(`--- sql: loading ${config.peopleRows} People ...`);
  const people = await loadPeople(admin, api, config.peopleRows);
  // Measured with a key holding only what the three paths need, and only for this database.
  const root = new ApiClient(server.baseUrl, context.rootKey);
  const key = await root.expect<{ id: string; key: string }>(201, 'POST', '/api-keys', {
    name: 'bench-sql',
    scopes: ['records:read', 'sql:read'],
    databaseIds: [people.databaseId],
  });
  const sqlPath = `/bases/${people.databaseId}/sql`;
  const recordsPath = `/bases/${people.databaseId}/tables/${people.tableId}/records`;

  const http = new HttpRunner(server.baseUrl, key.key, 1);
  let emailIndexes: string[];
  let checked: Awaited<ReturnType<typeof checkAnswers>>;
  try {
    emailIndexes = await ensureEmailIndex(admin, http, people, recordsPath);
    console.log(`indexes of People on email: ${emailIndexes.join('; ') || 'none'}`);
    checked = await checkAnswers(admin, http, people, sqlPath, recordsPath);
  } finally {
    await http.close();
  }

  const cases = sqlCases(people, sqlPath, recordsPath).filter((c) => selected(config, c.id));
  const rounds: SqlCaseResult[][] = [];
  for (let round = 1; round <= config.repeats; round++) {
    if (config.repeats > 1) console.log(`--- sql round ${round} of ${config.repeats}`);
    rounds.push(await runRound(context, key.key, cases));
  }
  const merged = mediansOfRounds(rounds, SQL_PATHS);

  await root.call('DELETE', `/api-keys/${key.id}`);
  await dropPeople(admin, api);
  return {
    ...runOf(context),
    data: { rows: people.rows, load: people.load },
    emailIndexes,
    ...checked,
    cases: merged,
  };
}
