import type { ScheduledDelivery } from '@recordbase/db';
import {
  addDeliveryJobs,
  addEventJobs,
  openQueue,
  openWorker,
  producerConnection,
  workerConnection,
} from '@recordbase/queues';
import type { Logger } from '@recordbase/server-kit/logger';
import type { Worker } from 'bullmq';

/**
 * The dispatcher's side of BullMQ (@recordbase/queues owns the queues, their connections and
 * jobs): its producers of events (a sweep's re-publish) and deliveries, and its two workers. Every
 * job here can be recreated from the database (the sweep dispatches undispatched events and
 * re-enqueues due deliveries), so losing Redis loses time, not events.
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

  const producer = producerConnection(settings.redisUrl, 'webhook-dispatcher:producer');
  producer.on('error', warn('producer'));
  const consumer = workerConnection(settings.redisUrl, 'webhook-dispatcher:worker');
  consumer.on('error', warn('worker'));

  const eventsQueue = openQueue('events', producer, prefix);
  const deliveriesQueue = openQueue('webhookDeliveries', producer, prefix);
  for (const queue of [eventsQueue, deliveriesQueue]) queue.on('error', warn('queue'));

  const workers: Worker[] = [];
  let closed = false;

  return {
    async enqueueEvents(eventIds) {
      if (eventIds.length === 0) return;
      await withTimeout(addEventJobs(eventsQueue, eventIds), enqueueTimeoutMs, 'enqueueing events');
    },

    async eventQueued(eventId) {
      const state = await withTimeout(eventsQueue.getJobState(eventId), enqueueTimeoutMs, 'reading a job');
      return state !== 'completed' && state !== 'failed' && state !== 'unknown';
    },

    async enqueueDeliveries(deliveries) {
      if (deliveries.length === 0) return;
      await withTimeout(
        addDeliveryJobs(deliveriesQueue, deliveries),
        enqueueTimeoutMs,
        'enqueueing deliveries',
      );
    },

    startWorkers(handlers) {
      if (workers.length > 0 || closed) return;
      const eventWorker = openWorker(
        'events',
        consumer,
        prefix,
        ({ eventId }) => handlers.dispatchEvent(eventId),
        {
          concurrency: settings.eventConcurrency ?? 100,
          // A process killed mid-dispatch leaves its jobs active; with a short lock, another
          // process takes them up within ~15 s (the event is still undispatched in PostgreSQL).
          lockDuration: 10_000,
          stalledInterval: 5_000,
        },
      );
      const deliveryWorker = openWorker(
        'webhookDeliveries',
        consumer,
        prefix,
        ({ deliveryId }) => handlers.deliver(deliveryId),
        { concurrency: settings.deliveryConcurrency },
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
      await producer.ping();
    },

    async close(options = {}) {
      if (closed) return;
      closed = true;
      // A graceful close needs Redis (jobs in flight are moved to completed there): without it,
      // or past the deadline, close forcibly. The database still holds the truth of any delivery
      // cut short, and the sweep picks it up.
      const force = options.force === true || consumer.status !== 'ready';
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
      for (const connection of [consumer, producer]) {
        if (!finished || force || connection.status !== 'ready') connection.disconnect();
        else await connection.quit().catch(() => connection.disconnect());
      }
    },
  };
}
