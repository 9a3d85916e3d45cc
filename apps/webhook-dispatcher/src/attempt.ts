import { eventBodyJson, type StoredEvent, toDeliveredEventId } from '@recordbase/contracts/events';
import { type DeliveryOutcome, verdictOfAttempt } from '@recordbase/db';
import type { Cidr } from '@recordbase/server-kit/ssrf';
import type { ReceiverConnections } from './connections';
import { nextRetryDelay } from './retry-schedule';
import { cleanText, type SendOptions, type SendResult, sendWebhook } from './send';
import { signatureHeaders } from './signing';

/**
 * One attempt of one delivery, whichever path it comes from (an event's first attempts, or a
 * claimed retry): build the envelope, sign it afresh, POST it, and turn the answer into the
 * outcome to record.
 */

export interface AttemptSettings {
  timeoutMs: number;
  allowedCidrs: readonly Cidr[];
  retryScheduleMs: readonly number[];
  connections: ReceiverConnections;
  /** For tests: the DNS resolver of the SSRF guard and the jitter. */
  resolve?: SendOptions['resolve'];
  random?: () => number;
}

/** A receiver that does not even accept the connection within this is given up on sooner. */
export const CONNECT_TIMEOUT_MS = 5000;

export type EventToSend = StoredEvent;

export interface Target {
  webhookId: number;
  url: string;
  /** Null when the secret could not be decrypted. */
  signingKey: Buffer | null;
}

/** The delivered body: the event's one rendering (contracts/events.ts) with this delivery's metadata. */
export function buildBody(event: EventToSend & { webhookId: number; attempt: number }): string {
  return eventBodyJson(event, { webhookId: event.webhookId, attempt: event.attempt });
}

const internalFailure = (error: string): SendResult => ({
  ok: false,
  statusCode: null,
  durationMs: 0,
  errorKind: 'internal',
  error,
  responseExcerpt: null,
});

/** Sends attempt number `attempt`; `event` is null when the event no longer exists. */
export function sendAttempt(
  settings: AttemptSettings,
  event: EventToSend | null,
  target: Target,
  attempt: number,
): Promise<SendResult> {
  if (event === null) return Promise.resolve(internalFailure('the event no longer exists'));
  if (target.signingKey === null)
    return Promise.resolve(internalFailure('the signing secret could not be read'));
  const body = buildBody({ ...event, webhookId: target.webhookId, attempt });
  return sendWebhook(
    target.url,
    signatureHeaders(target.signingKey, toDeliveredEventId(event.eventId), body),
    body,
    {
      timeoutMs: settings.timeoutMs,
      connectTimeoutMs: Math.min(CONNECT_TIMEOUT_MS, settings.timeoutMs),
      allowedCidrs: settings.allowedCidrs,
      connections: settings.connections,
      ...(settings.resolve ? { resolve: settings.resolve } : {}),
    },
  );
}

/** The outcome of attempt `attempt` to record, with its retry delay when the schedule has a step left. */
export function outcomeOfAttempt(
  settings: Pick<AttemptSettings, 'retryScheduleMs' | 'random'>,
  delivery: { deliveryId: string | null; eventId: string; webhookId: number; eventType: string },
  attempt: number,
  result: SendResult,
  eventGone: boolean,
): DeliveryOutcome {
  const delay =
    result.ok || result.statusCode === 410 || eventGone
      ? null
      : nextRetryDelay(settings.retryScheduleMs, attempt, result.retryAfterMs, settings.random);
  const verdict = verdictOfAttempt({
    ok: result.ok,
    statusCode: result.statusCode,
    eventGone,
    retryDelayMs: delay,
  });
  return {
    ...delivery,
    attempt,
    result: {
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      errorKind: result.errorKind,
      error: result.error === null ? null : cleanText(result.error),
      responseExcerpt: result.responseExcerpt,
    },
    status: verdict.status,
    nextAttemptDelayMs: verdict.status === 'retrying' ? delay : null,
    health: eventGone ? null : verdict.health,
  };
}

/** A first attempt put off because its receiver is at its limit: a pending row, due after `delayMs`. */
export function postponedOutcome(
  delivery: { eventId: string; webhookId: number; eventType: string },
  delayMs: number,
): DeliveryOutcome {
  return {
    deliveryId: null,
    ...delivery,
    attempt: 0,
    result: null,
    status: 'pending',
    nextAttemptDelayMs: delayMs,
    health: null,
  };
}
