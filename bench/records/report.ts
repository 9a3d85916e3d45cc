import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { sourceFingerprint as fingerprint, host, loadAverage } from '../lib/machine';
import type { BenchConfig } from './config';
import type { Dataset } from './dataset';
import type { Issue11Results } from './issue11';
import type { Measurement } from './measure';
import type { AggregateBody, ListBody } from './queries';
import type { SqlCaseResult, SqlPath, SqlResults } from './sql';

export interface ReadResult {
  id: string;
  title: string;
  /** `aggregate` for records/aggregate (Q8a, Q8b); absent for records/list. */
  endpoint?: 'list' | 'aggregate';
  /** The case whose page this one reshapes (Q7p and Q7e: Q7). */
  sameAs?: string;
  body: ListBody | AggregateBody;
  concurrency: number;
  api: Measurement;
  raw: Measurement;
  rawWithTotal?: Measurement;
}

export interface WriteResult {
  id: string;
  title: string;
  concurrency: number;
  /** When a suite runs its writes more than once (issue11: before and after the reads). */
  phase?: string;
  api: Measurement;
  /** The same rows written in raw SQL, on the raw table with its read indexes. */
  raw?: Measurement;
  /** The same on a raw table without the read indexes. */
  rawBare?: Measurement;
}

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
  postgres: string;
  postgresSettings: string;
  /** 1, 5 and 15 minute load averages when the benchmark started. */
  loadAverage: string;
  /** The code under test changes; this names the version that was measured. */
  source: string;
}

export interface Results {
  config: BenchConfig;
  machine: Machine;
  data: { rows: number; companies: number; load: Dataset['load'] };
  serverMode: string;
  startedAt: string;
  reads: ReadResult[];
  writes: WriteResult[];
}

const SOURCE_DIRS = [
  'apps/records-api/src',
  'packages/contracts/src',
  'packages/db/src',
  'packages/db/migrations',
  'packages/server-kit/src',
];

/** sha256 over the server-side sources, and the time the newest of them changed. */
export const sourceFingerprint = () => fingerprint(SOURCE_DIRS);

export async function machineInfo(pool: pg.Pool, source: string): Promise<Machine> {
  const version = await pool.query<{ version: string }>('SELECT version()');
  const settings = await pool.query<{ name: string; setting: string }>(
    `SELECT name, current_setting(name) AS setting FROM pg_settings
      WHERE name IN ('shared_buffers', 'work_mem', 'max_parallel_workers_per_gather', 'jit') ORDER BY name`,
  );
  return {
    ...host(),
    postgres: version.rows[0]?.version ?? 'unknown',
    postgresSettings: settings.rows.map((s) => `${s.name}=${s.setting}`).join(', '),
    loadAverage: loadAverage(),
    source,
  };
}

const n0 = (value: number) => (Number.isNaN(value) ? 'n/a' : Math.round(value).toLocaleString('en-US'));
const n1 = (value: number) => (Number.isNaN(value) ? 'n/a' : value.toFixed(value >= 100 ? 0 : 1));
const rps = (value: number) => (value >= 100 ? n0(value) : value.toFixed(1));
const kb = (bytes: number) => (bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0);
const ratio = (api: Measurement, raw: Measurement) => api.requestsPerSecond / raw.requestsPerSecond;
const cores = (m: Measurement) => (Number.isNaN(m.foreignCores) ? 'n/a' : m.foreignCores.toFixed(2));
const errorsOf = (m: Measurement) => (m.errors > 0 ? ` (${m.errors} errors)` : '');

function readsTable(reads: ReadResult[]): string {
  const lines = [
    '| Query | Conc. | API req/s | API p50 ms | API p99 ms | Raw SQL req/s | Raw p50 ms | Raw p99 ms | API/raw | KB per answer API / raw | Other load API / raw |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of reads) {
    lines.push(
      `| ${r.id} | ${r.concurrency} | ${rps(r.api.requestsPerSecond)}${errorsOf(r.api)} | ${n1(r.api.p50Ms)} | ${n1(r.api.p99Ms)} | ${rps(r.raw.requestsPerSecond)}${errorsOf(r.raw)} | ${n1(r.raw.p50Ms)} | ${n1(r.raw.p99Ms)} | ${ratio(r.api, r.raw).toFixed(2)} | ${kb(r.api.bytesPerRequest)} / ${kb(r.raw.bytesPerRequest)} | ${cores(r.api)} / ${cores(r.raw)} |`,
    );
  }
  return lines.join('\n');
}

/** Q7 and the cases that ask for its page in another shape (Q7p, Q7e). */
const isShapedPage = (r: ReadResult, reads: ReadResult[]) =>
  r.sameAs !== undefined || reads.some((other) => other.sameAs === r.id);
const isAggregate = (r: ReadResult) => r.endpoint === 'aggregate';

/**
 * What projection saves and expand costs: each case's p50 beside that of the plain page (the case
 * it reshapes, at the same concurrency), through the API and in raw SQL, and API / raw.
 */
function shapedPagesTable(reads: ReadResult[]): string {
  const lines = [
    '| Case | Conc. | API p50 ms | API p50 ÷ plain page | API req/s | KB per answer API / raw | Raw p50 ms | Raw p50 ÷ plain page | Raw req/s | API/raw (req/s) | Other load API / raw |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of reads) {
    const plain = reads.find((p) => p.id === (r.sameAs ?? r.id) && p.concurrency === r.concurrency)!;
    const over = (a: number, b: number) => (a / b).toFixed(2);
    lines.push(
      `| ${r.id} | ${r.concurrency} | ${n1(r.api.p50Ms)} | ${over(r.api.p50Ms, plain.api.p50Ms)} | ${rps(r.api.requestsPerSecond)}${errorsOf(r.api)} | ${kb(r.api.bytesPerRequest)} / ${kb(r.raw.bytesPerRequest)} | ${n1(r.raw.p50Ms)} | ${over(r.raw.p50Ms, plain.raw.p50Ms)} | ${rps(r.raw.requestsPerSecond)}${errorsOf(r.raw)} | ${ratio(r.api, r.raw).toFixed(2)} | ${cores(r.api)} / ${cores(r.raw)} |`,
    );
  }
  return lines.join('\n');
}

const notInRun = '(Not in this run: its results predate these cases.)';

function totalsTable(reads: ReadResult[]): string {
  const lines = [
    '| Query | Conc. | Raw SQL + count(*) req/s | p50 ms | p99 ms | API / (raw + count) | Other load |',
    '|---|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of reads.filter((read) => read.rawWithTotal)) {
    const t = r.rawWithTotal!;
    lines.push(
      `| ${r.id} | ${r.concurrency} | ${rps(t.requestsPerSecond)} | ${n1(t.p50Ms)} | ${n1(t.p99Ms)} | ${ratio(r.api, t).toFixed(2)} | ${cores(t)} |`,
    );
  }
  return lines.join('\n');
}

function writesTable(writes: WriteResult[]): string {
  const lines = [
    '| Case | Conc. | req/s | records/s | p50 ms | p99 ms | errors | Other load |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const w of writes) {
    lines.push(
      `| ${w.id} | ${w.concurrency} | ${rps(w.api.requestsPerSecond)} | ${n0(w.api.itemsPerSecond)} | ${n1(w.api.p50Ms)} | ${n1(w.api.p99Ms)} | ${w.api.errors} | ${cores(w.api)} |`,
    );
  }
  return lines.join('\n');
}

interface Verdict {
  target: string;
  measured: string;
  met: boolean;
}

export function verdicts(results: Results): Verdict[] {
  const verdicts: Verdict[] = [];
  for (const r of results.reads.filter((read) => /^Q[123]/.test(read.id))) {
    const value = ratio(r.api, r.raw);
    verdicts.push({
      target: `${r.id} at concurrency ${r.concurrency}: API throughput >= 0.5 x raw SQL`,
      measured: `${value.toFixed(2)} x (${rps(r.api.requestsPerSecond)} vs ${rps(r.raw.requestsPerSecond)} req/s)`,
      met: value >= 0.5 && r.api.errors === 0,
    });
  }
  for (const r of results.reads.filter((read) => read.id === 'Q4')) {
    verdicts.push({
      target: `Q4 at concurrency ${r.concurrency}: p50 < 100 ms`,
      measured: `p50 ${n1(r.api.p50Ms)} ms`,
      met: r.api.p50Ms < 100 && r.api.errors === 0,
    });
  }
  for (const r of results.reads.filter((read) => read.id === 'Q4c')) {
    verdicts.push({
      target: `Q4c at concurrency ${r.concurrency}: p50 < 20 ms`,
      measured: `p50 ${n1(r.api.p50Ms)} ms`,
      met: r.api.p50Ms < 20 && r.api.errors === 0,
    });
  }
  for (const w of results.writes.filter((write) => write.id === 'Q5')) {
    verdicts.push({
      target: `Q5 at concurrency ${w.concurrency}: >= 20,000 records/s`,
      measured: `${n0(w.api.itemsPerSecond)} records/s`,
      met: w.api.itemsPerSecond >= 20_000 && w.api.errors === 0,
    });
  }
  return verdicts;
}

function targetsTable(list: Verdict[]): string {
  const lines = ['| Target | Measured | Met |', '|---|---|---|'];
  for (const v of list) lines.push(`| ${v.target} | ${v.measured} | ${v.met ? 'yes' : '**no**'} |`);
  return lines.join('\n');
}

function loadSummary(dataset: Results['data']): string {
  const steps = dataset.load.steps.map(([step, seconds]) => `${step} ${seconds.toFixed(1)} s`).join('; ');
  return dataset.load.reused
    ? `Load: reused the data loaded by an earlier run (that load took ${dataset.load.seconds.toFixed(1)} s: ${steps}).`
    : `Load: ${dataset.load.seconds.toFixed(1)} s (${steps}).`;
}

type RunInfo = Pick<Results, 'machine' | 'startedAt' | 'serverMode' | 'config'>;

export function machineSummary(results: Results): string {
  return [
    runSummary(results),
    `- ${results.data.rows.toLocaleString('en-US')} Deals, ${results.data.companies.toLocaleString('en-US')} Companies; ${results.config.durationMs / 1000} s per case after ${results.config.warmupMs / 1000} s warm-up; ${results.config.repeats} repeat(s)${results.config.repeats > 1 ? ', medians shown' : ''}`,
  ].join('\n');
}

function runSummary(results: RunInfo): string {
  const m = results.machine;
  return [
    `- Date: ${results.startedAt}`,
    `- Machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB memory, ${m.os}; load average at start ${m.loadAverage}`,
    `- Node.js ${m.node}; records-api in a ${results.serverMode} with a pool of ${results.config.serverPoolSize} PostgreSQL connections`,
    `- ${m.postgres}`,
    `- Code measured: ${m.source}`,
    `- PostgreSQL settings (defaults, untuned): ${m.postgresSettings}`,
  ].join('\n');
}

/** The results as markdown: printed to stdout and placed in the README. */
export function renderReport(results: Results): string {
  const shaped = results.reads.filter((r) => isShapedPage(r, results.reads));
  const aggregates = results.reads.filter(isAggregate);
  const pages = results.reads.filter((r) => !shaped.includes(r) && !aggregates.includes(r));
  return [
    machineSummary(results),
    '',
    loadSummary(results.data),
    '',
    '### Reads (Q1-Q4c): API against the same query in raw SQL',
    '',
    '"Other load": average number of cores that processes outside the benchmark kept busy while the case ran (the machine may be shared, see records/cpu.ts); figures of rows with a high value are less reliable.',
    '',
    readsTable(pages),
    '',
    '### Projection and expand beside the plain page (Q7, Q7p, Q7e)',
    '',
    'The same page of 100 (Amount desc) with every field (Q7), with `fields` naming three (Q7p), with `expand` on Company (Q7e). "÷ plain page": the p50 over Q7\'s at the same concurrency (below 1: cheaper than the plain page); the raw columns reshape Q7\'s raw page the same way.',
    '',
    shaped.length > 0 ? shapedPagesTable(shaped) : notInRun,
    '',
    '### Aggregation beside the same GROUP BY in raw SQL (Q8a, Q8b)',
    '',
    aggregates.length > 0 ? readsTable(aggregates) : notInRun,
    '',
    '### Raw SQL including the total count the API also computes (Q1, Q4, Q4c)',
    '',
    totalsTable(results.reads),
    '',
    '### Bulk writes (Q5, Q6)',
    '',
    writesTable(results.writes),
    '',
    '### Targets',
    '',
    targetsTable(verdicts(results)),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Issue 11's workloads (People)
// ---------------------------------------------------------------------------------------------

const byConcurrency = <T extends { id: string; concurrency: number }>(
  reads: T[],
  id: string,
  value: (r: T) => string,
) =>
  [...new Set(reads.map((r) => r.concurrency))]
    .map((c) => reads.find((r) => r.id === id && r.concurrency === c))
    .map((r) => (r ? value(r) : 'n/a'))
    .join(' / ');

/** The issue's table: requests/s at each concurrency (c=1 / c=16 by default), then the writes' records/s. */
function issue11Table(reads: ReadResult[], writes: WriteResult[]): string {
  const concurrencies = [...new Set(reads.map((r) => r.concurrency))].join(' / ');
  const lines = [
    `| Workload (req/s at c = ${concurrencies}) | API | Raw page only (JSON) | Raw page + exact count | API / raw page |`,
    '|---|--:|--:|--:|--:|',
  ];
  for (const id of [...new Set(reads.map((r) => r.id))]) {
    const first = reads.find((r) => r.id === id)!;
    lines.push(
      `| ${id} ${first.title} | ${byConcurrency(reads, id, (r) => rps(r.api.requestsPerSecond) + errorsOf(r.api))} | ${byConcurrency(reads, id, (r) => rps(r.raw.requestsPerSecond) + errorsOf(r.raw))} | ${byConcurrency(reads, id, (r) => (r.rawWithTotal ? rps(r.rawWithTotal.requestsPerSecond) : 'n/a'))} | ${byConcurrency(reads, id, (r) => ratio(r.api, r.raw).toFixed(2))} |`,
    );
  }
  for (const w of bulkFirst(writes)) {
    const statement = w.id === 'bulk' ? '`INSERT` of 100' : '`ON CONFLICT`';
    lines.push(
      `| ${w.title}, concurrency ${w.concurrency} (${w.phase}) | ${n0(w.api.itemsPerSecond)} rec/s${errorsOf(w.api)} | ${w.raw ? `${n0(w.raw.itemsPerSecond)} rows/s (${statement})` : 'n/a'} | | ${w.raw ? (w.api.itemsPerSecond / w.raw.itemsPerSecond).toFixed(2) : 'n/a'} |`,
    );
  }
  return lines.join('\n');
}

/** Bulk create before upsert, as the issue lists them (the suite runs upsert first). */
const bulkFirst = (writes: WriteResult[]) =>
  [...writes].sort((a, b) => (a.id === b.id ? 0 : a.id === 'bulk' ? -1 : 1));

function issue11WritesTable(writes: WriteResult[]): string {
  const lines = [
    '| Workload | Run | API records/s | API p50 ms | Raw rows/s (read indexes) | API / raw | Raw rows/s (no read indexes) | API / raw (no read indexes) | Other load API / raw |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  const perSecond = (m: Measurement | undefined) => (m ? n0(m.itemsPerSecond) + errorsOf(m) : 'n/a');
  const over = (api: Measurement, raw: Measurement | undefined) =>
    raw ? (api.itemsPerSecond / raw.itemsPerSecond).toFixed(2) : 'n/a';
  for (const w of bulkFirst(writes)) {
    lines.push(
      `| ${w.title}, c=${w.concurrency} | ${w.phase ?? ''} | ${perSecond(w.api)} | ${n1(w.api.p50Ms)} | ${perSecond(w.raw)} | ${over(w.api, w.raw)} | ${perSecond(w.rawBare)} | ${over(w.api, w.rawBare)} | ${cores(w.api)} / ${w.raw ? cores(w.raw) : 'n/a'} |`,
    );
  }
  return lines.join('\n');
}

function issue11Verdicts(results: Issue11Results): Verdict[] {
  const list: Verdict[] = [];
  for (const r of results.reads) {
    const value = ratio(r.api, r.raw);
    list.push({
      target: `${r.id} at concurrency ${r.concurrency}: API >= 0.5 x raw page only`,
      measured: `${value.toFixed(2)} x (${rps(r.api.requestsPerSecond)} vs ${rps(r.raw.requestsPerSecond)} req/s)`,
      met: value >= 0.5 && r.api.errors === 0,
    });
  }
  for (const w of results.writes) {
    const target = w.id === 'bulk' ? 20_000 : 10_000;
    list.push({
      target: `${w.id} (${w.phase}): >= ${n0(target)} records/s`,
      measured: `${n0(w.api.itemsPerSecond)} records/s`,
      met: w.api.itemsPerSecond >= target && w.api.errors === 0,
    });
  }
  return list;
}

function indexList(indexes: Issue11Results['indexes']): string {
  const list = (defs: string[]) => defs.map((d) => `\`${d}\``).join('; ');
  return [
    ...Object.entries(indexes.api).map(
      ([phase, defs]) => `- People (API) at the end of the writes ${phase}: ${list(defs)}`,
    ),
    `- Raw, read indexes: ${list(indexes.raw)}`,
    `- Raw, no read indexes: ${list(indexes.rawBare)}`,
  ].join('\n');
}

export function renderIssue11Report(results: Issue11Results): string {
  const steps = results.data.load.steps
    .map(([step, seconds]) => `${step} ${seconds.toFixed(1)} s`)
    .join('; ');
  return [
    runSummary(results),
    `- ${results.data.rows.toLocaleString('en-US')} People; ${results.config.durationMs / 1000} s per case after ${results.config.warmupMs / 1000} s warm-up; ${results.config.repeats} round(s)${results.config.repeats > 1 ? ', medians shown' : ''}`,
    '',
    `Load (each round, the last shown): ${results.data.load.seconds.toFixed(1)} s (${steps}).`,
    '',
    "#### As the issue's table",
    '',
    issue11Table(results.reads, results.writes),
    '',
    'Latencies, API against the raw page only:',
    '',
    readsTable(results.reads),
    '',
    'Raw page plus the exact count:',
    '',
    totalsTable(results.reads),
    '',
    '#### Writes',
    '',
    issue11WritesTable(results.writes),
    '',
    'Indexes when the writes ran:',
    '',
    indexList(results.indexes),
    '',
    '#### Targets',
    '',
    targetsTable(issue11Verdicts(results)),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Read-only SQL against records/list and raw SQL (People)
// ---------------------------------------------------------------------------------------------

const SQL_PATH_LABELS: Record<SqlPath, string> = {
  sql: '`/sql`',
  list: '`records/list`',
  raw: 'raw SQL',
};

/** The acceptance line's table: requests/s of each path at each concurrency, and the ratios to raw. */
function sqlSummaryTable(cases: SqlCaseResult[]): string {
  const concurrencies = [...new Set(cases.map((c) => c.concurrency))].join(' / ');
  const lines = [
    `| Read (req/s at c = ${concurrencies}) | \`/sql\` | \`records/list\` | raw SQL | \`/sql\` : raw | \`records/list\` : raw |`,
    '|---|--:|--:|--:|--:|--:|',
  ];
  const perSecond = (m: Measurement) => rps(m.requestsPerSecond) + errorsOf(m);
  for (const id of [...new Set(cases.map((c) => c.id))]) {
    const first = cases.find((c) => c.id === id)!;
    lines.push(
      `| ${id}: ${first.title} | ${byConcurrency(cases, id, (c) => perSecond(c.sql))} | ${byConcurrency(cases, id, (c) => perSecond(c.list))} | ${byConcurrency(cases, id, (c) => perSecond(c.raw))} | ${byConcurrency(cases, id, (c) => ratio(c.sql, c.raw).toFixed(2))} | ${byConcurrency(cases, id, (c) => ratio(c.list, c.raw).toFixed(3))} |`,
    );
  }
  return lines.join('\n');
}

function sqlLatencyTable(cases: SqlCaseResult[]): string {
  const lines = [
    '| Read | Conc. | Path | req/s | p50 ms | p95 ms | p99 ms | x raw SQL | KB per answer | Other load |',
    '|---|--:|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const c of cases) {
    for (const path of ['sql', 'list', 'raw'] as const) {
      const m = c[path];
      const kib = m.bytesPerRequest / 1024;
      const size = path === 'raw' ? 'n/a' : kib < 10 ? kib.toFixed(1) : n0(kib);
      lines.push(
        `| ${c.id} | ${c.concurrency} | ${SQL_PATH_LABELS[path]} | ${rps(m.requestsPerSecond)}${errorsOf(m)} | ${n1(m.p50Ms)} | ${n1(m.p95Ms)} | ${n1(m.p99Ms)} | ${ratio(m, c.raw).toFixed(3)} | ${size} | ${cores(m)} |`,
      );
    }
  }
  return lines.join('\n');
}

export function renderSqlReport(results: SqlResults): string {
  const steps = results.data.load.steps
    .map(([step, seconds]) => `${step} ${seconds.toFixed(1)} s`)
    .join('; ');
  const plans = (['sql', 'list', 'raw'] as const).flatMap((path) => [
    `${SQL_PATH_LABELS[path]}:`,
    '',
    '```',
    ...results.lookupPlans[path],
    '```',
    '',
  ]);
  return [
    runSummary(results),
    `- \`/sql\`: SQL_MAX_CONNECTIONS=${results.config.sqlMaxConnections} (BENCH_SQL_MAX_CONNECTIONS), the other SQL_ settings at their defaults (4 connections per database)`,
    `- ${results.data.rows.toLocaleString('en-US')} People; ${results.config.durationMs / 1000} s per case and path after ${results.config.warmupMs / 1000} s warm-up; ${results.config.repeats} round(s)${results.config.repeats > 1 ? ', medians shown' : ''}`,
    '',
    `Load: ${results.data.load.seconds.toFixed(1)} s (${steps}).`,
    '',
    '#### Requests/s, the three paths in the same run',
    '',
    `One request of the aggregate through \`records/list\` is a whole aggregate: ${results.listPages} pages of up to 2,000 records.`,
    '',
    sqlSummaryTable(results.cases),
    '',
    'Latencies. "x raw SQL": requests/s over raw SQL\'s; "Other load": cores kept busy by processes outside the benchmark (records/cpu.ts).',
    '',
    sqlLatencyTable(results.cases),
    '',
    '#### How each path finds a person by email',
    '',
    `Indexes of People on email: ${results.emailIndexes.map((d) => `\`${d}\``).join('; ') || 'none'}.`,
    '',
    ...plans,
    '#### The aggregate, checked to be the same on the three paths',
    '',
    '| status | records | sum of amount |',
    '|---|--:|--:|',
    ...results.totals.map(
      (t) =>
        `| ${t.status ?? '(empty)'} | ${n0(t.count)} | ${t.sum === null ? 'null' : t.sum.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} |`,
    ),
  ].join('\n');
}

const README_INTRO = `# Benchmarks

## records

Throughput and latency of the records API (\`POST …/records/list\`, \`…/records/aggregate\` and
\`…/records/bulk\`, specification 4.1 and 4.2) against the same queries sent as raw SQL to the
same PostgreSQL database in the same run, in three suites:

- **issue11**: issue 11's workloads on a table of 100,000 People (name, email, amount, status,
  tags, due, active), beside an equivalent plain table with btree and trigram indexes: Q1-Q3 with
  the raw page alone and with its exact count, bulk create and upsert by email against raw
  \`INSERT\` and \`INSERT … ON CONFLICT\`, the writes both before and after the reads
  ([below](#issue-11s-workloads-bench_suiteissue11)).
- **sql**: read-only SQL (\`POST …/sql\`) on the same 100,000 People: a lookup by email and an
  aggregate (count and sum per status) through \`/sql\`, through \`records/list\` and as raw SQL, in
  the same run ([below](#read-only-sql-against-recordslist-and-raw-sql-bench_suitesql)).
- **deals**: the cases Q1-Q8b on a table of 1,000,000 Deals with a field of every type, among
  them (issue 14) projection and expand beside the plain page and aggregation beside the same
  \`GROUP BY\` in raw SQL.

### How to run

\`\`\`sh
pnpm install
npm run bench:records                          # every suite: issue11, sql, deals (from the repository root)
BENCH_SUITE=issue11 npm run bench:records      # only issue 11's workloads (100,000 People)
BENCH_SUITE=sql npm run bench:records          # only read-only SQL against records/list and raw SQL
BENCH_SUITE=deals npm run bench:records        # only the 1,000,000 Deals cases
# a short check that everything runs (figures meaningless), README left alone:
BENCH_SUITE=issue11 BENCH_DURATION_S=2 BENCH_WARMUP_S=1 BENCH_REPEATS=1 BENCH_WRITE_README=0 npm run bench:records
\`\`\`

Issue 11's and the sql suite's figures are medians of rounds: for them run with \`BENCH_REPEATS=3\`
(or more) on a quiet machine.

Needs PostgreSQL (\`postgres\` user, trust auth) at 127.0.0.1:5432 and Redis at 127.0.0.1:6379.
The first run creates and migrates the database \`recordbase_bench\` and loads it (about a
minute); later runs reuse the loaded data when its row count matches, after deleting what the
previous run wrote. A full run keeps its figures in \`records/results.json\` (deals),
\`records/results-issue11.json\` (issue11) and \`records/results-sql.json\` (sql), each written only
by a run of its suite;
\`pnpm --filter @recordbase/bench run records:report\` renders this README again from them (after
editing \`records/findings.md\`, which is appended below the results). Settings (environment
variables, all optional):

| Variable | Default | Meaning |
|---|---|---|
| BENCH_SUITE | issue11,sql,deals | suites to run, in this order: \`issue11\` (100,000 People), \`sql\` (the same People), \`deals\` (1,000,000 Deals) |
| BENCH_DURATION_S | 10 | measured seconds per case |
| BENCH_WARMUP_S | 2 | warm-up seconds per case (discarded) |
| BENCH_REPEATS | 1 | rounds of every case; the report shows medians (issue11 loads People afresh for each round, sql once) |
| BENCH_CONCURRENCY | 1,16 | concurrencies of the read cases (and of sql's) |
| BENCH_WRITE_CONCURRENCY | 4 | concurrency of the writes (Q5 and Q6; issue11's bulk and upsert) |
| BENCH_ROWS | 1000000 | Deals records (any other value leaves this README alone) |
| BENCH_PEOPLE_ROWS | 100000 | People records of issue11 and sql (any other value leaves this README alone) |
| BENCH_ONLY | all | cases to run in any suite, such as \`Q1,Q4\`, \`Q2,upsert\` or \`lookup\` (leaves this README alone) |
| BENCH_SERVER_POOL | 20 | records-api's PostgreSQL pool (as in \`apps/records-api/src/main.ts\`) |
| BENCH_SQL_MAX_CONNECTIONS | 8 | records-api's \`SQL_MAX_CONNECTIONS\` (the service's default): see the sql suite, point 5 |
| BENCH_IN_PROCESS | 0 | 1 runs records-api in the benchmark process instead of a child process |
| BENCH_SERVER_EXEC_ARGV | none | extra node flags of the records-api child, such as \`--cpu-prof --cpu-prof-dir=/tmp/prof\` |
| BENCH_SERVER_LOG | silent | records-api log level (\`error\` shows the cause of 500s) |
| BENCH_DATABASE_URL | postgresql://postgres@127.0.0.1:5432/recordbase_bench | benchmark database |
| BENCH_WRITE_README | 1 | 0 leaves this README alone |

### What it does

1. **Data.** Through the HTTP API: a database with \`Companies\` (1,000 records, created with the
   bulk endpoint) and \`Deals\`, which has a field of every type: Name (single_line_text),
   Notes (long_text), Email, Website (url), Phone (phone_number), Quantity (number),
   Amount (currency), Probability (percent), Rating, Duration, CloseDate (date),
   LastContact (datetime), Status (single_select: Lead, Qualified, Proposal, Won, Lost),
   Tags (multiple_select), Won (checkbox), Files (attachments), Company (linked_record →
   Companies) and Ref (single_line_text, a unique key \`D-0000001\`… for the upserts). The
   1,000,000 Deals are generated in one \`INSERT … SELECT … FROM generate_series\` into the
   physical table (ids are UUIDv7 of created_at, like the API's; created_at 15 s apart from
   2024-01-01; Amount uniform over 0..100,000 with 5% empty; Status uniform over the five
   options with 5% empty; Name is \`<org> <sector> <kind> #n\`, where the sector is one of four
   (\`contains 'software'\` matches ~25%) and ~0.1% carry the word \`zephyr\`; Notes, Email,
   Website, Phone, Rating, Duration, CloseDate, LastContact ~30% empty; 10% with an
   attachment), 90% of Deals get a Company link row, then \`VACUUM (ANALYZE)\`.
2. **Server.** records-api's real \`createApp\` (real PostgreSQL pool, real Redis with its own
   key prefix, random ROOT_API_KEY, rate limits of 1,000,000/s, logger silent) on an ephemeral
   port of 127.0.0.1, in a **child process**, so the load generator's CPU does not count
   against the server's event loop (both still share the machine's cores with PostgreSQL).
3. **Load generator.** Closed loop: N workers send requests back to back for the measured
   duration, after a warm-up; HTTP through an undici \`Pool\` (keep-alive, one connection per
   worker, no pipelining), bodies read fully as text. Latency percentiles are nearest-rank.
4. **Raw SQL baseline (Q1-Q4c).** The same WHERE, ORDER BY (including the \`seq\` tie-breaker),
   LIMIT and OFFSET through a \`pg\` Pool of as many connections as workers, returning the page
   as one JSON text (\`json_agg(row_to_json(…))\` over id, created_at, updated_at, every field
   column and the linked ids), plus the total count for Q2 and Q3 (the API returns \`total\`).
   The page is selected on the bare table and only then turned into JSON — the shape one would
   write by hand. Before timing a case, the benchmark checks that the API and the raw SQL
   return the same record ids in the same order and the same total. As the brief asks, the
   Q1 and Q4 baselines have no count; a second table shows them with the \`count(*)\` the API
   runs for every full page. As in issue11, a case is timed once no index of Deals is being built.
   Q4c's baseline is the keyset query by hand,
   \`WHERE (created_at, seq) > (…)\` with the keys of the row before the page.
5. **Projection, expand and aggregation (Q7-Q8b, issue 14).** Q7 is a page of 100 sorted by
   Amount desc with every field; Q7p and Q7e ask for the same page with \`fields\` and with
   \`expand\`, and their baselines reshape Q7's raw page the same way: Q7p's selects only id,
   created_at, updated_at and the three projected columns; Q7e's adds to each row
   \`COALESCE((SELECT json_agg(json_build_object('id', c.id, 'primary', c.<Name>) ORDER BY
   l.position) FROM <link table> l JOIN <Companies> c ON c.id = l.linked_id WHERE l.record_id =
   p.id), '[]')\`. Beside the usual ids check, every projected value must equal the raw column
   (and \`data\` hold only those fields), and every record's \`expanded.Company\` must equal the raw
   array. The table is not filtered, so the API's total is its maintained row count and no
   baseline counts. Q8a and Q8b's baseline is the \`GROUP BY\` one would write, \`SELECT status,
   count(*), sum(amount), avg(amount) FROM … WHERE … GROUP BY status ORDER BY status COLLATE "C"
   NULLS FIRST\` (the API's group order), its rows put into one JSON text as the pages' are;
   before timing, the API and raw SQL must give the same groups in the same order with equal
   counts and sums and averages equal to 1e-9 of their size (doubles added in another order).
6. After the cases, the records written by Q5 and Q6 are deleted (upserts of existing keys only
   touched Quantity, Rating, Notes and Won) and the table vacuumed, so runs repeat.

### The cases

| Case | Request | Concurrency |
|---|---|---|
| Q1 | \`{"limit": 500}\` — first page, default order (createdAt asc) | 1, 16 |
| Q2 | \`{"filter": {"and": [{"field": "Amount", "greater_than": 50000}, {"field": "Status", "in": ["Qualified", "Proposal"]}]}, "sort": [{"field": "Amount", "direction": "desc"}], "limit": 100, "offset": 1000}\` (~19% of rows match) | 1, 16 |
| Q3a | \`{"filter": {"field": "Name", "contains": "zephyr"}, "limit": 100}\` — selective (~0.1%, ~1,000 rows) | 1, 16 |
| Q3b | \`{"filter": {"field": "Name", "contains": "software"}, "limit": 100}\` — non-selective (~25%) | 1, 16 |
| Q4 | \`{"limit": 500, "offset": 500000}\` — deep page, default order | 1, 16 |
| Q4c | \`{"limit": 500, "cursor": "…"}\` — the same page by cursor: the \`nextCursor\` of the page at offset 499,500, taken once before timing and sent with every request | 1, 16 |
| Q5 | \`POST …/records/bulk\` with 100 new records, every field set (keys are field names; one Company link each) | 4 |
| Q6 | \`POST …/records/bulk\` with \`matchOn: [<Ref field id>]\`, 100 records: 50 keys of loaded records (updated) and 50 new keys (created) | 4 |
| Q7 | \`{"sort": [{"field": "Amount", "direction": "desc"}], "limit": 100}\` — the plain page: every field, the Company link as ids | 1, 16 |
| Q7p | Q7 with \`"fields": ["Name", "Amount", "Status"]\` (3 of 18 fields) | 1, 16 |
| Q7e | Q7 with \`"expand": ["Company"]\` (90% of Deals link one company: its id and Name) | 1, 16 |
| Q8a | \`POST …/records/aggregate\` with \`{"groupBy": ["Status"], "aggregations": [{"fn": "count"}, {"field": "Amount", "fn": "sum"}, {"field": "Amount", "fn": "avg"}]}\` — every Deal (6 groups: the five options and empty) | 1, 16 |
| Q8b | Q8a with \`"filter": {"field": "Amount", "greater_than": 90000}\` (~10% of Deals) | 1, 16 |

Q3 uses limit 100 (not the default 500) so that it compares with Q2; both text cases count
their total, as the API does whenever a page is full.

Targets (from the issue): Q1 to Q3 at no less than half of raw SQL's throughput; Q5 at 20,000
records/s or more; Q4 p50 under 100 ms; Q4c (the same deep page by cursor) p50 under 20 ms.

### Issue 11's workloads (BENCH_SUITE=issue11)

Issue 11 measures these workloads on 100,000 rows beside raw PostgreSQL on an equivalent indexed
table; this suite runs them as the issue lists them.

1. **Data, each round afresh.** Through the API a database \`records-bench-issue11\` with a table
   \`People\`: name (single_line_text), email (email), amount (number), status (single_select:
   Lead, Qualified, Proposal, Won, Lost), tags (multiple_select: six options), due (date), active
   (checkbox). 100,000 rows generated in one \`INSERT … SELECT … FROM generate_series\` into its
   physical table (as for Deals: UUIDv7 ids of created_at, 15 s apart): name is \`<first> <last>\`
   from 30 x 30 real names, with ~3% of last names holding \`abc\` (Abcarian, Grabczyk,
   Dabcovich) so that \`contains 'abc'\` matches ~3,000 rows; email \`person.<n>@people.example.com\`
   (unique); amount uniform over 0..1,000 (2% empty); status uniform (5% empty); 0-2 tags; due
   over two years (20% empty); active 60% true. The previous round's database is deleted first.
2. **Raw baseline.** The same rows (same ids, seq, created_at) copied into
   \`bench_issue11.people\`, a plain table with a column per field, its primary key, a unique
   index on email (for \`ON CONFLICT\`) and the read indexes: \`(created_at, seq)\` (default order),
   \`(amount DESC NULLS LAST, seq)\` (Q2's filter and sort), \`(status)\`, and a \`pg_trgm\` GIN index
   on name (\`CREATE EXTENSION IF NOT EXISTS pg_trgm\`); and into \`bench_issue11.people_bare\`, the
   same without the read indexes (primary key and unique email only), for the write cost of those
   indexes. Then \`VACUUM (ANALYZE)\` of all three tables.
3. **A round:** the writes (upsert, then bulk create), the reads (Q1-Q3 at each concurrency), the
   writes again. After each write phase the rows it added are deleted from the three tables and
   they are vacuumed, so every read sees the 100,000 rows. The writes run twice because the API may
   build indexes when a field is first filtered or sorted: the second run pays for them. The report
   lists the indexes of People at the end of each write phase. Upsert runs first so that its
   matchOn index on email (which the API builds in the background on the first upsert; the run
   waits until it is valid before measuring) is there for both write cases of both phases. Nothing
   analyzes People between that build and the first phase's upsert (as in use, until autovacuum
   does), while the clean-up after each phase runs \`VACUUM (ANALYZE)\`: the two phases' upserts
   can differ by the statistics of the new index, not only by the indexes the reads left.
4. **Reads** are checked first (same ids in the same order, same total as \`count(*)\`); the run
   then waits until no index of People is being built or left invalid (what the API builds in the
   background when a field is first filtered or sorted is measured built; the wait is printed);
   then they are timed
   through the API, as the raw page alone (\`json_agg(row_to_json(…))\` of the page selected on the
   bare table, the same WHERE, ORDER BY with the \`seq\` tie-breaker, LIMIT and OFFSET) and as the
   raw page plus \`count(*)\` of its filter (what the API's exact \`total\` costs). The ratio is API /
   raw page only.
5. **Writes** at concurrency 4, through the API and as one raw statement per request of 100 rows
   with typed parameters, on the indexed raw table and on the bare one.

| Case | Request | Raw SQL |
|---|---|---|
| Q1 | \`{"limit": 100}\` — first page, default order | the page; the page + \`count(*)\` |
| Q2 | \`{"filter": {"and": [{"field": "amount", "greater_than": 500}, {"field": "status", "in": ["Qualified", "Proposal"]}]}, "sort": [{"field": "amount", "direction": "desc"}], "limit": 100, "offset": 1000}\` (~19% of rows match) | \`WHERE amount > 500 AND status = ANY(…) ORDER BY amount DESC NULLS LAST, seq LIMIT 100 OFFSET 1000\`; + \`count(*)\` |
| Q3 | \`{"filter": {"field": "name", "contains": "abc"}, "limit": 100}\` (~3%) | \`WHERE name ILIKE '%abc%' ORDER BY created_at, seq LIMIT 100\`; + \`count(*)\` |
| upsert | \`POST …/records/bulk\` with \`matchOn: [<email field id>]\`, 100 records (email, tags, due, active): 50 emails of loaded rows (updated; each worker its own share of rows, so no two requests lock the same row) and 50 new (created) | \`INSERT … VALUES (100 rows) ON CONFLICT (email) DO UPDATE SET tags, due, active, updated_at\` |
| bulk | \`POST …/records/bulk\` with 100 new records, every field set | \`INSERT … VALUES (100 rows)\` |

Targets (from the issue): Q1-Q3 API at no less than 0.5 x the raw page only, with exact totals;
bulk create at 20,000 records/s or more; upsert by matchOn at 10,000 records/s or more.

### Read-only SQL against records/list and raw SQL (BENCH_SUITE=sql)

Two reads, each by three paths in the same run: \`POST /bases/{id}/sql\` (read-only SQL over the
database's views: tables and fields by name), \`POST …/records/list\`, and raw SQL, the same
SELECT that psql would send as the superuser on the API's own physical table (\`base_<hex>\`
schema, a column per field id). Requests/s and p50/p95/p99 latency at each concurrency, medians of
the rounds, and the ratios \`/sql\` : raw and \`records/list\` : raw.

1. **Data, once.** The People of issue 11 (same generator, \`loadPeople\`: the base through the API,
   the rows in SQL into its physical table, then \`VACUUM (ANALYZE)\`); nothing in this suite writes,
   so every round reads the same rows. Deleted at the end.
2. **Key.** Requests carry an API key made for the suite with only \`records:read\` and \`sql:read\`,
   and only for this database; it is revoked at the end.
3. **Index.** The lookup must be index-backed on every path. Loaded, People has no index on email
   (the matchOn index that upserts build is on a hash of email, which \`email = $1\` cannot use), so
   the suite does what a user of \`records/list\` would: a listing filtered on email, which makes the
   API build its read index on the field in the background (on text, email included, a \`pg_trgm\`
   GIN index, which serves equality as well); the run waits for the build. Equality through a
   trigram index intersects the posting lists of every trigram of the address, most of them shared
   by all 100,000 (\`per\`, \`exa\`, …): it costs PostgreSQL milliseconds where a btree would take
   tens of microseconds, and bounds the lookup on all three paths. The report shows the
   \`EXPLAIN (ANALYZE)\` of the lookup through \`/sql\` (run through \`/sql\`, as its role, through the
   view) and of the raw lookup, and for \`records/list\`, whose statement is the API's own, the index and
   sequential scans PostgreSQL counted on People while 20 listings by email ran.
4. **Checks, before timing.** The three paths find the same record for an email, and give the same
   count and sum per status (sums equal to 1e-9, as doubles added in another order).
5. **Connections.** \`/sql\` runs on the API's own connections for SQL, logged in as the database's
   role: at most 4 for one database (\`SQL_CONNECTIONS_PER_BASE\`, the default, which is also the
   role's connection limit) of the process's \`SQL_MAX_CONNECTIONS\` (default 8); queries past them
   wait their turn, so at most 4 \`/sql\` queries of People run at once. \`records/list\` uses the
   API's pool (20), raw SQL a \`pg\` Pool of as many connections as workers; rows come back parsed
   into objects, as any client reads them.

| Case | \`/sql\` | \`records/list\` | Raw SQL |
|---|---|---|---|
| lookup: one person by email, a random one of the 100,000 per request | \`SELECT "id", "createdAt", "updatedAt", "name", "email", "amount", "status", "tags", "due", "active" FROM "People" WHERE "email" = $1\` (the columns the listing returns) | \`{"filter": {"field": "email", "equals": …}, "limit": 1}\` | the same SELECT on \`base_<hex>.<table id>\`: \`id, created_at, updated_at\` and the field-id columns, \`WHERE "<email field id>" = $1\` |
| aggregate: count and sum of amount per status over the whole table | \`SELECT "status", count(*), sum("amount") FROM "People" GROUP BY 1\` | what a user without SQL must do: every record, by cursor, pages of 2,000 (the largest \`limit\`), added up on the client; the listing has no choice of fields, so every field comes along. One request in the tables is one whole aggregate (50 pages) | \`SELECT "<status id>", count(*), sum("<amount id>") FROM base_<hex>.<table id> GROUP BY 1\` |
`;

export const RESULTS_PATH = join(__dirname, 'results.json');
export const ISSUE11_RESULTS_PATH = join(__dirname, 'results-issue11.json');
export const SQL_RESULTS_PATH = join(__dirname, 'results-sql.json');

/** Keeps the figures of a suite's last full run, so the README can be rendered again (--report-only). */
export function saveResults(path: string, results: Results | Issue11Results | SqlResults): void {
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
}

function loadResultsFrom<T>(path: string): T | null {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as T) : null;
}

/** Writes bench/README.md: how to run, the cases, the figures of each suite's last full run, and the findings. */
export function writeReadme(): string {
  const path = join(__dirname, '..', 'README.md');
  const deals = loadResultsFrom<Results>(RESULTS_PATH);
  const issue11 = loadResultsFrom<Issue11Results>(ISSUE11_RESULTS_PATH);
  const sql = loadResultsFrom<SqlResults>(SQL_RESULTS_PATH);
  const findingsPath = join(__dirname, 'findings.md');
  const findings = existsSync(findingsPath) ? `\n${readFileSync(findingsPath, 'utf8').trim()}\n` : '';
  // Other benchmarks keep their own "## " sections after this one; only the records part is rewritten.
  // The sql suite's results come after the findings, which belong to the two suites above them.
  const existing = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const otherSections = existing.match(/\n## (?!records\b)[\s\S]*$/)?.[0] ?? '';
  const notRun = '(No full run of this suite yet.)';
  writeFileSync(
    path,
    `${README_INTRO}\n### Results\n\n${deals ? renderReport(deals) : notRun}\n\n### Results of issue 11's workloads (100,000 People)\n\n${issue11 ? renderIssue11Report(issue11) : notRun}\n${findings}\n### Results of read-only SQL (100,000 People)\n\n${sql ? renderSqlReport(sql) : notRun}\n${otherSections}`,
  );
  return path;
}
