import { AIRTABLE_MAX_RECORDS_PER_WRITE } from '@recordbase/contracts/airtable';
import { AIRTABLE_APIS, type AirtableCaseResult, type AirtableResults, API_LABELS } from '../airtable-suite';
import type { Measurement } from '../measure';
import {
  cores,
  cpuMs,
  cpuTotal,
  errorsOf,
  kb,
  n1,
  ratio,
  rps,
  runSummary,
  targetsTable,
  type Verdict,
} from './format';

/** The airtable suite's figures as markdown: each case through /v0 beside /api/v1, in the same rounds. */

/** Issue 34: /v0 at no less than this of /api/v1's requests/s. */
const TARGET = 0.9;

const label = (c: AirtableCaseResult) => `${c.id}: ${c.title}`;
/** Both sides of a figure, /api/v1's first. */
const pair = (c: AirtableCaseResult, figure: (m: Measurement) => string) =>
  AIRTABLE_APIS.map((api) => figure(c[api])).join(' / ');

const met = (c: AirtableCaseResult) => ratio(c.v0, c.v1) >= TARGET && c.v0.errors === 0 && c.v1.errors === 0;

function summaryTable(cases: AirtableCaseResult[]): string {
  const lines = [
    '| Case | Conc. | /api/v1 req/s | /v0 req/s | /v0 ÷ /api/v1 | Target | Met | p50 ms /api/v1 / /v0 | p99 ms /api/v1 / /v0 | KB per answer /api/v1 / /v0 | Other load /api/v1 / /v0 |',
    '|---|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|',
  ];
  for (const c of cases) {
    const r = ratio(c.v0, c.v1);
    lines.push(
      `| ${label(c)} | ${c.concurrency} | ${rps(c.v1.requestsPerSecond)}${errorsOf(c.v1)} | ${rps(c.v0.requestsPerSecond)}${errorsOf(c.v0)} | ${r.toFixed(2)} x | >= ${TARGET} x | ${met(c) ? 'yes' : '**no**'} | ${pair(c, (m) => n1(m.p50Ms))} | ${pair(c, (m) => n1(m.p99Ms))} | ${pair(c, (m) => kb(m.bytesPerRequest))} | ${pair(c, cores)} |`,
    );
  }
  return lines.join('\n');
}

/** Where each API's requests spent the machine's CPU: what /v0 costs more is read off here. */
function cpuByRoleTable(cases: AirtableCaseResult[]): string {
  if (!cases.some((c) => c.v1.cpuMsPerRequest && c.v0.cpuMsPerRequest))
    return 'CPU per request was not measured in this run.';
  const lines = [
    '| Case | Conc. | records-api /api/v1 / /v0 | other services /api/v1 / /v0 | PostgreSQL /api/v1 / /v0 | load generator /api/v1 / /v0 | all of them /api/v1 / /v0 |',
    '|---|--:|--:|--:|--:|--:|--:|',
  ];
  for (const c of cases) {
    lines.push(
      `| ${c.id} | ${c.concurrency} | ${pair(c, (m) => cpuMs(m, 'recordsApi'))} | ${pair(c, (m) => cpuMs(m, 'services'))} | ${pair(c, (m) => cpuMs(m, 'postgres'))} | ${pair(c, (m) => cpuMs(m, 'loadGenerator'))} | ${pair(c, cpuTotal)} |`,
    );
  }
  return lines.join('\n');
}

function verdicts(results: AirtableResults): Verdict[] {
  return results.cases.map((c) => ({
    target: `${c.id} at concurrency ${c.concurrency}: /v0 >= ${TARGET} x /api/v1 (req/s)`,
    measured: `${ratio(c.v0, c.v1).toFixed(2)} x (${rps(c.v0.requestsPerSecond)} vs ${rps(c.v1.requestsPerSecond)} req/s)`,
    met: met(c),
  }));
}

export function renderAirtableReport(results: AirtableResults): string {
  const { config, data } = results;
  const steps = data.load.steps.map(([step, seconds]) => `${step} ${seconds.toFixed(1)} s`).join('; ');
  const checked = results.checked.map((c) => `${c.id} (${c.records} records)`).join(' and ');
  return [
    runSummary(results),
    `- ${data.rows.toLocaleString('en-US')} People; ${config.durationMs / 1000} s per case and API after ${config.warmupMs / 1000} s warm-up; ${config.repeats} round(s), each measuring every case through ${AIRTABLE_APIS.map((api) => API_LABELS[api]).join(' and ')} back to back (which first alternating by round)${config.repeats > 1 ? ', medians shown' : ''}`,
    '',
    `Load: ${data.load.seconds.toFixed(1)} s (${steps}). Checked before timing: ${checked || 'no listing'} the same ids in the same order through both APIs.`,
    '',
    "#### As the issue's line",
    '',
    summaryTable(results.cases),
    '',
    `CPU milliseconds per request (a write: ${AIRTABLE_MAX_RECORDS_PER_WRITE} records), over all processes of each part (records-api: every process):`,
    '',
    cpuByRoleTable(results.cases),
    '',
    `Indexes of People when the reads ran: ${results.indexes.map((d) => `\`${d}\``).join('; ')}.`,
    '',
    '#### Targets',
    '',
    targetsTable(verdicts(results)),
  ].join('\n');
}
