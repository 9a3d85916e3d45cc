import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { sourceFingerprint as fingerprint, type Host, host, loadAverage, redisVersion } from '../lib/machine';
import { writeSuiteSection } from '../lib/readme';
import { median } from '../lib/stats';
import type { ReceiverBaselineResult } from './baselines';
import type { CaseResult } from './case';
import type { SaturationSettings, WebhooksBenchConfig } from './config';
import { CPU_GROUPS, type CpuGroup } from './cpu';
import { STAGES } from './stages';

/** Figures of a run as markdown, kept in results.json and placed in bench/README.md. */

export interface Machine extends Host {
  postgres: string;
  redis: string;
  loadAverage: string;
  source: string;
}

/** One step of the saturation search, and whether the pipeline kept up with it. */
export interface SaturationStep {
  result: CaseResult;
  passed: boolean;
  why: string;
}

export interface WebhooksResults {
  config: WebhooksBenchConfig;
  machine: Machine;
  startedAt: string;
  /** Runs of the receiver baseline. */
  receiver: ReceiverBaselineResult[];
  /** Every run of the API baseline and of the steady cases (`repeat` tells them apart). */
  cases: CaseResult[];
  saturation: { settings: SaturationSettings; steps: SaturationStep[] } | null;
}

const SOURCE_DIRS = [
  'apps/records-api/src',
  'apps/webhook-dispatcher/src',
  'packages/contracts/src',
  'packages/db/src',
  'packages/db/migrations',
  'packages/server-kit/src',
];

/** sha256 over the webhook path's sources, and when the newest of them changed. */
export const sourceFingerprint = () => fingerprint(SOURCE_DIRS);

export async function machineInfo(databaseUrl: string, source: string): Promise<Machine> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  let postgres = 'unknown';
  try {
    postgres = (await client.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? postgres;
  } finally {
    await client.end();
  }
  return { ...host(), postgres, redis: redisVersion(), loadAverage: loadAverage(), source };
}

const int = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');
const ms = (value: number) =>
  value === Number.POSITIVE_INFINITY
    ? 'undelivered'
    : Number.isNaN(value)
      ? 'n/a'
      : value >= 100
        ? int(value)
        : value.toFixed(1);
const withUnit = (value: number) => (Number.isFinite(value) ? `${ms(value)} ms` : ms(value));
const cores = (value: number) => value.toFixed(2);
const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

/** `median (min–max)` over runs, or the one value. */
function spread(values: readonly number[], format: (value: number) => string = int): string {
  const kept = values.filter((value) => !Number.isNaN(value));
  if (kept.length <= 1) return format(kept[0] ?? Number.NaN);
  return `${format(median(kept))} (${format(Math.min(...kept))}–${format(Math.max(...kept))})`;
}

export function caseTitle(result: Pick<CaseResult, 'spec' | 'load'>): string {
  const { spec, load } = result;
  if (spec.kind === 'api') return `API write ceiling, no dispatcher (${load.concurrency} writers)`;
  const hooks =
    spec.webhooks === 0 ? 'no webhook' : `${spec.webhooks} webhook${spec.webhooks > 1 ? 's' : ''}`;
  if (spec.kind === 'steady') return `${hooks}, steady ${spec.rate} events/s`;
  return `${hooks}, burst of ${int(load.events ?? 0)} events (bulk of ${load.recordsPerRequest}, ${load.concurrency} writers)`;
}

/** Runs of the same case, in the order of the configuration. */
function groups(cases: readonly CaseResult[]): CaseResult[][] {
  const byId = new Map<string, CaseResult[]>();
  for (const result of cases) {
    if (result.spec.saturation) continue;
    byId.set(result.spec.id, [...(byId.get(result.spec.id) ?? []), result]);
  }
  return [...byId.values()];
}

const deliveryCases = (cases: readonly CaseResult[]) =>
  groups(cases).filter((runs) => runs[0]!.spec.webhooks > 0);

/** Deliveries (or events, with no webhook) in a run's measured window, for per-unit figures. */
const unitsOf = (r: CaseResult) => (r.spec.webhooks === 0 ? r.window.events : r.window.deliveries);

function receiverCeiling(results: WebhooksResults): number {
  return median(results.receiver.map((r) => r.deliveriesPerSecond));
}

function apiCeiling(results: WebhooksResults): { eventsPerSecond: number; runs: CaseResult[] } {
  const runs = results.cases.filter((r) => r.spec.kind === 'api');
  return { eventsPerSecond: median(runs.map((r) => r.figures.eventsPerSecond)), runs };
}

function baselinesTable(results: WebhooksResults): string {
  const lines = [
    '| Baseline | Runs | **Ceiling** (median, min–max) | Latency p50 / p99 ms (medians) | CPU cores (medians) | Machine busy |',
    '|---|--:|--:|--:|---|--:|',
  ];
  const receiver = results.receiver;
  if (receiver.length > 0) {
    lines.push(
      `| Receiver alone: signed POSTs from a node client, ${receiver[0]!.concurrency} in flight over keep-alive, ${receiver[0]!.spec.webhooks} paths | ${receiver.length} | ${spread(receiver.map((r) => r.deliveriesPerSecond))} deliveries/s | ${ms(median(receiver.map((r) => r.latency.p50)))} / ${ms(median(receiver.map((r) => r.latency.p99)))} | receiver ${cores(median(receiver.map((r) => r.cpu.cores.receiver)))}, client ${cores(median(receiver.map((r) => r.cpu.cores['load generator'])))} | ${cores(median(receiver.map((r) => r.cpu.machineBusy)))} |`,
    );
  }
  const api = apiCeiling(results).runs;
  if (api.length > 0) {
    const cpu = (group: CpuGroup) => cores(median(api.map((r) => r.cpu.cores[group])));
    lines.push(
      `| ${caseTitle(api[0]!)}: single-record creates, closed loop | ${api.length} | ${spread(api.map((r) => r.figures.eventsPerSecond))} events/s | ${ms(median(api.map((r) => r.figures.api.p50)))} / ${ms(median(api.map((r) => r.figures.api.p99)))} | records-api ${cpu('records-api')}, its PostgreSQL ${cpu('PG for records-api')}, PG other ${cpu('PG other')}, Redis ${cpu('redis')}, client ${cpu('load generator')} | ${cores(median(api.map((r) => r.cpu.machineBusy)))} |`,
    );
  }
  return lines.join('\n');
}

function deliveriesTable(results: WebhooksResults): string {
  const ceiling = receiverCeiling(results);
  const lines = [
    '| Case | Runs | Offered deliveries/s | Events/s written | API p50 / p99 ms | **Deliveries/s** | % of receiver alone | **Commit → receipt p50 ms** | **Commit → receipt p99 ms** | API answer → receipt p99 ms | Missing / duplicates / bad signatures (all runs) | Undispatched events at load end | Tail s |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const runs of deliveryCases(results.cases)) {
    const first = runs[0]!;
    const f = runs.map((r) => r.figures);
    const offered = first.spec.kind === 'steady' ? int(first.spec.rate * first.spec.webhooks) : 'max';
    const problems = `${int(f.reduce((sum, x) => sum + x.missing, 0))} / ${int(f.reduce((sum, x) => sum + x.duplicates, 0))} / ${int(runs.reduce((sum, r) => sum + r.receiver.invalid, 0))}`;
    const errors = f.reduce((sum, x) => sum + x.writeErrors, 0);
    const skipped = f.reduce((sum, x) => sum + x.skipped, 0);
    const written = `${spread(f.map((x) => x.eventsPerSecond))}${errors ? ` (${errors} errors)` : ''}${skipped ? ` (${skipped} skipped)` : ''}`;
    const rate = median(f.map((x) => x.deliveriesPerSecond));
    lines.push(
      `| ${caseTitle(first)} | ${runs.length} | ${offered} | ${written} | ${ms(median(f.map((x) => x.api.p50)))} / ${ms(median(f.map((x) => x.api.p99)))} | ${spread(f.map((x) => x.deliveriesPerSecond))} | ${Number.isFinite(ceiling) ? `${((rate / ceiling) * 100).toFixed(0)}%` : 'n/a'} | ${spread(
        f.map((x) => x.latency.p50),
        ms,
      )} | ${spread(
        f.map((x) => x.latency.p99),
        ms,
      )} | ${ms(median(f.map((x) => x.latencyFromAnswer.p99)))} | ${problems} | ${int(median(runs.map((r) => r.backlogAtLoadEnd.undispatched)))} | ${spread(
        runs.map((r) => r.figures.tailSeconds),
        (value) => fixed(value, 1),
      )}${runs.some((r) => r.drainTimedOut) ? ' (timed out)' : ''} |`,
    );
  }
  return lines.join('\n');
}

function stagesTable(results: WebhooksResults): string {
  const lines = [
    `| Case | n (last run) | ${STAGES.map((stage) => `${stage} p50 / p99`).join(' | ')} |`,
    `|---|--:|${STAGES.map(() => '--:').join('|')}|`,
  ];
  for (const runs of deliveryCases(results.cases)) {
    const cell = (stage: (typeof STAGES)[number]) =>
      `${ms(median(runs.map((r) => r.stages[stage].p50)))} / ${ms(median(runs.map((r) => r.stages[stage].p99)))}`;
    lines.push(
      `| ${caseTitle(runs[0]!)} | ${int(runs[runs.length - 1]!.stages.total.n)} | ${STAGES.map(cell).join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

function cpuTable(results: WebhooksResults): string {
  const lines = [
    `| Case | ${CPU_GROUPS.join(' | ')} | machine busy |`,
    `|---|${CPU_GROUPS.map(() => '--:').join('|')}|--:|`,
  ];
  for (const runs of groups(results.cases)) {
    lines.push(
      `| ${caseTitle(runs[0]!)} | ${CPU_GROUPS.map((group) => cores(median(runs.map((r) => r.cpu.cores[group])))).join(' | ')} | ${cores(median(runs.map((r) => r.cpu.machineBusy)))} of ${results.machine.cpus} |`,
    );
  }
  return lines.join('\n');
}

/** Per delivery (per event with no webhook) over the measured window; medians over the runs. */
export function workPerUnit(runs: readonly CaseResult[]) {
  const per = (value: (r: CaseResult) => number | undefined) =>
    median(
      runs.map((r) => {
        const n = unitsOf(r);
        const v = value(r);
        return n > 0 && v !== undefined ? v / n : Number.NaN;
      }),
    );
  const dispatcher = (r: CaseResult) => r.counters?.services?.['webhook-dispatcher'];
  const api = (r: CaseResult) => r.counters?.services?.['records-api'];
  const recordBatches = (r: CaseResult) => dispatcher(r)?.pg['record deliveries'];
  return {
    dispatcherPg: per((r) => dispatcher(r)?.pgStatements),
    dispatcherRedis: per((r) => dispatcher(r)?.redisCommands),
    dispatcherBegins: per((r) => dispatcher(r)?.pg.BEGIN ?? (dispatcher(r) ? 0 : undefined)),
    recordStatements: per(recordBatches),
    /** Deliveries per record statement (the batch size). */
    deliveriesPerBatch: median(
      runs.map((r) => {
        const batches = recordBatches(r);
        return batches ? unitsOf(r) / batches : Number.NaN;
      }),
    ),
    /** All the dispatcher's statements per record statement. */
    statementsPerBatch: median(
      runs.map((r) => {
        const batches = recordBatches(r);
        const total = dispatcher(r)?.pgStatements;
        return batches && total !== undefined ? total / batches : Number.NaN;
      }),
    ),
    apiPg: per((r) => api(r)?.pgStatements),
    apiRedis: per((r) => api(r)?.redisCommands),
    /**
     * records-api's own work per event it wrote in the window: its outbox inserts count the events
     * (answers still queued at the end of the window would undercount them).
     */
    apiPgPerEvent: median(
      runs.map((r) => {
        const counts = api(r);
        const events = counts?.pg['INSERT outbox_events'];
        return counts && events ? counts.pgStatements / events : Number.NaN;
      }),
    ),
    apiRedisPerEvent: median(
      runs.map((r) => {
        const counts = api(r);
        const events = counts?.pg['INSERT outbox_events'];
        return counts && events ? counts.redisCommands / events : Number.NaN;
      }),
    ),
    serverRedis: per((r) => r.counters?.redisCommands),
    serverPgTransactions: per((r) => r.counters?.pgTransactions),
    pgRows: per((r) => r.counters?.pgRowsWritten),
    dispatcherCpuMs: per((r) => r.cpu.cores.dispatcher * r.cpu.seconds * 1000),
    dispatcherPgCpuMs: per((r) => r.cpu.cores['PG for dispatcher'] * r.cpu.seconds * 1000),
    machineCpuMs: per((r) => r.cpu.machineBusy * r.cpu.seconds * 1000),
  };
}

function topOf(runs: readonly CaseResult[], service: string, kind: 'pg' | 'redis'): string {
  const last = runs[runs.length - 1]!;
  const counts = last.counters?.services?.[service]?.[kind];
  const n = unitsOf(last);
  if (!counts || n <= 0) return '';
  return Object.entries(counts)
    .slice(0, 5)
    .map(([name, calls]) => `${name} ${(calls / n).toFixed(3)}`)
    .join(', ');
}

function perDeliveryTable(results: WebhooksResults): string {
  const lines = [
    '| Case | Unit | Dispatcher PG statements | of which BEGIN | Deliveries per record statement (batch) | Dispatcher statements per record statement | Dispatcher Redis commands | records-api PG statements | records-api Redis commands | Redis commands, whole server | PG transactions, whole database | PG rows written | Dispatcher CPU ms | its PG CPU ms | Machine CPU ms |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const runs of groups(results.cases)) {
    const w = workPerUnit(runs);
    const unit = runs[0]!.spec.webhooks === 0 ? 'event' : 'delivery';
    lines.push(
      `| ${caseTitle(runs[0]!)} | ${unit} | ${fixed(w.dispatcherPg, 3)} | ${fixed(w.dispatcherBegins, 3)} | ${fixed(w.deliveriesPerBatch, 1)} | ${fixed(w.statementsPerBatch, 2)} | ${fixed(w.dispatcherRedis)} | ${fixed(w.apiPg)} | ${fixed(w.apiRedis)} | ${fixed(w.serverRedis)} | ${fixed(w.serverPgTransactions)} | ${fixed(w.pgRows)} | ${fixed(w.dispatcherCpuMs, 3)} | ${fixed(w.dispatcherPgCpuMs, 3)} | ${fixed(w.machineCpuMs, 3)} |`,
    );
  }
  const detail: string[] = [];
  for (const runs of groups(results.cases)) {
    const parts = [
      ['dispatcher PG', topOf(runs, 'webhook-dispatcher', 'pg')],
      ['dispatcher Redis', topOf(runs, 'webhook-dispatcher', 'redis')],
      ['records-api PG', topOf(runs, 'records-api', 'pg')],
      ['records-api Redis', topOf(runs, 'records-api', 'redis')],
    ].filter(([, text]) => text);
    if (parts.length > 0)
      detail.push(`- ${caseTitle(runs[0]!)}: ${parts.map(([name, text]) => `${name}: ${text}`).join('; ')}`);
  }
  return [...lines, '', 'By kind (last run, per unit):', '', ...detail].join('\n');
}

function backlogTable(results: WebhooksResults): string {
  const lines = [
    '| Case | Run | When | Events | Undispatched | Delivery rows (expected) | Open deliveries | Succeeded |',
    '|---|--:|---|--:|--:|--:|--:|--:|',
  ];
  const runs = [
    ...results.cases.filter((r) => r.spec.webhooks > 0 && !r.spec.saturation),
    ...(results.saturation?.steps.map((step) => step.result) ?? []),
  ];
  for (const r of runs) {
    for (const [when, b] of [
      ['load ended', r.backlogAtLoadEnd],
      [`${r.drainSeconds.toFixed(0)} s later`, r.backlogAtEnd],
    ] as const) {
      lines.push(
        `| ${caseTitle(r)}${r.spec.saturation ? ' (saturation)' : ''} | ${r.repeat} | ${when} | ${int(b.events)} | ${int(b.undispatched)} | ${int(b.deliveries)} (${int(b.events * r.spec.webhooks)}) | ${int(b.openDeliveries)} | ${int(b.succeeded)} |`,
      );
    }
  }
  return lines.join('\n');
}

/**
 * A saturation step is kept up with when the API wrote the offered events, the receiver got the
 * offered deliveries within the window, every delivery arrived, the p99 stayed under the limit,
 * and less than a second of events was still undispatched when the load ended.
 */
export function saturationVerdict(r: CaseResult, p99LimitMs: number): { passed: boolean; why: string } {
  const f = r.figures;
  const offered = r.spec.rate * r.spec.webhooks;
  const reasons: string[] = [];
  if (f.eventsPerSecond < 0.95 * r.spec.rate || f.skipped > 0 || f.writeErrors > 0)
    reasons.push(`API wrote ${int(f.eventsPerSecond)} of ${r.spec.rate} events/s`);
  if (f.deliveriesPerSecond < 0.95 * offered)
    reasons.push(`${int(f.deliveriesPerSecond)} of ${int(offered)} deliveries/s`);
  if (!(f.latency.p99 < p99LimitMs)) reasons.push(`p99 ${withUnit(f.latency.p99)}`);
  if (r.backlogAtLoadEnd.undispatched > r.spec.rate)
    reasons.push(`${int(r.backlogAtLoadEnd.undispatched)} events undispatched at the end of the load`);
  if (f.missing > 0) reasons.push(`${int(f.missing)} missing`);
  return { passed: reasons.length === 0, why: reasons.join(', ') };
}

function saturationPoint(results: WebhooksResults): SaturationStep | undefined {
  return results.saturation?.steps.filter((step) => step.passed).at(-1);
}

function saturationTable(results: WebhooksResults): string {
  const search = results.saturation;
  if (!search) return '(not run)';
  const lines = [
    '| Events/s | Offered deliveries/s | Events/s written | Deliveries/s | Commit → receipt p50 / p99 ms | Undispatched at load end | Machine busy | Kept up |',
    '|--:|--:|--:|--:|--:|--:|--:|---|',
  ];
  for (const step of search.steps) {
    const r = step.result;
    const f = r.figures;
    lines.push(
      `| ${r.spec.rate} | ${int(r.spec.rate * r.spec.webhooks)} | ${int(f.eventsPerSecond)} | ${int(f.deliveriesPerSecond)} | ${ms(f.latency.p50)} / ${ms(f.latency.p99)} | ${int(r.backlogAtLoadEnd.undispatched)} | ${cores(r.cpu.machineBusy)} | ${step.passed ? 'yes' : `no: ${step.why}`} |`,
    );
  }
  const point = saturationPoint(results);
  lines.push(
    '',
    point
      ? `**Saturation point: ${int(point.result.figures.deliveriesPerSecond)} deliveries/s** (${search.settings.webhooks} webhooks x ${point.result.spec.rate} events/s, p99 ${withUnit(point.result.figures.latency.p99)}), the highest step kept up with (one run per step, ${search.settings.durationMs / 1000} s each; p99 limit ${search.settings.p99LimitMs} ms).`
      : `**Saturation point: below the first step** (${search.settings.rates[0]} events/s x ${search.settings.webhooks} webhooks).`,
  );
  return lines.join('\n');
}

interface Verdict {
  target: string;
  measured: string;
  met: boolean | 'n/a';
}

const steadyRuns = (results: WebhooksResults, webhooks: number, rate: number) =>
  results.cases.filter(
    (r) =>
      r.spec.kind === 'steady' && !r.spec.saturation && r.spec.webhooks === webhooks && r.spec.rate === rate,
  );

export function verdicts(results: WebhooksResults): Verdict[] {
  const verdicts: Verdict[] = [];
  const p99Of = (runs: CaseResult[]) => median(runs.map((r) => r.figures.latency.p99));
  const one100 = steadyRuns(results, 1, 100);
  if (one100.length > 0) {
    const p99 = p99Of(one100);
    verdicts.push({
      target: 'Commit → receipt p99, 1 webhook, steady 100 events/s < 100 ms',
      measured: `p99 ${spread(
        one100.map((r) => r.figures.latency.p99),
        ms,
      )} ms (median of ${one100.length} runs; p50 ${ms(median(one100.map((r) => r.figures.latency.p50)))} ms)`,
      met: p99 < 100,
    });
  }
  const one500 = steadyRuns(results, 1, 500);
  if (one500.length > 0) {
    const ceiling = apiCeiling(results).eventsPerSecond;
    const written = median(one500.map((r) => r.figures.eventsPerSecond));
    const p99 = p99Of(one500);
    const sustained = written >= 0.98 * 500 || (ceiling < 500 && written >= 0.95 * ceiling);
    verdicts.push({
      target:
        'Commit → receipt p99, 1 webhook, steady 500 events/s (or the API write ceiling if lower) < 250 ms',
      measured: `p99 ${spread(
        one500.map((r) => r.figures.latency.p99),
        ms,
      )} ms at ${int(written)} events/s written (API ceiling in this run: ${int(ceiling)} events/s)`,
      met: p99 < 250 && sustained,
    });
  }
  const fifty = groups(results.cases).filter(
    (runs) => runs[0]!.spec.kind === 'steady' && runs[0]!.spec.webhooks === 50,
  );
  const point = saturationPoint(results);
  if (fifty.length > 0 || results.saturation) {
    // The repeated steady cases decide (medians); the saturation search is one run per step.
    const keptUp = fifty.filter((runs) => {
      const f = runs.map((r) => r.figures);
      return (
        median(f.map((x) => x.deliveriesPerSecond)) >= 0.95 * runs[0]!.spec.rate * 50 &&
        median(f.map((x) => x.latency.p99)) < 1000
      );
    });
    const best = Math.max(0, ...keptUp.map((runs) => runs[0]!.spec.rate * 50));
    verdicts.push({
      target:
        'Deliveries/s, 50 webhooks, steady >= 2,000 (kept up with: >= 95% delivered in the window, p99 < 1 s; medians of the repeated steady cases)',
      measured: `${fifty
        .map(
          (runs) =>
            `${int(runs[0]!.spec.rate * 50)}/s offered (${runs[0]!.spec.rate} events/s): ${int(median(runs.map((r) => r.figures.deliveriesPerSecond)))}/s, p99 ${withUnit(median(runs.map((r) => r.figures.latency.p99)))}`,
        )
        .join(
          '; ',
        )}${point ? `; saturation search (one run per step): ${int(point.result.figures.deliveriesPerSecond)}/s kept up with` : ''}`,
      met: best >= 2000,
    });
  }
  // Work per delivery at the lowest rate of each (where nothing piles up to be worked on again).
  const oneRuns = groups(results.cases).find(
    (runs) => runs[0]!.spec.kind === 'steady' && runs[0]!.spec.webhooks === 1,
  );
  const fiftyRuns = fifty[0];
  for (const runs of [oneRuns, fiftyRuns]) {
    if (!runs) continue;
    const w = workPerUnit(runs);
    verdicts.push({
      target: `Redis commands and PG round trips per delivery (${caseTitle(runs[0]!)}); at most 1 PG round trip per batch`,
      measured: `dispatcher per delivery: ${fixed(w.dispatcherRedis)} Redis commands, ${fixed(w.dispatcherPg, 3)} PG statements (${fixed(w.dispatcherBegins, 3)} BEGIN); ${fixed(w.deliveriesPerBatch, 1)} deliveries per record statement (1 statement, no transaction, per batch) but ${fixed(w.statementsPerBatch, 2)} dispatcher statements per batch in all; records-api per event: ${fixed(w.apiRedisPerEvent)} Redis commands, ${fixed(w.apiPgPerEvent)} PG statements (one transaction)`,
      met: w.statementsPerBatch <= 1.05,
    });
  }
  return verdicts;
}

function targetsTable(results: WebhooksResults): string {
  const lines = ['| Target | Measured (medians) | Met |', '|---|---|---|'];
  for (const v of verdicts(results))
    lines.push(`| ${v.target} | ${v.measured} | ${v.met === 'n/a' ? 'n/a' : v.met ? 'yes' : '**no**'} |`);
  return lines.join('\n');
}

function tuningLine(config: WebhooksBenchConfig): string {
  const set = Object.entries(config.tuning).map(([name, value]) => `${name}=${value}`);
  return set.length > 0
    ? `service variables set for this run: ${set.join(', ')} (others at their defaults)`
    : 'service defaults (DISPATCH_CONCURRENCY=100, DISPATCH_EVENT_CONCURRENCY=100, DISPATCH_RECEIVER_CONCURRENCY=16, WEBHOOK_TIMEOUT_MS=10000; no variable tuned)';
}

function serviceLogLines(results: WebhooksResults): string[] {
  const lines: string[] = [];
  const runs = [...results.cases, ...(results.saturation?.steps.map((step) => step.result) ?? [])];
  for (const r of runs) {
    for (const [name, log] of Object.entries(r.serviceLog)) {
      if (log.count > 0)
        lines.push(
          `- ${caseTitle(r)} (run ${r.repeat}${r.spec.saturation ? ', saturation' : ''}): ${name} logged ${log.count} warning(s)/error(s); first: \`${(log.first ?? '').replace(/`/g, "'").slice(0, 300)}\``,
        );
    }
    if (r.receiver.invalid > 0)
      lines.push(
        `- ${caseTitle(r)}: ${r.receiver.invalid} deliveries failed verification (${r.receiver.firstInvalid})`,
      );
  }
  return lines;
}

export function renderReport(results: WebhooksResults): string {
  const m = results.machine;
  const c = results.config;
  const logs = serviceLogLines(results);
  return [
    `- Date: ${results.startedAt}`,
    `- Machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB memory, ${m.os}; load average at start ${m.loadAverage}`,
    `- Node.js ${m.node}; ${m.postgres}; Redis ${m.redis}`,
    `- Code measured: ${m.source}`,
    `- Dispatcher tuning: ${tuningLine(c)}`,
    `- Every case run ${c.repeats} time(s), interleaved; figures are medians over the runs (min–max in brackets). Steady cases: ${c.durationMs / 1000} s measured after ${c.warmupMs / 1000} s warm-up; baselines ${c.baselineMs / 1000} s after 1 s (receiver) or ${c.warmupMs / 1000} s (API); tail wait up to ${c.drainTimeoutMs / 1000} s; receiver verifies with ${c.verify === 'crypto' ? 'node:crypto (same check as standardwebhooks)' : 'the standardwebhooks library'}`,
    '',
    '#### Baselines (same run)',
    '',
    baselinesTable(results),
    '',
    '#### Deliveries',
    '',
    deliveriesTable(results),
    '',
    'Deliveries/s: verified receipts per second within the measured window. Latencies count a delivery still missing at the end as infinitely late ("undelivered"). Tail: last receipt after the last request was due. "% of receiver alone": deliveries/s against the receiver baseline\'s median.',
    '',
    '#### Saturation search',
    '',
    saturationTable(results),
    '',
    "#### Where the time goes (medians of the runs' p50 / p99, ms; first attempts of the measured window that arrived)",
    '',
    stagesTable(results),
    '',
    '#### CPU (cores, medians over the runs; measured window)',
    '',
    cpuTable(results),
    '',
    '#### Work per delivery (per event for the API baseline; medians over the runs)',
    '',
    "Statements and commands of each service are counted inside it (a preloaded hook on pg's `Client#query` and ioredis' `sendCommand`), so other clients of the same servers do not count; the whole-server Redis and whole-database PostgreSQL columns do include everything else running on the machine.",
    '',
    perDeliveryTable(results),
    '',
    '#### Work left in PostgreSQL',
    '',
    backlogTable(results),
    '',
    '#### Targets',
    '',
    targetsTable(results),
    ...(logs.length ? ['', '#### Service warnings', '', ...logs] : []),
  ].join('\n');
}

export const RESULTS_PATH = join(__dirname, 'results.json');
/** A partial run (BENCH_WEBHOOKS_CASES set): kept apart, not committed. */
export const LAST_RESULTS_PATH = join(__dirname, 'results.last.json');

/** JSON has no Infinity (an undelivered latency) nor NaN (no value): they are kept as strings. */
export function saveResults(results: WebhooksResults, partial = false): void {
  const replacer = (_key: string, value: unknown) =>
    typeof value === 'number' && !Number.isFinite(value) ? String(value) : value;
  writeFileSync(partial ? LAST_RESULTS_PATH : RESULTS_PATH, `${JSON.stringify(results, replacer, 2)}\n`);
}

export function loadResults(path = process.env.BENCH_RESULTS_FILE || RESULTS_PATH): WebhooksResults {
  const reviver = (_key: string, value: unknown) =>
    value === 'Infinity' || value === 'NaN' || value === '-Infinity' ? Number(value) : value;
  return JSON.parse(readFileSync(path, 'utf8'), reviver) as WebhooksResults;
}

/** Replaces (or appends) the "## webhooks" section of bench/README.md; the rest stays as it is. */
export function writeReadmeSection(results: WebhooksResults): string {
  return writeSuiteSection('webhooks', __dirname, renderReport(results));
}
