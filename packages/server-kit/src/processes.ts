import cluster, { type Worker } from 'node:cluster';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { availableParallelism } from 'node:os';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { listen } from './lifecycle';
import type { Logger } from './logger';

/**
 * A service on every core: one primary process that forks `processes` workers sharing one port
 * (node:cluster hands each new connection to the next worker), starts a worker again when one
 * dies, and stops them all on SIGTERM or SIGINT. State that must hold across the workers lives
 * in Redis or PostgreSQL already (rate limits, requests in flight, NOTIFY-invalidated caches), as
 * it must across replicas; what is bounded per process is given a share (processShare).
 *
 * The workers listen only once all of them are ready, so the first connections (a readiness
 * probe, a benchmark's keep-alive pool) are not all handed to whichever worker came up first.
 * `/metrics` answered by a worker is every worker's, gathered by the primary.
 */

/**
 * The cores a cgroup v2 CPU quota allows (`cpu.max`: "<quota> <period>", or "max <period>"),
 * rounded up; undefined when there is no quota. A container limited to one CPU on a host of 16
 * sees 16 in availableParallelism().
 */
export function quotaCores(cpuMax: string | undefined): number | undefined {
  const [quota, period] = (cpuMax ?? '').trim().split(/\s+/);
  const allowed = Number(quota) / Number(period);
  return Number.isFinite(allowed) && allowed > 0 ? Math.ceil(allowed) : undefined;
}

function readCpuMax(): string | undefined {
  try {
    return readFileSync('/sys/fs/cgroup/cpu.max', 'utf8');
  } catch {
    return undefined;
  }
}

/** The processes a service runs by default: one per core it may use, at most 16. */
export const defaultProcesses = (cpuMax = readCpuMax()): number =>
  Math.max(1, Math.min(16, availableParallelism(), quotaCores(cpuMax) ?? Number.POSITIVE_INFINITY));

/**
 * One process's part of a bound configured for the whole service (a pool, a key's connections),
 * rounded up so that each process gets at least one.
 */
export const processShare = (total: number, processes: number): number =>
  Math.max(1, Math.ceil(total / Math.max(1, processes)));

const PREPARED = 'recordbase:prepared';
const LISTEN = 'recordbase:listen';
const METRICS_REQUEST = 'recordbase:metrics-request';
const METRICS_RESPONSE = 'recordbase:metrics-response';

interface Message {
  type?: string;
  id?: number;
  text?: string;
  error?: string;
}

const RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 30_000;
/** A worker that ran this long died of something new: the next restart waits the shortest delay again. */
const HEALTHY_AFTER_MS = 60_000;

export interface PrimaryOptions {
  processes: number;
  logger: Logger;
  /** How long the workers may take to stop before they are killed (their own deadline is 10 s). */
  stopDeadlineMs?: number;
}

/** Runs this process as the primary of `processes` workers until they are all stopped. */
export function runPrimary(options: PrimaryOptions): void {
  const { processes, logger } = options;
  // Gathers the workers' registries for /metrics; each worker registers its own.
  const aggregator = new AggregatorRegistry();
  const startedAt = new Map<Worker, number>();
  const prepared = new Set<Worker>();
  let listening = false;
  let stopping = false;
  let restartDelay = RESTART_DELAY_MS;

  const fork = () => {
    const worker = cluster.fork();
    startedAt.set(worker, Date.now());
    worker.on('message', (message: Message) => onMessage(worker, message));
  };

  const onMessage = (worker: Worker, message: Message) => {
    if (message?.type === PREPARED) {
      if (listening) {
        worker.send({ type: LISTEN });
        return;
      }
      prepared.add(worker);
      if (prepared.size < processes) return;
      listening = true;
      for (const ready of prepared) ready.send({ type: LISTEN });
      logger.info({ processes }, 'every process is ready');
    } else if (message?.type === METRICS_REQUEST) {
      aggregator.clusterMetrics().then(
        (text) => worker.send({ type: METRICS_RESPONSE, id: message.id, text }),
        (error: unknown) =>
          worker.send({
            type: METRICS_RESPONSE,
            id: message.id,
            error: error instanceof Error ? error.message : String(error),
          }),
      );
    }
  };

  const living = () => Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined);

  const stopAll = (code: number) => {
    if (stopping) return;
    stopping = true;
    const workers = living();
    if (workers.length === 0) process.exit(code);
    for (const worker of workers) worker.process.kill('SIGTERM');
    setTimeout(() => {
      for (const worker of living()) worker.process.kill('SIGKILL');
      process.exit(1);
    }, options.stopDeadlineMs ?? 15_000).unref();
    cluster.on('exit', () => {
      if (living().length === 0) process.exit(code);
    });
  };

  cluster.on('exit', (worker, code, signal) => {
    prepared.delete(worker);
    const ranFor = Date.now() - (startedAt.get(worker) ?? Date.now());
    startedAt.delete(worker);
    if (stopping) return;
    if (!listening) {
      // A worker that cannot start would fail again: the service fails as one process would.
      logger.error({ code, signal }, 'a process exited before every process was ready; stopping');
      stopAll(1);
      return;
    }
    if (ranFor >= HEALTHY_AFTER_MS) restartDelay = RESTART_DELAY_MS;
    logger.error({ code, signal, restartInMs: restartDelay }, 'a process exited; starting another');
    setTimeout(() => {
      if (!stopping) fork();
    }, restartDelay);
    restartDelay = Math.min(restartDelay * 2, MAX_RESTART_DELAY_MS);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'stopping every process');
      stopAll(0);
    });
  }
  for (let index = 0; index < processes; index++) fork();
}

/**
 * listen(), in a worker only once the primary says every worker is ready; elsewhere at once.
 * The port it answers is the one asked for (a worker of port 0 is given the primary's choice).
 */
export async function listenWhenAllReady(server: Server, port: number, host?: string): Promise<number> {
  if (cluster.isWorker) {
    await new Promise<void>((resolve) => {
      const onMessage = (message: Message) => {
        if (message?.type !== LISTEN) return;
        process.off('message', onMessage);
        resolve();
      };
      process.on('message', onMessage);
      process.send?.({ type: PREPARED });
    });
  }
  return listen(server, port, host);
}

/** In a worker: gathers its registry into the primary's answers. Elsewhere: nothing. */
export function shareMetricsWithPrimary(registry: Registry): void {
  if (!cluster.isWorker) return;
  // Constructing one installs the worker's answer to the primary's requests.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}

let nextMetricsRequest = 0;

/** In a worker: every worker's metrics, as the primary gathers them (Prometheus text). */
export function metricsOfEveryProcess(timeoutMs = 10_000): Promise<string> {
  const id = ++nextMetricsRequest;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off('message', onMessage);
      reject(new Error('the primary process did not gather the metrics in time'));
    }, timeoutMs);
    const onMessage = (message: Message) => {
      if (message?.type !== METRICS_RESPONSE || message.id !== id) return;
      clearTimeout(timer);
      process.off('message', onMessage);
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve(message.text ?? '');
    };
    process.on('message', onMessage);
    process.send?.({ type: METRICS_REQUEST, id });
  });
}

export const isWorkerProcess = (): boolean => cluster.isWorker;
