import { withTransaction } from '@recordbase/db';
import type pg from 'pg';
import type { DispatcherMetrics } from './metrics';
import type { DispatchQueues } from './queues';

export const RELAY_BATCH_SIZE = 500;

/**
 * Moves one batch of committed, unrelayed outbox events to the events queue, oldest first. The
 * rows are locked (other relays skip them), enqueued with their id as job id, and marked relayed
 * in the same transaction: when the enqueue fails (Redis away) the transaction rolls back and the
 * rows wait for the next run; when the commit fails after the enqueue, the next run enqueues them
 * again and BullMQ drops the duplicates by job id (fan-out is idempotent besides).
 * Returns how many events were relayed.
 */
export async function relayBatch(
  pool: pg.Pool,
  queues: Pick<DispatchQueues, 'enqueueEvents'>,
  metrics?: Pick<DispatcherMetrics, 'relayLag'>,
  batchSize = RELAY_BATCH_SIZE,
): Promise<number> {
  const relayed = await withTransaction(pool, async (client) => {
    const pending = await client.query<{ id: string; lag_seconds: number }>(
      `SELECT id, extract(epoch FROM clock_timestamp() - created_at)::float8 AS lag_seconds
         FROM outbox_events
        WHERE relayed_at IS NULL
        ORDER BY seq
        LIMIT $1
        FOR UPDATE SKIP LOCKED`,
      [batchSize],
    );
    if (pending.rows.length === 0) return [];
    const ids = pending.rows.map((row) => row.id);
    await queues.enqueueEvents(ids);
    await client.query('UPDATE outbox_events SET relayed_at = now() WHERE id = ANY ($1::uuid[])', [ids]);
    return pending.rows;
  });
  for (const row of relayed) metrics?.relayLag.observe(Math.max(0, row.lag_seconds));
  return relayed.length;
}

/** Relays until the outbox holds no unrelayed event. */
export async function relayAll(
  pool: pg.Pool,
  queues: Pick<DispatchQueues, 'enqueueEvents'>,
  metrics?: Pick<DispatcherMetrics, 'relayLag'>,
): Promise<void> {
  while ((await relayBatch(pool, queues, metrics)) === RELAY_BATCH_SIZE) {
    // Full batch: there may be more.
  }
}
