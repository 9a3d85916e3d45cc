import { withTransaction } from '@recordbase/db';
import type pg from 'pg';
import type { DeliveryToEnqueue } from './queues';
import { OPEN_STATUSES, SCHEDULE_COLUMNS, type ScheduleRow, toEnqueue } from './schedule';

/**
 * Fan-out of one event: one delivery row per matching webhook (active, subscribed to the type,
 * same database, no table filter or the event's table, created before the event), then `fanned_out_at` on the event, in
 * one transaction. Idempotent: the event row is locked, an event already fanned out gets no new
 * rows, and the unique (event_id, webhook_id) constraint guards the inserts. Returns the event's
 * deliveries that are due, for the caller to enqueue (again: enqueueing is deduplicated).
 */
export async function fanOutEvent(pool: pg.Pool, eventId: string): Promise<DeliveryToEnqueue[]> {
  return withTransaction(pool, async (client) => {
    const event = await client.query<{ fanned_out: boolean }>(
      'SELECT fanned_out_at IS NOT NULL AS fanned_out FROM outbox_events WHERE id = $1 FOR UPDATE',
      [eventId],
    );
    if (event.rowCount === 0) return [];
    if (!event.rows[0]!.fanned_out) {
      await client.query(
        `INSERT INTO webhook_deliveries (event_id, webhook_id, event_type, status, attempts, next_attempt_at)
         SELECT e.id, w.id, e.type, 'pending', 0, now()
           FROM outbox_events e
           JOIN webhooks w ON w.database_id = e.database_id
          WHERE e.id = $1
            AND w.active
            AND e.type = ANY (w.events)
            AND (w.table_id IS NULL OR w.table_id = e.table_id)
            -- A webhook hears what happens after it exists, however late the event is relayed.
            AND w.created_at <= e.created_at
         ON CONFLICT (event_id, webhook_id) DO NOTHING`,
        [eventId],
      );
      await client.query('UPDATE outbox_events SET fanned_out_at = now() WHERE id = $1', [eventId]);
    }
    const due = await client.query<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM webhook_deliveries d
        WHERE d.event_id = $1 AND d.status IN ${OPEN_STATUSES}
          -- timestamptz(3) rounds now() to the millisecond, possibly up: a rounded now() is due.
          AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= now() + interval '1 millisecond')`,
      [eventId],
    );
    return due.rows.map(toEnqueue);
  });
}
