import { z } from 'zod';
import { boundedString, uuidSchema } from './common';

/**
 * Shaped like BullMQ's BackoffOptions. `webhook-schedule` is the webhook dispatcher's own retry
 * schedule (WEBHOOK_RETRY_SCHEDULE, Retry-After and jitter), which it applies itself rather than
 * through BullMQ: see `webhookDeliveries` below.
 */
export type JobBackoff = { type: 'fixed' | 'exponential'; delay: number } | { type: 'webhook-schedule' };
export type JobRetryOptions = { attempts: number; backoff: JobBackoff };

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Waits before each retry of a webhook delivery (the production default; operators may
 * configure another). Its length plus one is the number of attempts.
 */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
] as const;

/**
 * Every queue, its one job name, payload and retry options. Payloads carry ids only: the worker
 * reads the rest from PostgreSQL, so no secret or record data ever sits in Redis.
 */
export const jobQueues = {
  /** One job per outbox event, published by records-api after its commit; the event id is the job id, so an event published twice is queued once. */
  events: {
    queueName: 'events',
    jobName: 'dispatch-event',
    payloadSchema: z.strictObject({ eventId: uuidSchema }),
    retry: { attempts: 10, backoff: { type: 'exponential', delay: SECOND } },
  },
  /**
   * Deliveries of one (event, webhook) pair. `retry` is the delivery's policy, applied by the
   * dispatcher and kept in PostgreSQL (webhook_deliveries.attempts and next_attempt_at): one BullMQ
   * job per HTTP attempt, the next attempt enqueued as a new delayed job when one fails, so a retry
   * survives a Redis that forgot it (the dispatcher's sweep re-enqueues due deliveries). `attempts`
   * counts HTTP attempts with the default schedule; operators may configure another schedule. Each
   * attempt is logged in the database.
   */
  webhookDeliveries: {
    queueName: 'webhook-deliveries',
    jobName: 'deliver-webhook',
    // The delivery row's bigint id, as a string.
    payloadSchema: z.strictObject({
      deliveryId: boundedString(20, { tooLong: 'must be a delivery id' }).regex(/^\d+$/, {
        error: 'must be a delivery id',
      }),
    }),
    retry: { attempts: DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS.length + 1, backoff: { type: 'webhook-schedule' } },
  },
  /** Not retried: an import that fails part-way is reported as failed rather than risk duplicate rows. */
  imports: {
    queueName: 'imports',
    jobName: 'run-import',
    payloadSchema: z.strictObject({ importId: uuidSchema }),
    retry: { attempts: 1, backoff: { type: 'fixed', delay: 0 } },
  },
} as const satisfies Record<
  string,
  { queueName: string; jobName: string; payloadSchema: z.ZodType; retry: JobRetryOptions }
>;

export type JobQueueKey = keyof typeof jobQueues;
export type JobQueueName = (typeof jobQueues)[JobQueueKey]['queueName'];
export type JobPayload<Key extends JobQueueKey> = z.infer<(typeof jobQueues)[Key]['payloadSchema']>;

/** Checks a payload read back from Redis before a worker acts on it. */
export function parseJobPayload<Key extends JobQueueKey>(key: Key, payload: unknown): JobPayload<Key> {
  return jobQueues[key].payloadSchema.parse(payload) as JobPayload<Key>;
}
