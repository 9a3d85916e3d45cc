import type { Measurement } from '../measure';
import type { SqlCaseResult, SqlPath, SqlResults } from '../sql';
import { byConcurrency, cores, errorsOf, n0, n1, ratio, rps, runSummary } from './format';

/** The sql suite's figures as markdown: read-only SQL beside records/list and raw SQL on People. */

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
    'Latencies. "x raw SQL": requests/s over raw SQL\'s; "Other load": cores kept busy by processes outside the benchmark (lib/cpu.ts).',
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
