import type { ReadResult, Results, WriteResult } from '../results';
import {
  cores,
  errorsOf,
  kb,
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

/** The deals suite's figures as markdown: 1,000,000 Deals through the API beside raw SQL. */

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

function loadSummary(dataset: Results['data']): string {
  const steps = dataset.load.steps.map(([step, seconds]) => `${step} ${seconds.toFixed(1)} s`).join('; ');
  return dataset.load.reused
    ? `Load: reused the data loaded by an earlier run (that load took ${dataset.load.seconds.toFixed(1)} s: ${steps}).`
    : `Load: ${dataset.load.seconds.toFixed(1)} s (${steps}).`;
}

export function machineSummary(results: Results): string {
  return [
    runSummary(results),
    `- ${results.data.rows.toLocaleString('en-US')} Deals, ${results.data.companies.toLocaleString('en-US')} Companies; ${results.config.durationMs / 1000} s per case after ${results.config.warmupMs / 1000} s warm-up; ${results.config.repeats} repeat(s)${results.config.repeats > 1 ? ', medians shown' : ''}`,
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
    '"Other load": average number of cores that processes outside the benchmark kept busy while the case ran (the machine may be shared, see lib/cpu.ts); figures of rows with a high value are less reliable.',
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
