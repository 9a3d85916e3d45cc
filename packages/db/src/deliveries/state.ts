/**
 * The states of a webhook delivery and how one moves between them. The dispatcher and records-api
 * both act on deliveries through this module and `statements.ts`; neither writes the rows by hand.
 *
 *   pending ──attempt──▶ succeeded
 *      │   ╲                ▲
 *      │    ╲──attempt──▶ retrying ──attempt──▶ failed
 *      │                    │  ▲ ╲______________▲
 *      └──(webhook inactive)┴──┘ (schedule exhausted, 410 Gone, webhook deactivated)
 *
 * An open delivery whose webhook no longer hears its event (other events, another table, other
 * fields) goes to `failed` when it comes up, unsent, its log saying why (`unsubscribed`).
 * `pending` is also where a delivery goes when records-api asks for a retry (from any state), and
 * where the dispatcher parks a delivery it could not start at once (its receiver was busy).
 */
export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Statuses of a delivery that still expects an attempt. */
export const OPEN_DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'retrying'];
/** The same, as SQL: `status IN ${OPEN_STATUSES_SQL}`. */
export const OPEN_STATUSES_SQL = `('pending', 'retrying')`;

/**
 * Why an attempt failed, as stored in `webhook_delivery_attempts.error_kind`. `unsubscribed`: not
 * sent, the webhook no longer hears the event.
 */
export const ATTEMPT_ERROR_KINDS = [
  'timeout',
  'network',
  'http',
  'ssrf',
  'invalid_url',
  'internal',
  'unsubscribed',
] as const;
export type AttemptErrorKind = (typeof ATTEMPT_ERROR_KINDS)[number];

/** What one attempt did to the webhook's health. */
export type WebhookHealth = 'succeeded' | 'failing' | 'gone';

export interface AttemptVerdict {
  status: Extract<DeliveryStatus, 'succeeded' | 'retrying' | 'failed'>;
  health: WebhookHealth;
}

/**
 * The transition after an attempt: a 2xx succeeds; 410 Gone fails for good and deactivates the
 * webhook; an event that no longer exists fails for good; anything else is retried while the
 * schedule has a step left (`retryDelayMs` not null), and fails otherwise.
 */
export function verdictOfAttempt(attempt: {
  ok: boolean;
  statusCode: number | null;
  eventGone?: boolean;
  retryDelayMs: number | null;
}): AttemptVerdict {
  if (attempt.ok) return { status: 'succeeded', health: 'succeeded' };
  if (attempt.statusCode === 410) return { status: 'failed', health: 'gone' };
  if (attempt.eventGone || attempt.retryDelayMs === null) return { status: 'failed', health: 'failing' };
  return { status: 'retrying', health: 'failing' };
}

/** Open deliveries may be attempted; closed ones only after a retry request reopens them. */
export function isOpenDeliveryStatus(status: string): boolean {
  return (OPEN_DELIVERY_STATUSES as readonly string[]).includes(status);
}
