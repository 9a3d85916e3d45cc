import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { sourceFingerprint as fingerprint, type Host, host, loadAverage, redisVersion } from '../lib/machine';
import { findings, replaceReadmeSection } from '../lib/readme';
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

const SECTION_INTRO = `## webhooks

Deliveries per second from an API write to a verified receipt at a local receiver, and the latency
from commit to receipt, with 1 and 50 webhooks subscribed, each a median of several runs beside
two baselines measured in the same run: the receiver alone, and the API's write ceiling with no
dispatcher. Targets (issue): p99 < 100 ms with 1 webhook at a steady 100 events/s; p99 < 250 ms
with 1 webhook at a steady 500 events/s (or the API's write ceiling if lower); >= 2,000
deliveries/s with 50 webhooks, steady; Redis commands and PostgreSQL round trips per delivery
reported (at most 1 PostgreSQL round trip per batch).

### How to run

\`\`\`sh
pnpm install
npm run bench:webhooks       # from the repository root (pnpm run bench:webhooks works too)
BENCH_REPEATS=5 npm run bench:webhooks              # more runs per case
DISPATCH_EVENT_CONCURRENCY=32 npm run bench:webhooks  # tuning: service variables are passed on
\`\`\`

Needs PostgreSQL (\`postgres\` user, trust auth) at 127.0.0.1:5432 and Redis at 127.0.0.1:6379.
Every case run drops, recreates and migrates the database \`recordbase_bench_webhooks\` (a run may
leave a backlog behind) and deletes its BullMQ keys afterwards; the database is dropped at the end.
Before each case run the benchmark waits until the records benchmark is not running
(\`pgrep -f records/main.ts\`, every 30 s). A full run (about 10 minutes on 2 cores) keeps its
figures in \`webhooks/results.json\`; \`pnpm --filter @recordbase/bench run webhooks:report\`
renders this section again from them (after editing \`webhooks/findings.md\`). Only this section
of the README is rewritten; a partial run (\`BENCH_WEBHOOKS_CASES\` set) writes
\`webhooks/results.last.json\` instead (render it with \`BENCH_RESULTS_FILE=…\`). Settings
(environment variables, all optional):

| Variable | Default | Meaning |
|---|---|---|
| BENCH_WEBHOOKS_CASES | \`receiver,api,steady:1:100,steady:1:500,steady:50:40,steady:50:100,steady:50:500,saturation:50\` | cases: \`receiver\` and \`api\` (the baselines), \`steady:<webhooks>:<events/s>\`, \`burst:<webhooks>\`, \`saturation:<webhooks>\` (the search); setting it leaves this README alone |
| BENCH_REPEATS | 3 | runs of every case (baselines and steady cases), interleaved; the figures are their medians |
| BENCH_DURATION_S | 10 | measured seconds of a steady case |
| BENCH_WARMUP_S | 2 | seconds of the same load before it (delivered and counted, not timed) |
| BENCH_DRAIN_TIMEOUT_S | 20 | wait for the tail after the load, before counting deliveries missing |
| BENCH_BASELINE_S | 8 | measured seconds of a baseline |
| BENCH_API_CONCURRENCY | 16 | API baseline: writers of the closed loop |
| BENCH_RECEIVER_CONCURRENCY | 64 | receiver baseline: requests in flight (keep-alive connections) |
| BENCH_SATURATION_RATES | 5,10,20,30,40,60,80,100 | saturation search: events/s tried in order (x webhooks = deliveries/s); it stops at the first step not kept up with |
| BENCH_SATURATION_DURATION_S | 10 | measured seconds of a saturation step (one run each) |
| BENCH_SATURATION_P99_MS | 1000 | a step is kept up with when the p99 stays under this (and see below) |
| BENCH_BURST_DELIVERIES, BENCH_BURST_CONCURRENCY, BENCH_BURST_RECORDS | 10000, 16, 10 | burst cases (not in the default set) |
| BENCH_CONNECTIONS | 64 | HTTP connections of the load generator |
| BENCH_MAX_IN_FLIGHT | 1000 | steady: due requests beyond this many outstanding are skipped (and reported) |
| BENCH_WEBHOOKS_VERIFY | standardwebhooks | \`crypto\`: the same check with node:crypto's HMAC |
| BENCH_SERVICE_LOG | warn | LOG_LEVEL of the services |
| BENCH_DISPATCHER_EXEC_ARGV, BENCH_API_EXEC_ARGV | none | extra node flags, such as \`--cpu-prof --cpu-prof-dir=/tmp/prof\` |
| BENCH_WAIT_FOR_RECORDS | 1 | 0 skips waiting for the records benchmark |
| BENCH_WEBHOOKS_DATABASE_URL | postgresql://postgres@127.0.0.1:5432/recordbase_bench_webhooks | benchmark database |
| BENCH_WRITE_README | 1 | 0 leaves this README alone |
| DISPATCH_*, WEBHOOK_TIMEOUT_MS, WEBHOOK_RETRY_SCHEDULE, WEBHOOK_DISABLE_AFTER | service defaults | passed to the services and named in the results |

### What it does

1. **Services.** records-api and webhook-dispatcher as child processes, exactly as \`npm start\`
   and the e2e stack run them (\`node --import tsx apps/<name>/src/main.ts\`), with
   DATABASE_URL, REDIS_URL, a random ROOT_API_KEY, WEBHOOK_SECRET_KEY and FILE_TOKEN_SECRET,
   **the same QUEUE_PREFIX for both** (records-api publishes each committed event to the events
   queue under it, the dispatcher consumes it), WEBHOOK_ALLOWED_CIDRS=127.0.0.1/32, rate limits of
   1,000,000/s, LOG_LEVEL=warn. Each child preloads \`webhooks/count-hook.cjs\`, which counts
   its own PostgreSQL statements (pg's \`Client#query\`) and Redis commands (ioredis'
   \`sendCommand\`), so the per-delivery work is the service's own even on a shared machine. The
   upload service is not started.
2. **Receiver.** An HTTP server on 127.0.0.1 in **its own child process** (so verifying and
   answering does not delay the load generator's schedule; it still shares the two cores). Webhook
   number i is subscribed at \`/h/i\`; the receiver verifies every delivery with that webhook's
   secret (standardwebhooks' \`Webhook.verify\`), checks that \`metadata.webhookId\` and the
   body's \`id\` match, takes the receipt time when the body has arrived (before verifying),
   answers 200, and streams (event id, webhook id, first record id, receipt time, event timestamp,
   attempt) to the parent. A delivery that fails verification is answered 400 and counted.
3. **Baselines, in the same run.** *Receiver alone*: the receiver child with 50 webhook paths,
   and a node client in the benchmark process sending what the dispatcher sends (a signed
   envelope, signed afresh per request) with 64 requests in flight over keep-alive connections,
   as fast as answered: the most deliveries/s any case could reach here. *API write ceiling*:
   records-api alone (no dispatcher; it still publishes every event to Redis), 16 writers in a
   closed loop of single-record creates: the most events/s the API takes, and its latency there.
4. **Steady cases.** A base with one table \`Events\` (Name, Seq), N webhooks subscribed to
   \`record.created\`, one write that must arrive at every webhook, then the load: open loop,
   request i due at start + i / rate, one \`POST …/records\` (one record, one event) each, over an
   undici Pool of 64 keep-alive connections; API latency counts from the due time. Default: 1
   webhook at 100 and 500 events/s, 50 webhooks at 40 events/s (2,000 deliveries/s offered) and
   100 events/s (5,000 offered). Every case is run BENCH_REPEATS times, the runs of all cases
   interleaved (a busy moment of a shared machine does not fall on one case only).
5. **Saturation search.** 50 webhooks at increasing steady rates (one run per step); a step is
   kept up with when the API wrote >= 95% of the offered events, >= 95% of the offered deliveries
   arrived within the window, every delivery arrived, the p99 stayed under 1 s, and less than one
   second of events was undispatched when the load ended (the backlog did not grow). The
   saturation point is the highest step kept up with; the search stops at the first miss.
6. **Measure.** A delivery is an (event, webhook) pair, matched by the first record id of the
   write (the event carries it in \`data.recordIds\`). Commit time = the delivered \`timestamp\`:
   the outbox row's \`created_at\`, \`now()\` of the API's writing transaction, i.e. its start,
   a few ms before the commit (it overstates the latency by the transaction's length; "API
   answer → receipt", from when the answer reached the client, bounds it from below). Percentiles
   are nearest-rank over every expected delivery of the measured window, missing ones counted as
   infinitely late. After the load the benchmark waits for every expected delivery (up to the
   tail timeout, then 2 s more for duplicates) and counts missing and duplicated deliveries.
7. **Evidence.** CPU per process group from /proc (PostgreSQL backends attributed to their
   service by \`application_name\`; "other" is everything else on the machine), the stages of
   each delivery (outbox \`created_at\` → estimated send start (receipt − the attempt's
   \`duration_ms\`) → receipt → the attempt row's \`created_at\`, which is when the batched
   record statement ran, together with the event's \`dispatched_at\`), the statements and
   commands per delivery, and the work left in PostgreSQL when the load ended.
`;

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
  return replaceReadmeSection(
    'webhooks',
    `${SECTION_INTRO}\n### Results\n\n${renderReport(results)}\n${findings(__dirname)}`,
  );
}
