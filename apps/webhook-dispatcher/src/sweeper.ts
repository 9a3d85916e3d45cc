import type pg from 'pg';
import type { DispatcherMetrics } from './metrics';
import type { DeliveryToEnqueue } from './queues';
import { OPEN_STATUSES, SCHEDULE_COLUMNS, type ScheduleRow, toEnqueue } from './schedule';

/**
 * PostgreSQL is the truth and Redis may forget (it keeps nothing on disk here), so a periodic
 * sweep finds, from the database alone, the work whose job may have been lost:
 *
 * - open deliveries due for longer than the grace period: enqueued again. Enqueueing is
 *   deduplicated per scheduled attempt while the earlier job still waits, and the claim lets
 *   only one job attempt a given due delivery, so a delivery that is merely late (busy
 *   workers) is not sent twice;
 * - events relayed longer than the grace period ago and not yet fanned out (their job was lost,
 *   or failed for good): fanned out here, directly. Fan-out is idempotent.
 */

export const SWEEP_BATCH_SIZE = 1000;
export const SWEEP_EVENT_BATCH_SIZE = 100;

export interface SweepDeps {
  pool: pg.Pool;
  graceMs: number;
  enqueueDeliveries(deliveries: DeliveryToEnqueue[]): Promise<void>;
  /** Fans one event out and enqueues its deliveries. */
  fanOut(eventId: string): Promise<void>;
  metrics?: Pick<DispatcherMetrics, 'outboxBacklog'>;
}

export interface SweepResult {
  deliveries: number;
  events: number;
}

export async function sweepOnce(deps: SweepDeps): Promise<SweepResult> {
  const overdue = await deps.pool.query<ScheduleRow>(
    `SELECT ${SCHEDULE_COLUMNS} FROM webhook_deliveries d
      WHERE d.status IN ${OPEN_STATUSES}
        AND (d.next_attempt_at IS NULL OR d.next_attempt_at < now() - $1 * interval '1 millisecond')
      ORDER BY d.next_attempt_at NULLS FIRST
      LIMIT ${SWEEP_BATCH_SIZE}`,
    [deps.graceMs],
  );
  if (overdue.rows.length > 0) await deps.enqueueDeliveries(overdue.rows.map(toEnqueue));

  const unfanned = await deps.pool.query<{ id: string }>(
    `SELECT id FROM outbox_events
      WHERE fanned_out_at IS NULL AND relayed_at < now() - $1 * interval '1 millisecond'
      ORDER BY relayed_at
      LIMIT ${SWEEP_EVENT_BATCH_SIZE}`,
    [deps.graceMs],
  );
  for (const { id } of unfanned.rows) await deps.fanOut(id);

  if (deps.metrics) {
    const backlog = await deps.pool.query<{ count: string }>(
      'SELECT count(*) AS count FROM outbox_events WHERE relayed_at IS NULL',
    );
    deps.metrics.outboxBacklog.set(Number(backlog.rows[0]?.count ?? 0));
  }
  return { deliveries: overdue.rows.length, events: unfanned.rows.length };
}
