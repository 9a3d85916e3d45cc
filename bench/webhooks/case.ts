import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ApiClient } from '../lib/api';
import { deleteQueueKeys, recreateDatabase } from '../lib/database';
import { waitForOtherBenchmark } from '../lib/proc';
import { type Receiver, type ReceiverStats, startReceiver } from '../lib/receiver';
import { type BenchStack, newQueuePrefix, startBenchStack } from '../lib/stack';
import { analyze, type DeliveryFigures, deliveryKey } from './analyze';
import type { CaseSpec, WebhooksBenchConfig } from './config';
import { type Counters, probeCounters } from './counters';
import { type CpuUsage, probeCpu } from './cpu';
import { burstLoad, closedLoad, type LoadResult, steadyLoad, WriteClient } from './load';
import { counted, countedLaunch, type Service } from './services';
import { type Backlog, backlog, type StageFigures, stageBreakdown } from './stages';

/**
 * One case: a freshly created and migrated database, records-api and webhook-dispatcher started
 * as child processes (own BullMQ prefix), the receiver, a base with one table, `webhooks`
 * subscriptions to record.created (each at its own receiver path), one write to check the whole
 * path, then the load, the wait for the tail, and the figures.
 */

export interface CaseResult {
  spec: CaseSpec;
  /** 1-based run of this case (figures are medians over the runs). */
  repeat: number;
  /** Measured seconds of the run (steady and api cases). */
  durationMs: number;
  /** Load settings as run. */
  load: { rate?: number; events?: number; concurrency?: number; recordsPerRequest?: number };
  figures: DeliveryFigures;
  stages: StageFigures;
  /** Steady: over the measured window. Burst: from the first write to the last receipt. */
  cpu: CpuUsage;
  /** Redis and PostgreSQL work over the same window. */
  counters: Counters;
  /** Deliveries received and events written within that window, for per-delivery figures. */
  window: { deliveries: number; events: number };
  /** What PostgreSQL held when the load ended, and after the wait for the tail. */
  backlogAtLoadEnd: Backlog;
  backlogAtEnd: Backlog;
  receiver: ReceiverStats;
  drainSeconds: number;
  drainTimedOut: boolean;
  /** Warnings and errors the services logged (pino level >= 40). */
  serviceLog: Record<string, { count: number; first?: string }>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function logSummary(services: Service[]): CaseResult['serviceLog'] {
  const summary: CaseResult['serviceLog'] = {};
  for (const service of services) {
    const lines = service
      .output()
      .split('\n')
      .filter((line) => {
        const level = /"level":(\d+)/.exec(line)?.[1];
        return level ? Number(level) >= 40 : /error|warn/i.test(line);
      });
    summary[service.name] = {
      count: lines.length,
      ...(lines[0] ? { first: lines[0].slice(0, 500) } : {}),
    };
  }
  return summary;
}

/** Counts distinct expected deliveries received so far, incrementally. */
function progress(receiver: Receiver, expectedKeys: () => Set<string>) {
  const seen = new Set<string>();
  let index = 0;
  return () => {
    const keys = expectedKeys();
    for (; index < receiver.receipts.length; index++) {
      const receipt = receiver.receipts[index]!;
      const key = deliveryKey(receipt[2], receipt[1]);
      if (keys.has(key)) seen.add(key);
    }
    return seen.size;
  };
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

export async function runCase(
  config: WebhooksBenchConfig,
  spec: CaseSpec,
  repeat: number,
  durationMs = config.durationMs,
): Promise<CaseResult> {
  if (config.waitForOtherBench) await waitForOtherBenchmark();
  const databaseSeconds = await recreateDatabase(config.databaseUrl);
  // In memory where there is /dev/shm: the children rewrite their counts twice a second.
  const countDir = mkdtempSync(
    join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'bench-webhooks-counts-'),
  );
  const withoutDispatcher = config.withoutDispatcher || spec.kind === 'api';
  const queuePrefix = newQueuePrefix('webhooks');
  let stack: BenchStack | undefined;
  const services: Service[] = [];
  const receiver = await startReceiver(config.verify);
  const pool = new pg.Pool({
    connectionString: config.databaseUrl,
    max: 2,
    application_name: 'bench-webhooks',
  });
  let client: WriteClient | undefined;
  try {
    stack = await startBenchStack({
      databaseUrl: config.databaseUrl,
      redisUrl: config.redisUrl,
      queuePrefix,
      logLevel: config.serviceLogLevel,
      tuning: config.tuning,
      execArgv: { 'records-api': config.apiExecArgv, 'webhook-dispatcher': config.dispatcherExecArgv },
      launch: countedLaunch(countDir),
      services: withoutDispatcher ? ['records-api'] : ['records-api', 'webhook-dispatcher'],
    });
    const api = counted(stack.service('records-api'), countDir);
    services.push(api);
    const dispatcher = withoutDispatcher ? undefined : counted(stack.service('webhook-dispatcher'), countDir);
    if (dispatcher) services.push(dispatcher);
    console.log(
      `  database recreated and migrated in ${databaseSeconds.toFixed(1)} s; records-api pid ${api.pid}, dispatcher pid ${dispatcher?.pid ?? 'none'}, receiver pid ${receiver.pid}`,
    );

    const http = new ApiClient(`http://127.0.0.1:${api.port}`, stack.rootKey);
    const base = await http.expect<{ id: string }>(201, 'POST', '/bases', {
      name: `webhooks bench ${spec.id}`,
      tables: [
        {
          name: 'Events',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'Seq', type: 'number' },
          ],
        },
      ],
    });
    const hooks: { index: number; webhookId: number; secret: string }[] = [];
    for (let index = 0; index < spec.webhooks; index++) {
      const created = await http.expect<{ id: number; secret: string }>(
        201,
        'POST',
        `/bases/${base.id}/webhooks`,
        {
          url: receiver.urlFor(index),
          events: ['record.created'],
        },
      );
      hooks.push({ index, webhookId: created.id, secret: created.secret });
    }
    await receiver.register(hooks);
    const webhookIds = hooks.map((hook) => hook.webhookId);
    const recordsPath = `/api/v1/bases/${base.id}/tables/Events/records`;
    client = new WriteClient(`http://127.0.0.1:${api.port}`, stack.rootKey, config.connections, recordsPath);

    // One write through the whole path before measuring: it must arrive, at every webhook.
    const probeId = await client.create([{ Name: 'probe', Seq: -1 }], false);
    const probeKeys = new Set(webhookIds.map((id) => deliveryKey(probeId, id)));
    const probeProgress = progress(receiver, () => probeKeys);
    await waitFor(() => probeProgress() === probeKeys.size, 60_000, 'the probe event at every webhook');
    await receiver.flush();
    receiver.receipts.length = 0;

    const pids = {
      'load generator': process.pid,
      receiver: receiver.pid,
      'records-api': api.pid,
      dispatcher: dispatcher?.pid ?? 0,
    };
    let load: LoadResult;
    let cpu: CpuUsage | undefined;
    let counters: Counters | undefined;
    const startProbes = async () => {
      const probes = await Promise.all([
        probeCpu(pool, pids),
        probeCounters(config.redisUrl, pool, services),
      ]);
      return async () => {
        cpu = await probes[0].stop();
        counters = await probes[1].stop();
      };
    };
    let loadSettings: CaseResult['load'];
    const expectedKeys = new Set<string>();
    let keyedWrites = 0;
    const expected = () => {
      for (; keyedWrites < (load?.writes.length ?? 0); keyedWrites++) {
        for (const id of webhookIds) expectedKeys.add(deliveryKey(load.writes[keyedWrites]!.recordId, id));
      }
      return expectedKeys;
    };
    let stopBurstProbes: (() => Promise<void>) | undefined;
    if (spec.kind === 'steady') {
      loadSettings = { rate: spec.rate };
      // CPU over the measured window only: the probe starts when the warm-up ends.
      const windowProbes = sleep(config.warmupMs).then(startProbes);
      load = await steadyLoad(client, {
        rate: spec.rate,
        warmupMs: config.warmupMs,
        durationMs,
        maxInFlight: config.maxInFlight,
      });
      await (await windowProbes)();
    } else if (spec.kind === 'api') {
      loadSettings = { concurrency: config.apiConcurrency };
      const windowProbes = sleep(config.warmupMs).then(startProbes);
      load = await closedLoad(client, {
        concurrency: config.apiConcurrency,
        warmupMs: config.warmupMs,
        durationMs,
      });
      await (await windowProbes)();
    } else {
      const events = Math.ceil(config.burstDeliveries / Math.max(1, spec.webhooks));
      loadSettings = { events, concurrency: config.burstConcurrency, recordsPerRequest: config.burstRecords };
      stopBurstProbes = await startProbes();
      load = await burstLoad(client, {
        events,
        concurrency: config.burstConcurrency,
        records: config.burstRecords,
      });
    }
    const backlogAtLoadEnd = await backlog(pool);
    console.log(
      `  load done: ${load.writes.length} events written (${load.errors} errors, ${load.skipped} skipped); waiting for the tail ...`,
    );

    const drainStarted = Date.now();
    const expectedCount = load.writes.length * webhookIds.length;
    const drained = progress(receiver, expected);
    let drainTimedOut = false;
    let lastReport = Date.now();
    while (drained() < expectedCount) {
      if (Date.now() - drainStarted > config.drainTimeoutMs) {
        drainTimedOut = true;
        break;
      }
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        console.log(`    ${drained()} of ${expectedCount} deliveries received`);
      }
      await sleep(200);
    }
    const drainSeconds = (Date.now() - drainStarted) / 1000;
    await stopBurstProbes?.();
    // Late duplicates (a retried or re-swept delivery) would arrive within moments.
    if (!drainTimedOut) await sleep(2000);
    const receiverStats = await receiver.flush();
    const figures = analyze(spec.kind === 'burst' ? 'burst' : 'steady', load, receiver.receipts, webhookIds);
    const stages = await stageBreakdown(pool, receiver.receipts, load.measuredFrom);
    const backlogAtEnd = await backlog(pool);
    return {
      spec,
      repeat,
      durationMs,
      load: loadSettings,
      figures,
      stages,
      cpu: cpu!,
      counters: counters!,
      window:
        spec.kind !== 'burst'
          ? {
              deliveries: Math.round(figures.deliveriesPerSecond * cpu!.seconds),
              events: Math.round(figures.eventsPerSecond * cpu!.seconds),
            }
          : { deliveries: figures.received, events: figures.events },
      backlogAtLoadEnd,
      backlogAtEnd,
      receiver: receiverStats,
      drainSeconds,
      drainTimedOut,
      serviceLog: logSummary(services),
    };
  } catch (error) {
    for (const service of services) {
      console.error(`--- ${service.name} output (last 3000 characters):\n${service.output().slice(-3000)}`);
    }
    throw error;
  } finally {
    await client?.close();
    await stack?.stop();
    await receiver.close();
    await pool.end();
    await deleteQueueKeys(config.redisUrl, queuePrefix);
    rmSync(countDir, { recursive: true, force: true });
  }
}
