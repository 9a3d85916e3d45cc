import {
  countUndispatchedEvents,
  overdueDeliveries,
  type ScheduledDelivery,
  undispatchedEventIds,
} from '@recordbase/db';
import type pg from 'pg';
import type { DispatcherMetrics } from '../metrics';

/**
 * PostgreSQL is the truth and Redis may forget (it keeps nothing on disk here), so a periodic
 * sweep finds, from the database alone, the work whose job may have been lost:
 *
 * - open deliveries due for longer than the grace period: enqueued again. Enqueueing is
 *   deduplicated per scheduled attempt while the earlier job still waits, and the claim lets
 *   only one job attempt a given due delivery, so a delivery that is merely late is not sent twice;
 * - events older than the grace period and still undispatched: their publish was lost (Redis
 *   away, records-api killed between its commit and the publish) or their dispatch died with a
 *   process. Each is dispatched here, unless its job still waits or runs in the queue or this
 *   process is dispatching it. Dispatch skips an event already dispatched.
 */

export const SWEEP_BATCH_SIZE = 1000;
export const SWEEP_EVENT_BATCH_SIZE = 200;
const SWEEP_EVENT_CONCURRENCY = 20;

export interface SweepDeps {
  pool: Pick<pg.Pool, 'query'>;
  graceMs: number;
  enqueueDeliveries(deliveries: ScheduledDelivery[]): Promise<void>;
  /** Whether the event's job still waits or runs (false when unknown: Redis away). */
  eventQueued(eventId: string): Promise<boolean>;
  /** Whether this process is dispatching the event right now. */
  dispatching(eventId: string): boolean;
  dispatchEvent(eventId: string): Promise<void>;
  metrics?: Pick<DispatcherMetrics, 'outboxBacklog'>;
}

export interface SweepResult {
  deliveries: number;
  events: number;
}

export async function sweepOnce(deps: SweepDeps): Promise<SweepResult> {
  const overdue = await overdueDeliveries(deps.pool, deps.graceMs, SWEEP_BATCH_SIZE);
  if (overdue.length > 0) await deps.enqueueDeliveries(overdue);

  const stale = await undispatchedEventIds(deps.pool, deps.graceMs, SWEEP_EVENT_BATCH_SIZE);
  const lost: string[] = [];
  for (const id of stale) {
    if (deps.dispatching(id)) continue;
    const queued = await deps.eventQueued(id).catch(() => false);
    if (!queued) lost.push(id);
  }
  for (let start = 0; start < lost.length; start += SWEEP_EVENT_CONCURRENCY) {
    await Promise.all(lost.slice(start, start + SWEEP_EVENT_CONCURRENCY).map((id) => deps.dispatchEvent(id)));
  }

  if (deps.metrics) deps.metrics.outboxBacklog.set(await countUndispatchedEvents(deps.pool));
  return { deliveries: overdue.length, events: lost.length };
}
