import { type JobPayload, type JobQueueKey, jobQueues, parseJobPayload } from '@recordbase/contracts/jobs';
import { type Job, Queue, Worker, type WorkerOptions } from 'bullmq';
import { Redis } from 'ioredis';

/**
 * Every BullMQ queue of the system, its connections, its jobs' options and the one way each job
 * is added. The jobs themselves (names, payloads, retries) are contracts (`jobQueues`); what is
 * BullMQ's is here. BullMQ is the transport, PostgreSQL the truth: every job can be recreated
 * from the database by a sweep, so losing Redis loses time, not work.
 *
 * Connections follow BullMQ's advice: workers on a connection with `maxRetriesPerRequest: null`
 * (they block and must wait out a reconnect), producers with `enableOfflineQueue: false` so an
 * add fails at once while Redis is away (the rows wait in PostgreSQL for a sweep instead of
 * holding a request or a transaction).
 */

/** Finished jobs each queue keeps, for the dashboard and for debugging: bounded, never all. */
const RETENTION: Record<
  JobQueueKey,
  { removeOnComplete: { count: number }; removeOnFail: { count: number } }
> = {
  events: { removeOnComplete: { count: 1000 }, removeOnFail: { count: 5000 } },
  webhookDeliveries: { removeOnComplete: { count: 1000 }, removeOnFail: { count: 5000 } },
  imports: { removeOnComplete: { count: 1000 }, removeOnFail: { count: 1000 } },
};

/** A connection for adding jobs or reading queues: fails at once while Redis is away. */
export function producerConnection(redisUrl: string, connectionName: string): Redis {
  return new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectionName });
}

/** A connection for workers, which block on Redis and wait out a reconnect. */
export function workerConnection(redisUrl: string, connectionName: string): Redis {
  return new Redis(redisUrl, { maxRetriesPerRequest: null, connectionName });
}

/** The queue of `key` under the installation's `prefix`, keeping the queue's bounded history. */
export function openQueue(key: JobQueueKey, connection: Redis, prefix: string): Queue {
  return new Queue(jobQueues[key].queueName, {
    connection,
    prefix,
    defaultJobOptions: RETENTION[key],
  });
}

/** Every queue of the system, to read (the operators' dashboard, the queue metric). */
export function openEveryQueue(connection: Redis, prefix: string): Queue[] {
  return (Object.keys(jobQueues) as JobQueueKey[]).map((key) => openQueue(key, connection, prefix));
}

/**
 * A worker taking `key`'s jobs; `process` gets the job's payload checked against its contract
 * before acting on it.
 */
export function openWorker<Key extends JobQueueKey>(
  key: Key,
  connection: Redis,
  prefix: string,
  process: (payload: JobPayload<Key>, job: Job) => Promise<void>,
  options: Omit<WorkerOptions, 'connection' | 'prefix'> = {},
): Worker {
  return new Worker(jobQueues[key].queueName, (job: Job) => process(parseJobPayload(key, job.data), job), {
    ...RETENTION[key],
    ...options,
    connection,
    prefix,
  });
}

/**
 * Queues events for the dispatcher, one job per outbox event: the event id is the job id, so an
 * event published twice (after its commit, and again by a sweep) is queued once.
 */
export async function addEventJobs(queue: Queue, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  const { jobName, retry } = jobQueues.events;
  await queue.addBulk(
    eventIds.map((eventId) => ({
      name: jobName,
      data: parseJobPayload('events', { eventId }),
      opts: { jobId: eventId, attempts: retry.attempts, backoff: retry.backoff },
    })),
  );
}

/** One webhook delivery's next HTTP attempt, due `delayMs` from now. */
export interface DeliveryJob {
  deliveryId: string;
  /** The attempts made so far and when this one is due: with the id, what makes a job unique. */
  attempts: number;
  dueAtMs: number;
  delayMs: number;
}

/**
 * Queues one job per scheduled attempt, deduplicated while an earlier job for the same
 * (delivery, attempts, due time) still waits or runs; once that one finished, a new one may be
 * added (the dispatcher's sweep relies on it).
 */
export async function addDeliveryJobs(queue: Queue, deliveries: readonly DeliveryJob[]): Promise<void> {
  if (deliveries.length === 0) return;
  const { jobName } = jobQueues.webhookDeliveries;
  await queue.addBulk(
    deliveries.map((delivery) => ({
      name: jobName,
      data: parseJobPayload('webhookDeliveries', { deliveryId: delivery.deliveryId }),
      opts: {
        delay: Math.max(0, Math.round(delivery.delayMs)),
        deduplication: { id: `${delivery.deliveryId}:${delivery.attempts}:${delivery.dueAtMs}` },
        // One job per HTTP attempt; the dispatcher schedules the next attempt itself. A job that
        // cannot run at all (database away) fails and the sweep enqueues it again.
        attempts: 1,
      },
    })),
  );
}

/** Queues an import's run: the import's id is the job's, so an import queued twice runs once. */
export async function addImportJob(queue: Queue, importId: string): Promise<void> {
  const { jobName, retry } = jobQueues.imports;
  await queue.add(jobName, parseJobPayload('imports', { importId }), {
    jobId: importId,
    attempts: retry.attempts,
    backoff: retry.backoff,
  });
}
