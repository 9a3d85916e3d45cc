/** Settings of the webhooks benchmark, from the environment (all optional). */

/**
 * - receiver: the baseline of the receiver alone (signed POSTs from a node client, keep-alive)
 * - api: the baseline of the API's write ceiling, no dispatcher (closed loop of single creates)
 * - steady: open loop at `rate` events/s with `webhooks` subscribed
 * - burst: bulk writes as fast as possible (not in the default set)
 */
export type CaseKind = 'receiver' | 'api' | 'steady' | 'burst';

/** One measured case: a fresh stack, `webhooks` subscriptions, and one kind of load. */
export interface CaseSpec {
  id: string;
  kind: CaseKind;
  webhooks: number;
  /** Events per second of the open-loop generator (steady cases). */
  rate: number;
  /** Saturation search steps only: the search it belongs to. */
  saturation?: boolean;
}

/** The search for the highest steady rate the pipeline keeps up with. */
export interface SaturationSettings {
  webhooks: number;
  /** Events per second tried in order (deliveries/s = rate x webhooks); the search stops at the first miss. */
  rates: number[];
  durationMs: number;
  /** A step passes when the p99 commit → receipt stays under this (and nothing piles up). */
  p99LimitMs: number;
}

export interface WebhooksBenchConfig {
  /** The dedicated database, dropped and recreated (and migrated) for every case. */
  databaseUrl: string;
  redisUrl: string;
  cases: CaseSpec[];
  /** Runs of every case (baselines and steady cases), interleaved; figures are their medians. */
  repeats: number;
  /** Null: no saturation search. */
  saturation: SaturationSettings | null;
  /** Measured seconds of a baseline (after a 1 s warm-up). */
  baselineMs: number;
  /** API baseline: writers of the closed loop. */
  apiConcurrency: number;
  /** Receiver baseline: requests in flight of the node client (its connections, keep-alive). */
  receiverConcurrency: number;
  /** Measured seconds of a steady case, after the warm-up. */
  durationMs: number;
  /** Seconds of the same load before the measured window; their events are delivered, not timed. */
  warmupMs: number;
  /** After the load: how long to wait for the last deliveries before counting them missing. */
  drainTimeoutMs: number;
  /** Burst cases: deliveries to produce (events = this / webhooks, rounded up). */
  burstDeliveries: number;
  /** Burst cases: writers sending bulk requests back to back. */
  burstConcurrency: number;
  /** Burst cases: records per bulk request (one event per request, whatever its size). */
  burstRecords: number;
  /** HTTP connections of the load generator to records-api. */
  connections: number;
  /** Steady cases: requests in flight beyond this are not sent (counted as skipped). */
  maxInFlight: number;
  /** How the receiver verifies signatures. */
  verify: 'standardwebhooks' | 'crypto';
  /** Service variables passed to the children as set here (DISPATCH_*, WEBHOOK_*), for the report. */
  tuning: Record<string, string>;
  /** Log level of the services (their output is kept and shown when a case fails). */
  serviceLogLevel: string;
  /** Extra node flags of the dispatcher child, such as `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
  dispatcherExecArgv: string[];
  /** Extra node flags of the records-api child. */
  apiExecArgv: string[];
  /** Do not start the dispatcher (only for 0-webhook cases: the API's own capacity). */
  withoutDispatcher: boolean;
  /** Wait until the records benchmark is not running before each case. */
  waitForOtherBench: boolean;
  /** Rewrite the "## webhooks" section of bench/README.md with the results. */
  writeReadme: boolean;
}

function numberFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${raw}`);
  return value;
}

/**
 * `receiver` and `api` (the baselines), `steady:1:500` (1 webhook, 500 events/s), `burst:50`
 * (50 webhooks, as fast as possible). `steady:0:500` writes with no webhook subscribed (the API,
 * its publish and the dispatcher reading events to nobody). `saturation:50` is read by loadConfig.
 */
export function parseCase(text: string): CaseSpec {
  if (text.trim() === 'receiver') return { id: 'receiver', kind: 'receiver', webhooks: 50, rate: 0 };
  if (text.trim() === 'api') return { id: 'api-ceiling', kind: 'api', webhooks: 0, rate: 0 };
  const [kind, webhooksText, rateText] = text.trim().split(':');
  const webhooks = Number(webhooksText);
  if ((kind !== 'steady' && kind !== 'burst') || !Number.isInteger(webhooks) || webhooks < 0) {
    throw new Error(
      `BENCH_WEBHOOKS_CASES: cannot read "${text}" (steady:<webhooks>:<events/s> or burst:<webhooks>)`,
    );
  }
  const rate = kind === 'steady' ? Number(rateText) : 0;
  if (kind === 'steady' && !(rate > 0)) throw new Error(`BENCH_WEBHOOKS_CASES: "${text}" needs a rate`);
  return {
    id: kind === 'steady' ? `steady-${webhooks}wh-${rate}eps` : `burst-${webhooks}wh`,
    kind,
    webhooks,
    rate,
  };
}

export const DEFAULT_CASES =
  'receiver,api,steady:1:100,steady:1:500,steady:50:40,steady:50:100,steady:50:500,saturation:50';
export const DEFAULT_SATURATION_RATES = '5,10,20,30,40,60,80,100';

function numberList(name: string, fallback: string): number[] {
  const values = (process.env[name] || fallback).split(',').map(Number);
  if (values.some((value) => !(value > 0))) throw new Error(`${name}: positive numbers, comma-separated`);
  return values;
}

/** The service variables a run may tune; whatever of them is set is passed on and reported. */
const TUNABLE = /^(DISPATCH_|WEBHOOK_(TIMEOUT_MS|RETRY_SCHEDULE|DISABLE_AFTER)$)/;

export function loadConfig(): WebhooksBenchConfig {
  const casesText = process.env.BENCH_WEBHOOKS_CASES || DEFAULT_CASES;
  const items = casesText.split(',').filter(Boolean);
  const saturationItem = items.find((item) => item.startsWith('saturation'));
  const cases = items.filter((item) => item !== saturationItem).map(parseCase);
  const saturationWebhooks = Number(saturationItem?.split(':')[1] ?? 50);
  if (saturationItem && !(Number.isInteger(saturationWebhooks) && saturationWebhooks > 0)) {
    throw new Error(`BENCH_WEBHOOKS_CASES: cannot read "${saturationItem}" (saturation:<webhooks>)`);
  }
  if (process.env.BENCH_WITHOUT_DISPATCHER === '1' && cases.some((c) => c.webhooks > 0)) {
    throw new Error('BENCH_WITHOUT_DISPATCHER=1 needs cases without webhooks (steady:0:<rate>)');
  }
  const tuning: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (TUNABLE.test(name) && value !== undefined && value !== '') tuning[name] = value;
  }
  const verify = process.env.BENCH_WEBHOOKS_VERIFY === 'crypto' ? 'crypto' : 'standardwebhooks';
  const flags = (name: string) => (process.env[name] ?? '').split(' ').filter(Boolean);
  return {
    databaseUrl:
      process.env.BENCH_WEBHOOKS_DATABASE_URL ??
      'postgresql://postgres@127.0.0.1:5432/recordbase_bench_webhooks',
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    cases,
    repeats: Math.round(numberFrom('BENCH_REPEATS', 3)),
    saturation: saturationItem
      ? {
          webhooks: saturationWebhooks,
          rates: numberList('BENCH_SATURATION_RATES', DEFAULT_SATURATION_RATES),
          durationMs: numberFrom('BENCH_SATURATION_DURATION_S', 10) * 1000,
          p99LimitMs: numberFrom('BENCH_SATURATION_P99_MS', 1000),
        }
      : null,
    baselineMs: numberFrom('BENCH_BASELINE_S', 8) * 1000,
    apiConcurrency: Math.round(numberFrom('BENCH_API_CONCURRENCY', 16)),
    receiverConcurrency: Math.round(numberFrom('BENCH_RECEIVER_CONCURRENCY', 64)),
    durationMs: numberFrom('BENCH_DURATION_S', 10) * 1000,
    warmupMs: numberFrom('BENCH_WARMUP_S', 2) * 1000,
    drainTimeoutMs: numberFrom('BENCH_DRAIN_TIMEOUT_S', 20) * 1000,
    burstDeliveries: Math.round(numberFrom('BENCH_BURST_DELIVERIES', 10_000)),
    burstConcurrency: Math.round(numberFrom('BENCH_BURST_CONCURRENCY', 16)),
    burstRecords: Math.round(numberFrom('BENCH_BURST_RECORDS', 10)),
    connections: Math.round(numberFrom('BENCH_CONNECTIONS', 64)),
    maxInFlight: Math.round(numberFrom('BENCH_MAX_IN_FLIGHT', 1000)),
    verify,
    tuning,
    serviceLogLevel: process.env.BENCH_SERVICE_LOG || 'warn',
    dispatcherExecArgv: flags('BENCH_DISPATCHER_EXEC_ARGV'),
    apiExecArgv: flags('BENCH_API_EXEC_ARGV'),
    withoutDispatcher: process.env.BENCH_WITHOUT_DISPATCHER === '1',
    waitForOtherBench: process.env.BENCH_WAIT_FOR_RECORDS !== '0',
    writeReadme: process.env.BENCH_WRITE_README !== '0' && !process.env.BENCH_WEBHOOKS_CASES,
  };
}
