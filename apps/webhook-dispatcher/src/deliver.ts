import { toDeliveredEventId } from '@recordbase/contracts/events';
import { decryptSecret, withTransaction } from '@recordbase/db';
import type { Logger } from '@recordbase/server-kit/logger';
import type pg from 'pg';
import type { DeliveryOutcome, DispatcherMetrics } from './metrics';
import type { DeliveryToEnqueue } from './queues';
import { nextRetryDelay } from './retry-schedule';
import { OPEN_STATUSES, SCHEDULE_COLUMNS, type ScheduleRow, toEnqueue } from './schedule';
import { cleanText, type SendOptions, type SendResult, sendWebhook } from './send';
import { signatureHeaders } from './signing';
import type { Cidr } from './ssrf';

/**
 * One attempt of one delivery, with its bookkeeping in PostgreSQL:
 *
 * 1. Claim: a single UPDATE takes the delivery if it is open (pending/retrying), due, and its
 *    webhook active; it counts the attempt and pushes `next_attempt_at` past the attempt's
 *    deadline (a lease). Two jobs for the same delivery cannot both claim it; a process dying
 *    mid-attempt leaves a delivery that falls due again when the lease ends, for the sweep.
 * 2. Build the body from the outbox row, sign it afresh, POST it (send.ts).
 * 3. Record the attempt, update the delivery (succeeded / retrying with the next due time /
 *    failed) and the webhook's health (last success, failure streak, deactivation) in one
 *    transaction, then enqueue the next attempt if there is one.
 */

export interface DeliverSettings {
  pool: pg.Pool;
  secretKey: Buffer;
  retryScheduleMs: readonly number[];
  disableAfterMs: number;
  timeoutMs: number;
  allowedCidrs: readonly Cidr[];
  logger: Logger;
  metrics: DispatcherMetrics;
  enqueue(deliveries: DeliveryToEnqueue[]): Promise<void>;
  /** For tests: the DNS resolver and clock of the SSRF guard and the jitter. */
  resolve?: SendOptions['resolve'];
  random?: () => number;
}

/** How far past its deadline a claimed attempt may run before the delivery is due again. */
export const LEASE_MARGIN_MS = 5000;
/** A receiver that does not even accept the connection within this is given up on sooner. */
export const CONNECT_TIMEOUT_MS = 5000;
/** Clock difference tolerated between this process (BullMQ delays) and PostgreSQL (due times). */
const DUE_TOLERANCE_MS = 2000;

interface ClaimedRow {
  id: string;
  attempts: number;
  event_id: string;
  webhook_id: number;
  url: string;
  secret_ciphertext: string;
  type: string | null;
  source: string | null;
  database_id: string | null;
  created_at: Date | null;
  data_json: string | null;
}

/** The delivered body; `data` is the outbox row's JSON text as PostgreSQL rendered it. */
export function buildBody(event: {
  eventId: string;
  type: string;
  createdAt: Date;
  dataJson: string;
  webhookId: number;
  databaseId: string;
  attempt: number;
  source: string;
}): string {
  const metadata = {
    webhookId: event.webhookId,
    baseId: event.databaseId,
    attempt: event.attempt,
    source: event.source,
  };
  return `{"id":${JSON.stringify(toDeliveredEventId(event.eventId))},"type":${JSON.stringify(event.type)},"timestamp":${JSON.stringify(event.createdAt.toISOString())},"data":${event.dataJson},"metadata":${JSON.stringify(metadata)}}`;
}

async function claim(settings: DeliverSettings, deliveryId: string): Promise<ClaimedRow | undefined> {
  const leaseMs = settings.timeoutMs + LEASE_MARGIN_MS;
  const result = await settings.pool.query<ClaimedRow>(
    `WITH claimed AS (
       UPDATE webhook_deliveries d
          SET attempts = d.attempts + 1,
              next_attempt_at = now() + $2 * interval '1 millisecond',
              updated_at = now()
         FROM webhooks w
        WHERE d.id = $1
          AND w.id = d.webhook_id
          AND w.active
          AND d.status IN ${OPEN_STATUSES}
          AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= now() + $3 * interval '1 millisecond')
        RETURNING d.id::text AS id, d.attempts, d.event_id, d.webhook_id, w.url, w.secret_ciphertext
     )
     SELECT c.*, e.type, e.source, e.database_id, e.created_at, e.data::text AS data_json
       FROM claimed c LEFT JOIN outbox_events e ON e.id = c.event_id`,
    [deliveryId, leaseMs, DUE_TOLERANCE_MS],
  );
  return result.rows[0];
}

/** An open delivery of an inactive webhook is closed without an attempt. */
async function closeIfWebhookInactive(pool: pg.Pool, deliveryId: string): Promise<boolean> {
  const result = await pool.query(
    `UPDATE webhook_deliveries d
        SET status = 'failed', next_attempt_at = NULL, updated_at = now()
       FROM webhooks w
      WHERE d.id = $1 AND w.id = d.webhook_id AND NOT w.active AND d.status IN ${OPEN_STATUSES}`,
    [deliveryId],
  );
  return (result.rowCount ?? 0) > 0;
}

async function attempt(settings: DeliverSettings, row: ClaimedRow): Promise<SendResult> {
  if (row.type === null || row.data_json === null || row.created_at === null) {
    return {
      ok: false,
      statusCode: null,
      durationMs: 0,
      errorKind: 'internal',
      error: 'the event no longer exists',
      responseExcerpt: null,
    };
  }
  let secret: string;
  try {
    secret = decryptSecret(settings.secretKey, row.secret_ciphertext);
  } catch {
    settings.logger.error(
      { webhookId: row.webhook_id },
      'cannot decrypt the webhook secret: is WEBHOOK_SECRET_KEY the key it was stored with?',
    );
    return {
      ok: false,
      statusCode: null,
      durationMs: 0,
      errorKind: 'internal',
      error: 'the signing secret could not be read',
      responseExcerpt: null,
    };
  }
  const body = buildBody({
    eventId: row.event_id,
    type: row.type,
    createdAt: row.created_at,
    dataJson: row.data_json,
    webhookId: row.webhook_id,
    databaseId: row.database_id ?? '',
    attempt: row.attempts,
    source: row.source ?? 'public_api',
  });
  return sendWebhook(row.url, signatureHeaders(secret, toDeliveredEventId(row.event_id), body), body, {
    timeoutMs: settings.timeoutMs,
    connectTimeoutMs: Math.min(CONNECT_TIMEOUT_MS, settings.timeoutMs),
    allowedCidrs: settings.allowedCidrs,
    ...(settings.resolve ? { resolve: settings.resolve } : {}),
  });
}

interface Recorded {
  outcome: DeliveryOutcome;
  next?: DeliveryToEnqueue;
  deactivated?: 'gone' | 'failing';
}

async function record(settings: DeliverSettings, row: ClaimedRow, result: SendResult): Promise<Recorded> {
  const gone = result.statusCode === 410;
  const permanent = result.errorKind === 'internal' && row.type === null;
  const delay =
    result.ok || gone || permanent
      ? null
      : nextRetryDelay(settings.retryScheduleMs, row.attempts, result.retryAfterMs, settings.random);
  return withTransaction(settings.pool, async (client) => {
    await client.query(
      `INSERT INTO webhook_delivery_attempts
         (delivery_id, attempt, status_code, duration_ms, error_kind, error, response_excerpt)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        row.id,
        row.attempts,
        result.statusCode,
        result.durationMs,
        result.errorKind,
        result.error === null ? null : cleanText(result.error),
        result.responseExcerpt,
      ],
    );

    let deactivated: Recorded['deactivated'];
    if (result.ok) {
      // Written at most once a minute per webhook while it is healthy, so a busy webhook's row
      // is not rewritten by every delivery.
      await client.query(
        `UPDATE webhooks SET last_success_at = now(), failing_since = NULL
          WHERE id = $1
            AND (failing_since IS NOT NULL OR last_success_at IS NULL OR last_success_at < now() - interval '1 minute')`,
        [row.webhook_id],
      );
    } else if (gone) {
      const updated = await client.query(
        `UPDATE webhooks SET active = false, failing_since = COALESCE(failing_since, now()), updated_at = now()
          WHERE id = $1 AND active`,
        [row.webhook_id],
      );
      if ((updated.rowCount ?? 0) > 0) deactivated = 'gone';
    } else {
      const updated = await client.query<{ deactivated: boolean }>(
        `WITH before AS (SELECT id, active, failing_since FROM webhooks WHERE id = $1 FOR UPDATE),
              judged AS (
                SELECT id, active,
                       COALESCE(failing_since, now()) AS failing_since,
                       active AND COALESCE(failing_since, now()) <= now() - $2 * interval '1 millisecond' AS expires
                  FROM before)
         UPDATE webhooks w
            SET failing_since = j.failing_since,
                active = w.active AND NOT j.expires,
                updated_at = CASE WHEN j.expires THEN now() ELSE w.updated_at END
           FROM judged j
          WHERE w.id = j.id
          RETURNING j.expires AS deactivated`,
        [row.webhook_id, settings.disableAfterMs],
      );
      if (updated.rows[0]?.deactivated) deactivated = 'failing';
    }

    const retry = delay !== null && deactivated === undefined;
    const status = result.ok ? 'succeeded' : retry ? 'retrying' : 'failed';
    const updated = await client.query<ScheduleRow>(
      `UPDATE webhook_deliveries d
          SET status = $3,
              last_status_code = $4,
              next_attempt_at = CASE WHEN $5::bigint IS NULL THEN NULL ELSE now() + $5 * interval '1 millisecond' END,
              updated_at = now()
        WHERE d.id = $1 AND d.attempts = $2 AND d.status IN ${OPEN_STATUSES}
        RETURNING ${SCHEDULE_COLUMNS}`,
      [row.id, row.attempts, status, result.statusCode, retry ? delay : null],
    );
    const outcome: DeliveryOutcome = result.ok ? 'succeeded' : retry ? 'retrying' : 'failed';
    const scheduled = updated.rows[0];
    return {
      outcome,
      ...(retry && scheduled ? { next: toEnqueue(scheduled) } : {}),
      ...(deactivated ? { deactivated } : {}),
    };
  });
}

/** Processes one delivery job. Throws only when the database cannot be reached. */
export async function deliverOnce(settings: DeliverSettings, deliveryId: string): Promise<void> {
  const row = await claim(settings, deliveryId);
  if (!row) {
    if (await closeIfWebhookInactive(settings.pool, deliveryId)) {
      settings.metrics.deliveries.inc({ outcome: 'skipped' });
    }
    // Otherwise: already delivered, not yet due, or claimed by another job. Nothing to do.
    return;
  }
  const result = await attempt(settings, row);
  const recorded = await record(settings, row, result);
  settings.metrics.deliveries.inc({ outcome: recorded.outcome });
  settings.metrics.deliveryDuration.observe(
    { outcome: result.ok ? 'success' : 'failure' },
    result.durationMs / 1000,
  );
  const context = {
    deliveryId: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    attempt: row.attempts,
    statusCode: result.statusCode,
    durationMs: result.durationMs,
    errorKind: result.errorKind,
    outcome: recorded.outcome,
  };
  if (result.ok) settings.logger.debug(context, 'webhook delivered');
  else settings.logger.info({ ...context, error: result.error }, 'webhook attempt failed');
  if (recorded.deactivated) {
    settings.logger.warn(
      { webhookId: row.webhook_id, reason: recorded.deactivated },
      recorded.deactivated === 'gone'
        ? 'webhook deactivated: the receiver answered 410 Gone'
        : 'webhook deactivated: its deliveries kept failing',
    );
  }
  if (recorded.next) {
    // The row is the truth: if this enqueue fails, the sweep enqueues the attempt when it is due.
    await settings.enqueue([recorded.next]).catch((error: unknown) => {
      settings.logger.warn(
        { err: error, deliveryId: row.id },
        'could not enqueue the next attempt; the sweep will',
      );
    });
  }
}
