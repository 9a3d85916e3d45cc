import { DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS } from '@recordbase/contracts/jobs';
import {
  commonEnvSchema,
  parseEnv,
  portSchema,
  queuePrefixSchema,
  type WithQueuePrefix,
  webhookAllowedCidrsSchema,
  webhookSecretKeySchema,
  withQueuePrefix,
} from '@recordbase/server-kit/env';
import { z } from 'zod';
import { parseDuration, parseRetrySchedule } from './retry-schedule';

/** Turns a parse function's exception into a zod issue that names the variable. */
function parsed<T>(parse: (text: string) => T) {
  return z.string().transform((text, context): T => {
    try {
      return parse(text);
    } catch (error) {
      context.addIssue({ code: 'custom', message: error instanceof Error ? error.message : String(error) });
      return z.NEVER;
    }
  });
}

const positiveInt = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

/** A duration longer than zero (`parseDuration` alone accepts `0s`). */
function parsePositiveDuration(text: string): number {
  const ms = parseDuration(text);
  if (ms <= 0) throw new Error(`"${text}" must be longer than zero`);
  return ms;
}

/** An empty variable (`FOO=` in a compose file) means "not set": the default applies. */
const optional = <S extends z.ZodType>(schema: S) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema);

export const webhookDispatcherEnvSchema = commonEnvSchema.extend({
  PORT: portSchema(3002),
  WEBHOOK_SECRET_KEY: webhookSecretKeySchema,
  /** Ranges deliveries may reach although private, loopback or link-local (tests: 127.0.0.1/32). */
  WEBHOOK_ALLOWED_CIDRS: webhookAllowedCidrsSchema,
  /** Waits before each retry (`5s,5m,...`, or `none`); its length plus one is the number of attempts. */
  WEBHOOK_RETRY_SCHEDULE: optional(
    parsed(parseRetrySchedule).default([...DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS]),
  ),
  /** A webhook failing without a success for this long is deactivated. */
  WEBHOOK_DISABLE_AFTER: optional(parsed(parseDuration).default(5 * 86_400_000)),
  /** Deadline of one attempt: a 2xx must arrive within it. */
  WEBHOOK_TIMEOUT_MS: optional(positiveInt(10_000)),
  /** HTTP attempts in flight at once in one process, all receivers together. */
  DISPATCH_CONCURRENCY: optional(positiveInt(100)),
  /**
   * Attempts in flight at once to one webhook. More wait for a slot, unless the receiver is stuck
   * (all slots taken, one attempt running for over a second): then they are put off (kept in
   * PostgreSQL, tried later), so a receiver that hangs never delays deliveries to the others.
   */
  DISPATCH_RECEIVER_CONCURRENCY: optional(positiveInt(16)),
  /** Events dispatched at once by one process (each sends its deliveries concurrently). */
  DISPATCH_EVENT_CONCURRENCY: optional(positiveInt(100)),
  /** How often PostgreSQL is swept for deliveries and events whose jobs Redis lost. */
  DISPATCH_SWEEP_INTERVAL_MS: optional(positiveInt(5000)),
  /** How far past due a delivery (or how old an undispatched event) must be before the sweep acts. */
  DISPATCH_SWEEP_GRACE_MS: optional(positiveInt(30_000)),
  /** BullMQ key prefix in Redis; unset, derived from the database name. */
  QUEUE_PREFIX: queuePrefixSchema,
  /** Age past which delivery attempts, and closed deliveries with none left, are deleted. */
  WEBHOOK_ATTEMPT_RETENTION: optional(parsed(parsePositiveDuration).default(30 * 86_400_000)),
  /** Age past which a dispatched outbox event with no open delivery is deleted: the change feed keeps events this long. */
  CHANGES_RETENTION: optional(parsed(parsePositiveDuration).default(7 * 86_400_000)),
  /** The same for record events, which record history reads (the contract's HISTORY_RETENTION). */
  HISTORY_RETENTION: optional(parsed(parsePositiveDuration).default(30 * 86_400_000)),
  /** Age past which a deleted record, table or field leaves the trash for good (the contract's TRASH_RETENTION). */
  TRASH_RETENTION: optional(parsed(parsePositiveDuration).default(7 * 86_400_000)),
  /** How often the retention pass runs. */
  DISPATCH_PRUNE_INTERVAL_MS: optional(positiveInt(60_000)),
});
export type WebhookDispatcherConfig = WithQueuePrefix<z.infer<typeof webhookDispatcherEnvSchema>>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): WebhookDispatcherConfig =>
  withQueuePrefix(parseEnv(webhookDispatcherEnvSchema, env));
