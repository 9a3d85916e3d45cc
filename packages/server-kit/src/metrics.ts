import type { RequestHandler } from 'express';
import client from 'prom-client';
import { isWorkerProcess, metricsOfEveryProcess, shareMetricsWithPrimary } from './processes';

export interface Metrics {
  registry: client.Registry;
  httpRequests: client.Histogram<'method' | 'route' | 'status'>;
  /** Records every response's duration, labelled by route pattern (never the raw path). */
  middleware: RequestHandler;
  handler: RequestHandler;
}

export function createMetrics(service: string): Metrics {
  const registry = new client.Registry();
  registry.setDefaultLabels({ service });
  client.collectDefaultMetrics({ register: registry });
  const httpRequests = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'Duration of HTTP requests',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  shareMetricsWithPrimary(registry);
  return {
    registry,
    httpRequests,
    middleware: (req, res, next) => {
      const end = httpRequests.startTimer();
      res.on('finish', () => {
        const route = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
        end({ method: req.method, route, status: String(res.statusCode) });
      });
      next();
    },
    handler: async (_req, res) => {
      // One of several processes answers for all of them.
      const text = isWorkerProcess() ? await metricsOfEveryProcess() : await registry.metrics();
      res.setHeader('content-type', registry.contentType);
      res.send(text);
    },
  };
}

/** What queue metrics need of a BullMQ `Queue` (its name and job counts), without importing BullMQ. */
export interface CountedQueue {
  readonly name: string;
  getJobCounts(...states: string[]): Promise<Record<string, number>>;
}

/** The job states `queue_jobs` reports; completed jobs are kept in bounded numbers, so not counted. */
export const QUEUE_JOB_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/**
 * `queue_jobs{queue, state}`: the jobs of each queue by state, read from Redis at each scrape.
 * A scrape while Redis is away reports no queue series (a gap, not a stale value) and still
 * answers the process's other metrics.
 */
export function registerQueueMetrics(
  registry: client.Registry,
  queues: () => readonly CountedQueue[],
): client.Gauge<'queue' | 'state'> {
  return new client.Gauge({
    name: 'queue_jobs',
    help: 'Jobs in each BullMQ queue by state (waiting, active, delayed, failed), at scrape time',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    // Every process reads the same counts from Redis: one of them is the answer, not their sum.
    aggregator: 'first',
    async collect() {
      this.reset();
      await Promise.all(
        queues().map(async (queue) => {
          try {
            const counts = await queue.getJobCounts(...QUEUE_JOB_STATES);
            for (const state of QUEUE_JOB_STATES) this.set({ queue: queue.name, state }, counts[state] ?? 0);
          } catch {
            // Redis away: this queue's series are left out of this scrape.
          }
        }),
      );
    },
  });
}
