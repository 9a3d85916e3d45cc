import type { Measurement } from '../measure';
import type { ReadResult, Results } from '../results';

/** The formats, tables and summaries the suites' reports share. */

export const n0 = (value: number) =>
  Number.isNaN(value) ? 'n/a' : Math.round(value).toLocaleString('en-US');
export const n1 = (value: number) => (Number.isNaN(value) ? 'n/a' : value.toFixed(value >= 100 ? 0 : 1));
export const rps = (value: number) => (value >= 100 ? n0(value) : value.toFixed(1));
export const kb = (bytes: number) => (bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0);
export const ratio = (api: Measurement, raw: Measurement) => api.requestsPerSecond / raw.requestsPerSecond;
export const cores = (m: Measurement) => (Number.isNaN(m.foreignCores) ? 'n/a' : m.foreignCores.toFixed(2));
export const errorsOf = (m: Measurement) => (m.errors > 0 ? ` (${m.errors} errors)` : '');

export function readsTable(reads: ReadResult[]): string {
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

export function totalsTable(reads: ReadResult[]): string {
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

export interface Verdict {
  target: string;
  measured: string;
  met: boolean;
}

export function targetsTable(list: Verdict[]): string {
  const lines = ['| Target | Measured | Met |', '|---|---|---|'];
  for (const v of list) lines.push(`| ${v.target} | ${v.measured} | ${v.met ? 'yes' : '**no**'} |`);
  return lines.join('\n');
}

export type RunInfo = Pick<Results, 'machine' | 'startedAt' | 'serverMode' | 'config'>;

export function runSummary(results: RunInfo): string {
  const m = results.machine;
  return [
    `- Date: ${results.startedAt}`,
    `- Machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB memory, ${m.os}; load average at start ${m.loadAverage}`,
    results.serverMode === 'launcher'
      ? `- Node.js ${m.node}; records-api started by @recordbase/launcher as \`npm start\` runs it (its own main.ts: a pool of 20 PostgreSQL connections)`
      : results.serverMode.startsWith('the stack')
        ? `- Node.js ${m.node}; requests through ${results.serverMode} (records-api's pool of 20 PostgreSQL connections shared among its processes)`
        : `- Node.js ${m.node}; records-api in a ${results.serverMode} with a pool of ${results.config.serverPoolSize} PostgreSQL connections`,
    `- ${m.postgres}`,
    `- Code measured: ${m.source}`,
    `- PostgreSQL settings (defaults, untuned): ${m.postgresSettings}`,
  ].join('\n');
}

export const byConcurrency = <T extends { id: string; concurrency: number }>(
  reads: T[],
  id: string,
  value: (r: T) => string,
) =>
  [...new Set(reads.map((r) => r.concurrency))]
    .map((c) => reads.find((r) => r.id === id && r.concurrency === c))
    .map((r) => (r ? value(r) : 'n/a'))
    .join(' / ');

/** CPU milliseconds per request of one part of the machine (cpu.ts), or n/a where not measured. */
export const cpuMs = (m: Measurement | undefined, role: keyof NonNullable<Measurement['cpuMsPerRequest']>) =>
  m?.cpuMsPerRequest ? m.cpuMsPerRequest[role].toFixed(2) : 'n/a';

/** The same over records-api, the other services, PostgreSQL and the load generator together. */
export const cpuTotal = (m: Measurement | undefined) =>
  m?.cpuMsPerRequest
    ? (
        m.cpuMsPerRequest.recordsApi +
        m.cpuMsPerRequest.services +
        m.cpuMsPerRequest.postgres +
        m.cpuMsPerRequest.loadGenerator
      ).toFixed(2)
    : 'n/a';

/**
 * Where the machine's CPU went per request (cpu.ts), the API's beside the raw SQL's: each case's
 * measurements that recorded it, in the order given.
 */
export function cpuTable(rows: { label: string; api: Measurement; raw?: Measurement }[]): string {
  const measured = rows.filter((row) => row.api.cpuMsPerRequest);
  if (measured.length === 0) return 'CPU per request was not measured in this run.';
  const lines = [
    '| Case | records-api | other services | PostgreSQL API / raw | load generator API / raw | all of them API / raw |',
    '|---|--:|--:|--:|--:|--:|',
  ];
  for (const { label, api, raw } of measured) {
    lines.push(
      `| ${label} | ${cpuMs(api, 'recordsApi')} | ${cpuMs(api, 'services')} | ${cpuMs(api, 'postgres')} / ${cpuMs(raw, 'postgres')} | ${cpuMs(api, 'loadGenerator')} / ${cpuMs(raw, 'loadGenerator')} | ${cpuTotal(api)} / ${cpuTotal(raw)} |`,
    );
  }
  return lines.join('\n');
}
