import type pg from 'pg';
import { DELIVERIES_CHANNEL, type ViewMembers } from '../outbox/append';
import { joinEventSql, markDispatchedSql } from '../outbox/dispatch';
import type { AttemptErrorKind, DeliveryStatus, WebhookHealth } from './state';
import { OPEN_STATUSES_SQL } from './state';

/**
 * Every statement that writes webhook deliveries. Each is a single statement (atomic without
 * BEGIN/COMMIT), and the dispatcher's writes are batched: one round trip records the outcomes of
 * many attempts, the deliveries they create, the webhooks' health and the events they complete.
 */

type Queryable = Pick<pg.Pool, 'query'>;

/** Reading a delivery's schedule (aliased `d`), with the delay computed on PostgreSQL's clock. */
export const SCHEDULE_COLUMNS = `d.id::text AS delivery_id, d.attempts,
  COALESCE(round(extract(epoch FROM d.next_attempt_at) * 1000), 0)::bigint AS due_ms,
  GREATEST(0, COALESCE(ceil(extract(epoch FROM d.next_attempt_at - now()) * 1000), 0))::bigint AS delay_ms`;

export interface ScheduleRow {
  delivery_id: string;
  attempts: number;
  due_ms: string;
  delay_ms: string;
}

/** One scheduled attempt of a delivery: (id, attempts, due time) names it uniquely. */
export interface ScheduledDelivery {
  deliveryId: string;
  attempts: number;
  dueAtMs: number;
  /** Milliseconds until due (0 when due). */
  delayMs: number;
}

export function toScheduled(row: ScheduleRow): ScheduledDelivery {
  return {
    deliveryId: row.delivery_id,
    attempts: row.attempts,
    dueAtMs: Number(row.due_ms),
    delayMs: Number(row.delay_ms),
  };
}

/** What one HTTP attempt returned, as stored. */
export interface AttemptRecord {
  statusCode: number | null;
  durationMs: number;
  errorKind: AttemptErrorKind | null;
  error: string | null;
  responseExcerpt: string | null;
}

/** The outcome of one delivery to record: an attempt made, or a first attempt put off. */
export interface DeliveryOutcome {
  /** Null for the first attempt of a delivery that has no row yet (the dispatcher sends first). */
  deliveryId: string | null;
  eventId: string;
  webhookId: number;
  eventType: string;
  /** The attempt's number (the claimed `attempts` for an existing row); 0 when put off. */
  attempt: number;
  /** Null when no attempt was made (put off: the receiver was busy). */
  result: AttemptRecord | null;
  status: DeliveryStatus;
  /** Wait before the next attempt (retrying or put off). */
  nextAttemptDelayMs: number | null;
  health: WebhookHealth | null;
}

export interface RecordedDelivery {
  /** Index of the outcome in the input. */
  index: number;
  deliveryId: string;
  /** The status written: `retrying` becomes `failed` when this very batch deactivated the webhook. */
  status: DeliveryStatus;
  /** The next attempt, for a delivery left open. */
  next: ScheduledDelivery | null;
}

export interface RecordResult {
  deliveries: RecordedDelivery[];
  /** Webhooks this batch deactivated, and why. */
  deactivated: { webhookId: number; reason: 'gone' | 'failing' }[];
}

/**
 * Per webhook, what a batch of attempts says about its health: gone wins, then a success (the
 * streak ends), then failing. One row per webhook, since one statement cannot update a row twice.
 */
function healthByWebhook(outcomes: readonly DeliveryOutcome[]): Map<number, WebhookHealth> {
  const rank: Record<WebhookHealth, number> = { failing: 0, succeeded: 1, gone: 2 };
  const byWebhook = new Map<number, WebhookHealth>();
  for (const { webhookId, health } of outcomes) {
    if (health === null) continue;
    const current = byWebhook.get(webhookId);
    if (current === undefined || rank[health] > rank[current]) byWebhook.set(webhookId, health);
  }
  return byWebhook;
}

const RECORD_SQL = `
WITH input AS (
  SELECT * FROM unnest($1::int[], $2::bigint[], $3::uuid[], $4::int[], $5::text[], $6::int[], $7::text[],
                       $8::bigint[], $9::boolean[], $10::int[], $11::int[], $12::text[], $13::text[], $14::text[])
    AS i(ord, delivery_id, event_id, webhook_id, event_type, attempt, status, delay_ms, attempted,
         status_code, duration_ms, error_kind, error, response_excerpt)
),
judged AS (
  SELECT h.webhook_id, h.kind, o.active AS was_active,
         h.kind = 'gone'
           OR (h.kind = 'failing' AND COALESCE(o.failing_since, now()) <= now() - $16 * interval '1 millisecond')
           AS expires
    FROM unnest($15::int[], $17::text[]) AS h(webhook_id, kind)
    JOIN webhooks o ON o.id = h.webhook_id
),
health AS (
  -- A healthy webhook's row is written at most once a minute, not by every delivery.
  UPDATE webhooks w
     SET active = w.active AND NOT j.expires,
         failing_since = CASE WHEN j.kind = 'succeeded' THEN NULL ELSE COALESCE(w.failing_since, now()) END,
         last_success_at = CASE WHEN j.kind = 'succeeded' THEN now() ELSE w.last_success_at END,
         updated_at = CASE WHEN w.active AND j.expires THEN now() ELSE w.updated_at END
    FROM judged j
   WHERE w.id = j.webhook_id
     AND (j.kind <> 'succeeded' OR w.failing_since IS NOT NULL OR w.last_success_at IS NULL
          OR w.last_success_at < now() - interval '1 minute')
  RETURNING w.id, j.kind, j.was_active AND NOT w.active AS deactivated
),
final AS (
  SELECT i.*,
         CASE WHEN i.status = 'retrying' AND EXISTS (SELECT 1 FROM health h WHERE h.id = i.webhook_id AND h.deactivated)
              THEN 'failed' ELSE i.status END AS final_status
    FROM input i
),
updated AS (
  UPDATE webhook_deliveries d
     SET status = f.final_status,
         last_status_code = CASE WHEN f.attempted THEN f.status_code ELSE d.last_status_code END,
         next_attempt_at = CASE WHEN f.final_status IN ${OPEN_STATUSES_SQL}
                                THEN now() + f.delay_ms * interval '1 millisecond' END,
         updated_at = now()
    FROM final f
   WHERE f.delivery_id IS NOT NULL AND d.id = f.delivery_id AND d.attempts = f.attempt
     AND d.status IN ${OPEN_STATUSES_SQL}
  RETURNING d.id, f.ord, d.next_attempt_at
),
inserted AS (
  INSERT INTO webhook_deliveries (event_id, webhook_id, event_type, status, attempts, last_status_code, next_attempt_at)
  SELECT f.event_id, f.webhook_id, f.event_type, f.final_status, f.attempt, f.status_code,
         CASE WHEN f.final_status IN ${OPEN_STATUSES_SQL} THEN now() + f.delay_ms * interval '1 millisecond' END
    FROM final f
   -- A webhook deleted while its attempt ran takes its deliveries with it; the rest of the batch stands.
   WHERE f.delivery_id IS NULL AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = f.webhook_id)
  -- Sent twice (a sweep racing a late job): the first record stands.
  ON CONFLICT (event_id, webhook_id) DO NOTHING
  RETURNING id, event_id, webhook_id, next_attempt_at
),
written AS (
  SELECT u.id, u.ord, u.next_attempt_at FROM updated u
  UNION ALL
  SELECT n.id, f.ord, n.next_attempt_at
    FROM inserted n JOIN final f ON f.delivery_id IS NULL AND f.event_id = n.event_id AND f.webhook_id = n.webhook_id
),
attempts AS (
  INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, duration_ms, error_kind, error, response_excerpt)
  SELECT w.id, f.attempt, f.status_code, f.duration_ms, f.error_kind, f.error, f.response_excerpt
    FROM written w JOIN final f ON f.ord = w.ord
   WHERE f.attempted
),
dispatched AS (
  ${markDispatchedSql('$18')}
)
SELECT 'delivery' AS kind, w.ord, w.id::text AS delivery_id, f.final_status AS status, f.attempt,
       round(extract(epoch FROM w.next_attempt_at) * 1000)::bigint AS due_ms,
       GREATEST(0, ceil(extract(epoch FROM w.next_attempt_at - now()) * 1000))::bigint AS delay_ms,
       NULL::int AS webhook_id, NULL::text AS reason
  FROM written w JOIN final f ON f.ord = w.ord
UNION ALL
SELECT 'deactivated', NULL, NULL, NULL, NULL, NULL, NULL, h.id, h.kind FROM health h WHERE h.deactivated`;

interface RecordRow {
  kind: 'delivery' | 'deactivated';
  ord: number | null;
  delivery_id: string | null;
  status: DeliveryStatus | null;
  attempt: number | null;
  due_ms: string | null;
  delay_ms: string | null;
  webhook_id: number | null;
  reason: WebhookHealth | null;
}

/**
 * Records a batch of delivery outcomes and marks `dispatchedEventIds` as dispatched, in one
 * statement: delivery rows (inserted for first attempts, updated for claimed ones), attempt rows,
 * the webhooks' health (deactivation on 410 or after `disableAfterMs` of failures), the events.
 */
export async function recordDeliveries(
  client: Queryable,
  outcomes: readonly DeliveryOutcome[],
  dispatchedEventIds: readonly string[],
  options: { disableAfterMs: number },
): Promise<RecordResult> {
  if (outcomes.length === 0 && dispatchedEventIds.length === 0) return { deliveries: [], deactivated: [] };
  const health = healthByWebhook(outcomes);
  const column = <T>(pick: (outcome: DeliveryOutcome) => T) => outcomes.map(pick);
  const result = await client.query<RecordRow>(RECORD_SQL, [
    outcomes.map((_outcome, index) => index),
    column((o) => o.deliveryId),
    column((o) => o.eventId),
    column((o) => o.webhookId),
    column((o) => o.eventType),
    column((o) => o.attempt),
    column((o) => o.status),
    column((o) => o.nextAttemptDelayMs ?? 0),
    column((o) => o.result !== null),
    column((o) => o.result?.statusCode ?? null),
    column((o) => o.result?.durationMs ?? 0),
    column((o) => o.result?.errorKind ?? null),
    column((o) => o.result?.error ?? null),
    column((o) => o.result?.responseExcerpt ?? null),
    [...health.keys()],
    options.disableAfterMs,
    [...health.values()],
    dispatchedEventIds,
  ]);
  const deliveries: RecordedDelivery[] = [];
  const deactivated: RecordResult['deactivated'] = [];
  for (const row of result.rows) {
    if (row.kind === 'deactivated') {
      deactivated.push({ webhookId: row.webhook_id!, reason: row.reason === 'gone' ? 'gone' : 'failing' });
      continue;
    }
    const open = row.status === 'pending' || row.status === 'retrying';
    deliveries.push({
      index: row.ord!,
      deliveryId: row.delivery_id!,
      status: row.status!,
      next: open
        ? {
            deliveryId: row.delivery_id!,
            attempts: row.attempt!,
            dueAtMs: Number(row.due_ms),
            delayMs: Number(row.delay_ms),
          }
        : null,
    });
  }
  return { deliveries, deactivated };
}

/**
 * A claimed delivery with what an attempt needs; the event columns are null when it is gone. The
 * webhook's url and its filters (events, table, fields) come from the same row version, so the
 * subscription checked is the one of the address sent to.
 */
export interface ClaimedDelivery {
  id: string;
  attempts: number;
  event_id: string;
  webhook_id: number;
  url: string;
  secret_ciphertext: string;
  webhook_events: string[];
  webhook_table_id: string | null;
  webhook_field_ids: string[];
  webhook_view_id: string | null;
  type: string | null;
  source: string | null;
  database_id: string | null;
  event_table_id: string | null;
  changed_field_ids: string[] | null;
  view_members: ViewMembers | null;
  created_at: Date | null;
  data_json: string | null;
}

/**
 * Takes a delivery for one attempt if it is open, due (within `toleranceMs`) and its webhook
 * active: counts the attempt and pushes `next_attempt_at` past the attempt's deadline (a lease),
 * so two claimers cannot both take it and a process dying mid-attempt leaves it due again later.
 * Whether the webhook still hears the event is for the caller to check (`whyNoLongerHeard`) on
 * what this returns, and `closeUnsubscribedDelivery` ends the delivery if not.
 */
export async function claimDelivery(
  client: Queryable,
  deliveryId: string,
  options: { leaseMs: number; toleranceMs: number },
): Promise<ClaimedDelivery | undefined> {
  const result = await client.query<ClaimedDelivery>(
    `WITH claimed AS (
       UPDATE webhook_deliveries d
          SET attempts = d.attempts + 1,
              next_attempt_at = now() + $2 * interval '1 millisecond',
              updated_at = now()
         FROM webhooks w
        WHERE d.id = $1
          AND w.id = d.webhook_id
          AND w.active
          AND d.status IN ${OPEN_STATUSES_SQL}
          AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= now() + $3 * interval '1 millisecond')
        RETURNING d.id::text AS id, d.attempts, d.event_id, d.webhook_id, w.url, w.secret_ciphertext,
                  w.events AS webhook_events, w.table_id AS webhook_table_id, w.field_ids AS webhook_field_ids,
                  w.view_id AS webhook_view_id
     )
     SELECT c.*, e.type, e.source, e.database_id, e.table_id AS event_table_id, e.changed_field_ids, e.view_members,
            e.created_at, e.data::text AS data_json
       FROM claimed c ${joinEventSql('e', 'c.event_id')}`,
    [deliveryId, options.leaseMs, options.toleranceMs],
  );
  return result.rows[0];
}

/**
 * Gives back a claim without an attempt (the receiver was busy): the attempt is uncounted and the
 * delivery falls due after `delayMs`. Returns its new schedule, or undefined if it moved meanwhile.
 */
export async function postponeClaimedDelivery(
  client: Queryable,
  claimed: { id: string; attempts: number },
  delayMs: number,
): Promise<ScheduledDelivery | undefined> {
  const result = await client.query<ScheduleRow>(
    `UPDATE webhook_deliveries d
        SET attempts = d.attempts - 1, next_attempt_at = now() + $3 * interval '1 millisecond', updated_at = now()
      WHERE d.id = $1 AND d.attempts = $2 AND d.status IN ${OPEN_STATUSES_SQL}
      RETURNING ${SCHEDULE_COLUMNS}`,
    [claimed.id, claimed.attempts, delayMs],
  );
  return result.rows[0] ? toScheduled(result.rows[0]) : undefined;
}

/** An open delivery of an inactive webhook is closed without an attempt. Returns whether it was. */
export async function closeDeliveryOfInactiveWebhook(
  client: Queryable,
  deliveryId: string,
): Promise<boolean> {
  const result = await client.query(
    `UPDATE webhook_deliveries d
        SET status = 'failed', next_attempt_at = NULL, updated_at = now()
       FROM webhooks w
      WHERE d.id = $1 AND w.id = d.webhook_id AND NOT w.active AND d.status IN ${OPEN_STATUSES_SQL}`,
    [deliveryId],
  );
  return (result.rowCount ?? 0) > 0;
}

/**
 * Ends a claimed delivery unsent because its webhook no longer hears its event: `failed`, with the
 * claimed attempt logged as `unsubscribed` and `reason` as its error, so the delivery log says
 * why. Returns whether it was ended (false: it moved meanwhile).
 */
export async function closeUnsubscribedDelivery(
  client: Queryable,
  claimed: { id: string; attempts: number },
  reason: string,
): Promise<boolean> {
  const result = await client.query(
    `WITH closed AS (
       UPDATE webhook_deliveries d
          SET status = 'failed', next_attempt_at = NULL, updated_at = now()
        WHERE d.id = $1 AND d.attempts = $2 AND d.status IN ${OPEN_STATUSES_SQL}
        RETURNING d.id, d.attempts
     )
     INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, duration_ms, error_kind, error)
     SELECT id, attempts, NULL, 0, 'unsubscribed', $3 FROM closed`,
    [claimed.id, claimed.attempts, reason],
  );
  return (result.rowCount ?? 0) > 0;
}

/**
 * The statement behind "which event types are still to be sent to this webhook": the types of its
 * open deliveries, each once. records-api asks before the webhook's url or table changes.
 */
export function openDeliveryEventTypesQuery(webhookId: number): { text: string; values: unknown[] } {
  return {
    text: `SELECT DISTINCT event_type FROM webhook_deliveries
            WHERE webhook_id = $1 AND status IN ${OPEN_STATUSES_SQL}
            ORDER BY event_type`,
    values: [webhookId],
  };
}

/** The schedule of open deliveries, by id. */
export async function scheduleOf(
  client: Queryable,
  deliveryIds: readonly string[],
): Promise<ScheduledDelivery[]> {
  const result = await client.query<ScheduleRow>(
    `SELECT ${SCHEDULE_COLUMNS} FROM webhook_deliveries d
      WHERE d.id = ANY ($1::bigint[]) AND d.status IN ${OPEN_STATUSES_SQL}`,
    [deliveryIds],
  );
  return result.rows.map(toScheduled);
}

/** Open deliveries due for longer than `graceMs`: their job may have been lost with Redis. */
export async function overdueDeliveries(
  client: Queryable,
  graceMs: number,
  limit: number,
): Promise<ScheduledDelivery[]> {
  const result = await client.query<ScheduleRow>(
    `SELECT ${SCHEDULE_COLUMNS} FROM webhook_deliveries d
      WHERE d.status IN ${OPEN_STATUSES_SQL}
        AND (d.next_attempt_at IS NULL OR d.next_attempt_at < now() - $1 * interval '1 millisecond')
      ORDER BY d.next_attempt_at NULLS FIRST
      LIMIT $2`,
    [graceMs, limit],
  );
  return result.rows.map(toScheduled);
}

/**
 * The statement behind "retry this delivery": it is made pending and due now, and the
 * dispatcher is woken by a NOTIFY that PostgreSQL sends only if the transaction commits. Returns
 * nothing for an id that does not exist.
 */
export function deliveryRetryRequest(deliveryId: string): { text: string; values: unknown[] } {
  return {
    text: `WITH requested AS (
             UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), updated_at = now()
              WHERE id = $1::bigint
              RETURNING id
           )
           SELECT pg_notify('${DELIVERIES_CHANNEL}', id::text) FROM requested`,
    values: [deliveryId],
  };
}
