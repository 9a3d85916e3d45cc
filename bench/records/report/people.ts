import type { Measurement } from '../measure';
import type { PeopleResults } from '../people-suite';
import type { ReadResult, WriteResult } from '../results';
import {
  byConcurrency,
  cores,
  cpuTable,
  errorsOf,
  n0,
  n1,
  ratio,
  readsTable,
  rps,
  runSummary,
  targetsTable,
  totalsTable,
  type Verdict,
} from './format';

/** The people suite's figures as markdown: list pages and bulk writes of 100,000 People beside raw SQL. */

/** The issue's table: requests/s at each concurrency (c=1 / c=16 by default), then the writes' records/s. */
function peopleTable(reads: ReadResult[], writes: WriteResult[]): string {
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

function peopleWritesTable(writes: WriteResult[]): string {
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

function peopleVerdicts(results: PeopleResults): Verdict[] {
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

function indexList(indexes: PeopleResults['indexes']): string {
  const list = (defs: string[]) => defs.map((d) => `\`${d}\``).join('; ');
  return [
    ...Object.entries(indexes.api).map(
      ([phase, defs]) => `- People (API) at the end of the writes ${phase}: ${list(defs)}`,
    ),
    `- Raw, read indexes: ${list(indexes.raw)}`,
    `- Raw, no read indexes: ${list(indexes.rawBare)}`,
  ].join('\n');
}

export function renderPeopleReport(results: PeopleResults): string {
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
    peopleTable(results.reads, results.writes),
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
    peopleWritesTable(results.writes),
    '',
    'CPU milliseconds per request (a write: 100 records), over all processes of each part (records-api: every process):',
    '',
    cpuTable([
      ...results.reads.map((r) => ({ label: `${r.id} c=${r.concurrency}`, api: r.api, raw: r.raw })),
      ...bulkFirst(results.writes).map((w) => ({
        label: `${w.id} c=${w.concurrency} (${w.phase ?? ''})`,
        api: w.api,
        raw: w.raw,
      })),
    ]),
    '',
    'Indexes when the writes ran:',
    '',
    indexList(results.indexes),
    '',
    '#### Targets',
    '',
    targetsTable(peopleVerdicts(results)),
  ].join('\n');
}
