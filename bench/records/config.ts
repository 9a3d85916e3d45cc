/** Settings of the records benchmark, from the environment (all optional). */

/**
 * `people`: list pages and bulk writes on 100,000 People; `sql`: read-only SQL against records/list and
 * raw SQL on the same People; `airtable`: the same list and write workloads through the
 * Airtable-compatible `/v0` and through `/api/v1`, on the same People; `deals`: the 1,000,000-row Deals cases; `formulas`: formula fields
 * against plain fields and against PostgreSQL's generated columns on 100,000 records; `links`:
 * count, lookup and rollup fields on 100,000 records linking 10,000 others; `history`: bulk writes
 * with history and the trash on and off, and history pages 1,000,000 revisions deep.
 */
export const SUITES = ['people', 'sql', 'airtable', 'deals', 'formulas', 'links', 'history'] as const;
export type Suite = (typeof SUITES)[number];

export interface BenchConfig {
  /** What runs (BENCH_SUITE), in this order. */
  suites: Suite[];
  /** Records loaded into People (people, sql and airtable). */
  peopleRows: number;
  /** Records loaded into the formulas suite's two tables. */
  formulaRows: number;
  /** Records loaded into the links suite's Items and Items plain (Others: a tenth as many). */
  linkRows: number;
  /** The dedicated benchmark database (created and migrated when missing). */
  databaseUrl: string;
  redisUrl: string;
  /** Records loaded into Deals. */
  rows: number;
  /** Records created in Companies (through the API). */
  companies: number;
  durationMs: number;
  warmupMs: number;
  /** Each case is measured this many times; the report shows medians. */
  repeats: number;
  readConcurrencies: number[];
  writeConcurrency: number;
  /** Connections of the records-api's own pool (main.ts uses 20). */
  serverPoolSize: number;
  /** records-api's SQL_MAX_CONNECTIONS: its connections for read-only SQL (sql suite). */
  sqlMaxConnections: number;
  /**
   * What serves the people, sql and deals suites: `stack`, every service as npm start runs them
   * (the others always run on it); `child` and `in-process`, records-api's createApp alone in a
   * child process or in this one: profiling aids, not measurements of what users run.
   */
  server: 'stack' | 'child' | 'in-process';
  /** The stack's requests go through the nginx gateway, as npm start's front door. */
  gateway: boolean;
  /** Case ids to run (Q1, Q2, ...); all when empty. */
  only: string[];
  /** Rewrite bench/README.md with the results (and keep them in results*.json). */
  writeReadme: boolean;
}

function numberFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${raw}`);
  return value;
}

function serverFrom(raw: string | undefined, inProcess: boolean): BenchConfig['server'] {
  if (inProcess) return 'in-process';
  if (raw === undefined || raw === '' || raw === 'stack') return 'stack';
  if (raw === 'child' || raw === 'in-process') return raw;
  throw new Error(`BENCH_SERVER must be stack, child or in-process, got ${raw}`);
}

export function loadBenchConfig(): BenchConfig {
  const only = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((id) => id.trim().toUpperCase())
    .filter(Boolean);
  const rows = Math.round(numberFrom('BENCH_ROWS', 1_000_000));
  const peopleRows = Math.round(numberFrom('BENCH_PEOPLE_ROWS', 100_000));
  const formulaRows = Math.round(numberFrom('BENCH_FORMULA_ROWS', 100_000));
  const linkRows = Math.round(numberFrom('BENCH_LINK_ROWS', 100_000));
  const suiteNames = (process.env.BENCH_SUITE || SUITES.join(','))
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const unknown = suiteNames.filter((name) => !(SUITES as readonly string[]).includes(name));
  if (unknown.length > 0 || suiteNames.length === 0)
    throw new Error(`BENCH_SUITE must list some of ${SUITES.join(', ')}, got ${process.env.BENCH_SUITE}`);
  return {
    suites: SUITES.filter((suite) => suiteNames.includes(suite)),
    peopleRows,
    formulaRows,
    linkRows,
    databaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/recordbase_bench',
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    rows,
    companies: Math.round(numberFrom('BENCH_COMPANIES', 1_000)),
    durationMs: numberFrom('BENCH_DURATION_S', 10) * 1000,
    warmupMs: numberFrom('BENCH_WARMUP_S', 2) * 1000,
    repeats: Math.round(numberFrom('BENCH_REPEATS', 1)),
    readConcurrencies: (process.env.BENCH_CONCURRENCY ?? '1,16').split(',').map(Number),
    writeConcurrency: Math.round(numberFrom('BENCH_WRITE_CONCURRENCY', 4)),
    serverPoolSize: Math.round(numberFrom('BENCH_SERVER_POOL', 20)),
    sqlMaxConnections: Math.round(numberFrom('BENCH_SQL_MAX_CONNECTIONS', 8)),
    server: serverFrom(process.env.BENCH_SERVER, process.env.BENCH_IN_PROCESS === '1'),
    gateway: process.env.BENCH_GATEWAY === '1',
    only,
    writeReadme:
      process.env.BENCH_WRITE_README !== '0' &&
      only.length === 0 &&
      rows === 1_000_000 &&
      peopleRows === 100_000 &&
      formulaRows === 100_000 &&
      linkRows === 100_000,
  };
}

export const selected = (config: BenchConfig, id: string): boolean =>
  config.only.length === 0 || config.only.includes(id.toUpperCase());
