import { jobQueues, parseJobPayload } from '@recordbase/contracts/jobs';
import type { ScheduledDelivery } from '@recordbase/db';
import type { Logger } from '@recordbase/server-kit/logger';
import { type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';

/**
 * The dispatcher's side of BullMQ. BullMQ is the transport, PostgreSQL the truth: every job here
 * can be recreated from the database (the sweep dispatches undispatched events and re-enqueues
 * due deliveries), so losing Redis loses time, not events. Events are published by records-api
 * (apps/records-api/src/events/publisher.ts) with the same job options as `enqueueEvents`.
 *
 * Connections follow BullMQ's advice: workers on a connection with `maxRetriesPerRequest: null`
 * (they block and must wait out a reconnect), producers with `enableOfflineQueue: false` so an
 * enqueue fails at once while Redis is away (the rows wait in PostgreSQL for the sweep instead of
 * holding a transaction open). Finished jobs are kept in bounded numbers.
 */

export type DeliveryToEnqueue = ScheduledDelivery;

export interface JobHandlers {
  dispatchEvent(eventId: string): Promise<void>;
  deliver(deliveryId: string): Promise<void>;
}

export interface QueueSettings {
  redisUrl: string;
  prefix: string;
  logger: Logger;
  /** Deliveries processed in parallel by this process. */
  deliveryConcurrency: number;
  /** Events dispatched in parallel by this process. */
  eventConcurrency?: number;
  /** An enqueue that takes longer fails (and is retried from PostgreSQL). */
  enqueueTimeoutMs?: number;
}

const KEEP_COMPLETED = { count: 1000 };
const KEEP_FAILED = { count: 5000 };

export interface DispatchQueues {
  /** Hands events to the event workers; the event id is the job id, so a second publish is a no-op. */
  enqueueEvents(eventIds: readonly string[]): Promise<void>;
  /** Whether an event's job waits or runs. */
  eventQueued(eventId: string): Promise<boolean>;
  /**
   * Enqueues one job per scheduled attempt, deduplicated while an earlier job for the same
   * (delivery, attempts, due time) still waits or runs; once that one finished, a new one may
   * be added (the sweep relies on it).
   */
  enqueueDeliveries(deliveries: readonly DeliveryToEnqueue[]): Promise<void>;
  startWorkers(handlers: JobHandlers): void;
  workersRunning(): boolean;
  ping(): Promise<void>;
  /**
   * Workers (waiting for running jobs unless forced), then queues, then the Redis connections.
   * Forced when Redis is unreachable or after `timeoutMs` (default 15 s).
   */
  close(options?: { force?: boolean; timeoutMs?: number }): Promise<void>;
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export function createQueues(settings: QueueSettings): DispatchQueues {
  const { logger, prefix } = settings;
  const enqueueTimeoutMs = settings.enqueueTimeoutMs ?? 5000;
  let lastRedisWarning = 0;
  const warn = (connection: string) => (error: Error) => {
    // A Redis outage raises an error per reconnect attempt; one line every 10 s says enough.
    const now = Date.now();
    if (now - lastRedisWarning < 10_000) return;
    lastRedisWarning = now;
    logger.warn({ err: error, connection }, 'redis connection error');
  };

  const producerConnection = new Redis(settings.redisUrl, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectionName: 'webhook-dispatcher:producer',
  });
  producerConnection.on('error', warn('producer'));
  const workerConnection = new Redis(settings.redisUrl, {
    maxRetriesPerRequest: null,
    connectionName: 'webhook-dispatcher:worker',
  });
  workerConnection.on('error', warn('worker'));

  const eventsQueue = new Queue(jobQueues.events.queueName, {
    connection: producerConnection,
    prefix,
    defaultJobOptions: { removeOnComplete: KEEP_COMPLETED, removeOnFail: KEEP_FAILED },
  });
  const deliveriesQueue = new Queue(jobQueues.webhookDeliveries.queueName, {
    connection: producerConnection,
    prefix,
    defaultJobOptions: { removeOnComplete: KEEP_COMPLETED, removeOnFail: KEEP_FAILED },
  });
  for (const queue of [eventsQueue, deliveriesQueue]) queue.on('error', warn('queue'));

  const workers: Worker[] = [];
  let closed = false;

  return {
    async enqueueEvents(eventIds) {
      if (eventIds.length === 0) return;
      const { jobName, retry } = jobQueues.events;
      await withTimeout(
        eventsQueue.addBulk(
          eventIds.map((eventId) => ({
            name: jobName,
            data: parseJobPayload('events', { eventId }),
            opts: { jobId: eventId, attempts: retry.attempts, backoff: retry.backoff },
          })),
        ),
        enqueueTimeoutMs,
        'enqueueing events',
      );
    },

    async eventQueued(eventId) {
      const state = await withTimeout(eventsQueue.getJobState(eventId), enqueueTimeoutMs, 'reading a job');
      return state !== 'completed' && state !== 'failed' && state !== 'unknown';
    },

    async enqueueDeliveries(deliveries) {
      if (deliveries.length === 0) return;
      const { jobName } = jobQueues.webhookDeliveries;
      await withTimeout(
        deliveriesQueue.addBulk(
          deliveries.map((delivery) => ({
            name: jobName,
            data: parseJobPayload('webhookDeliveries', { deliveryId: delivery.deliveryId }),
            opts: {
              delay: Math.max(0, Math.round(delivery.delayMs)),
              deduplication: { id: `${delivery.deliveryId}:${delivery.attempts}:${delivery.dueAtMs}` },
              // One job per HTTP attempt; the dispatcher schedules the next attempt itself. A job
              // that cannot run at all (database away) fails and the sweep enqueues it again.
              attempts: 1,
            },
          })),
        ),
        enqueueTimeoutMs,
        'enqueueing deliveries',
      );
    },

    startWorkers(handlers) {
      if (workers.length > 0 || closed) return;
      const common = {
        connection: workerConnection,
        prefix,
        removeOnComplete: KEEP_COMPLETED,
        removeOnFail: KEEP_FAILED,
      };
      const eventWorker = new Worker(
        jobQueues.events.queueName,
        async (job: Job) => {
          const { eventId } = parseJobPayload('events', job.data);
          await handlers.dispatchEvent(eventId);
        },
        {
          ...common,
          concurrency: settings.eventConcurrency ?? 100,
          // A process killed mid-dispatch leaves its jobs active; with a short lock, another
          // process takes them up within ~15 s (the event is still undispatched in PostgreSQL).
          lockDuration: 10_000,
          stalledInterval: 5_000,
        },
      );
      const deliveryWorker = new Worker(
        jobQueues.webhookDeliveries.queueName,
        async (job: Job) => {
          const { deliveryId } = parseJobPayload('webhookDeliveries', job.data);
          await handlers.deliver(deliveryId);
        },
        { ...common, concurrency: settings.deliveryConcurrency },
      );
      for (const worker of [eventWorker, deliveryWorker]) {
        worker.on('error', warn('worker'));
        worker.on('failed', (job, error) => {
          logger.warn({ err: error, queue: worker.name, jobId: job?.id }, 'job failed');
        });
        workers.push(worker);
      }
    },

    workersRunning() {
      return workers.length > 0 && workers.every((worker) => worker.isRunning());
    },

    async ping() {
      await producerConnection.ping();
    },

    async close(options = {}) {
      if (closed) return;
      closed = true;
      // A graceful close needs Redis (jobs in flight are moved to completed there): without it,
      // or past the deadline, close forcibly. The database still holds the truth of any delivery
      // cut short, and the sweep picks it up.
      const force = options.force === true || workerConnection.status !== 'ready';
      const closing = (async () => {
        await Promise.all(workers.map((worker) => worker.close(force)));
        await Promise.all([eventsQueue.close(), deliveriesQueue.close()]);
      })();
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        closing.then(
          () => true,
          () => true,
        ),
        new Promise<false>((resolve) => {
          timer = setTimeout(() => resolve(false), options.timeoutMs ?? 15_000);
        }),
      ]);
      clearTimeout(timer);
      if (!finished) logger.warn('queues did not close in time; dropping their Redis connections');
      for (const connection of [workerConnection, producerConnection]) {
        if (!finished || force || connection.status !== 'ready') connection.disconnect();
        else await connection.quit().catch(() => connection.disconnect());
      }
    },
  };
}
