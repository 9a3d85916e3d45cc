import type { DeliveryToEnqueue } from './queues';

/**
 * Reading a delivery's schedule from webhook_deliveries (aliased `d`) in the shape the queue takes.
 * The delay is computed by PostgreSQL against its own clock, the clock `next_attempt_at` was set by.
 */
export const SCHEDULE_COLUMNS = `d.id::text AS delivery_id, d.attempts,
  COALESCE(round(extract(epoch FROM d.next_attempt_at) * 1000), 0)::bigint AS due_ms,
  GREATEST(0, COALESCE(ceil(extract(epoch FROM d.next_attempt_at - now()) * 1000), 0))::bigint AS delay_ms`;

export interface ScheduleRow {
  delivery_id: string;
  attempts: number;
  due_ms: string;
  delay_ms: string;
}

export function toEnqueue(row: ScheduleRow): DeliveryToEnqueue {
  return {
    deliveryId: row.delivery_id,
    attempts: row.attempts,
    dueAtMs: Number(row.due_ms),
    delayMs: Number(row.delay_ms),
  };
}

/** Statuses of a delivery that still expects an attempt. */
export const OPEN_STATUSES = `('pending', 'retrying')`;
