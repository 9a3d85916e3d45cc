import type { HistoryResults } from '../history-suite';
import { cores, errorsOf, n1, ratio, rps } from './format';

/** Issue 30's targets: writes with history at no less than 0.8 x without; a deep page as a shallow one. */
const WRITE_TARGET = 0.8;
/** "Constant time whatever the depth": a page 1,000,000 revisions deep within this of one 1,000 deep. */
const PAGE_TARGET = 1.5;

export function renderHistoryReport(results: HistoryResults): string {
  const { machine, config } = results;
  const lines = [
    `Run ${results.startedAt} on ${machine.cpus} × ${machine.cpuModel}; ${machine.postgres}; source ${machine.source}. ` +
      `records-api started as \`npm start\` starts it, once for each phase; ${config.durationMs / 1000} s per case after ${config.warmupMs / 1000} s warm-up.`,
    '',
    'What it does: on a fresh five-field table, bulk creates, upserts by Email (half existing) and bulk deletes of 100 records',
    "per request at the write concurrency, with history and the trash on, and on another fresh table with PostgreSQL's",
    "`recordbase.history = 'off'` for the database (records-api started again for each), in rounds of both orders",
    `(${Math.max(2, config.repeats)} of each mode, medians shown: the first phase after a start runs colder); then, history on, the newest page of 20 of a`,
    "table's history with 1,000 revisions and with 1,000,000 (10,000 record events of 100, appended straight into the outbox),",
    'and a page among the oldest of the 1,000,000 through its cursor, at concurrency 1.',
    '',
    '| Case | Conc. | On req/s | On p50 ms | Off req/s | Off p50 ms | On / off | Target | Met | Other load on / off |',
    '|---|--:|--:|--:|--:|--:|--:|--:|---|--:|',
  ];
  for (const write of results.writes) {
    const r = ratio(write.on, write.off);
    lines.push(
      `| ${write.id}: ${write.title} | ${write.concurrency} | ${rps(write.on.requestsPerSecond)}${errorsOf(write.on)} | ${n1(write.on.p50Ms)} | ${rps(write.off.requestsPerSecond)}${errorsOf(write.off)} | ${n1(write.off.p50Ms)} | ${r.toFixed(2)} x | >= ${WRITE_TARGET} x | ${r >= WRITE_TARGET ? 'yes' : '**no**'} | ${cores(write.on)} / ${cores(write.off)} |`,
    );
  }
  const shallow = results.pages.find((page) => page.id === 'P-1k');
  lines.push(
    '',
    '| Case | Revisions | req/s | p50 ms | p99 ms | p50 / 1,000 deep | Target | Met |',
    '|---|--:|--:|--:|--:|--:|--:|---|',
  );
  for (const page of results.pages) {
    const deeper = shallow ? page.api.p50Ms / shallow.api.p50Ms : Number.NaN;
    const met = page === shallow ? '' : deeper <= PAGE_TARGET ? 'yes' : '**no**';
    lines.push(
      `| ${page.id}: ${page.title} | ${page.revisions.toLocaleString('en-US')} | ${rps(page.api.requestsPerSecond)}${errorsOf(page.api)} | ${n1(page.api.p50Ms)} | ${n1(page.api.p99Ms)} | ${page === shallow ? '' : `${deeper.toFixed(2)} x`} | ${page === shallow ? '' : `<= ${PAGE_TARGET} x`} | ${met} |`,
    );
  }
  return lines.join('\n');
}
