import {
  DELIVERY_STATUSES,
  isOpenDeliveryStatus,
  pruneDispatchedEvents,
  pruneHistoryEvents,
  purgeSchemaTrash,
  purgeTrash,
} from '@recordbase/db';
import type pg from 'pg';

/**
 * Retention: old delivery attempts, closed deliveries and delivered outbox events are deleted.
 *
 * Why batches: one `DELETE` of a month of history would hold its row locks, and its transaction,
 * for as long as it runs, bloat the WAL in one burst, and could run past the statement timeout.
 * Each statement here deletes at most `batchSize` rows picked with `FOR UPDATE SKIP LOCKED`, and
 * commits on its own (no surrounding transaction): a row a writer holds at that moment is
 * skipped for a later run rather than waited for, and a writer waits at most for one small batch.
 * `DELETE` takes only a ROW EXCLUSIVE lock on the table, which inserts and updates share.
 *
 * In order, each until a batch comes back short (or `maxBatches` batches ran):
 * 1. attempts created more than `attemptRetentionMs` ago;
 * 2. closed deliveries (succeeded, failed) last changed more than `attemptRetentionMs` ago and with
 *    no attempt left: those step 1 has just emptied, and those closed without an attempt;
 * 3. records deleted more than `trashRetentionMs` ago, from their tables' trash; then tables and
 *    fields as old from their database's trash, each with the data it kept, in a transaction of
 *    its own that waits a second at most for its locks (db/schema-trash.ts);
 * 4. outbox events dispatched and created more than `eventRetentionMs` ago with no open delivery;
 *    the record events history reads (all but dependency refreshes') only after
 *    `historyRetentionMs`, with their revisions. An undispatched event is never deleted, however
 *    old: the sweep still has to send it; nor is one with an open delivery, whose next attempt
 *    reads the event's body from this row.
 *
 * By default events go after 7 days and deliveries after 30: a delivery may outlive its event,
 * and a retry asked for such a delivery then fails at once, unsent (its attempt records that the
 * event no longer exists).
 */

export interface RetentionSettings {
  /** Age (created_at) past which an attempt is deleted; also how long a closed delivery is kept. */
  attemptRetentionMs: number;
  /** Age past which a dispatched event with no open delivery is deleted. */
  eventRetentionMs: number;
  /** The same for the record events history reads (HISTORY_RETENTION). */
  historyRetentionMs: number;
  /** Age past which a deleted record leaves its table's trash for good (TRASH_RETENTION). */
  trashRetentionMs: number;
  /** Rows per statement (default 1000). */
  batchSize?: number;
  /** Statements per kind of row and per call at most (default: until a batch is short). */
  maxBatches?: number;
}

export interface PruneResult {
  attempts: number;
  deliveries: number;
  events: number;
  /** Records purged from the trash. */
  trash: number;
  /** Tables and fields purged from the database trash. */
  schemaTrash: number;
}

export const DEFAULT_PRUNE_BATCH_SIZE = 1000;

/** Succeeded and failed: the statuses no attempt follows unless a retry is asked for. */
const CLOSED_STATUSES = DELIVERY_STATUSES.filter((status) => !isOpenDeliveryStatus(status));
/** Constant statuses as an SQL list, like OPEN_STATUSES_SQL (the partial index's predicate must match). */
const sqlList = (values: readonly string[]) => `(${values.map((value) => `'${value}'`).join(', ')})`;

// $1: age in milliseconds, $2: batch size. Ages are measured on PostgreSQL's clock.
const PRUNE_ATTEMPTS_SQL = `
DELETE FROM webhook_delivery_attempts
 WHERE id IN (
   SELECT id FROM webhook_delivery_attempts
    WHERE created_at < now() - $1 * interval '1 millisecond'
    ORDER BY created_at
    LIMIT $2
      FOR UPDATE SKIP LOCKED)`;

// Found through webhook_deliveries_closed_updated_at_idx. `OFFSET 0` keeps the attempts check a
// probe of attempts' delivery_id index per candidate: as an anti-join the planner, seeing that
// most deliveries have attempts, may instead hash the whole attempts table on every batch.
const PRUNE_DELIVERIES_SQL = `
DELETE FROM webhook_deliveries
 WHERE id IN (
   SELECT d.id FROM webhook_deliveries d
    WHERE d.status IN ${sqlList(CLOSED_STATUSES)}
      AND d.updated_at < now() - $1 * interval '1 millisecond'
      AND NOT EXISTS (SELECT 1 FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id OFFSET 0)
    ORDER BY d.updated_at
    LIMIT $2
      FOR UPDATE OF d SKIP LOCKED)`;

/** Deletes at most `batchSize` rows older than `ageMs`; returns how many it deleted. */
type DeleteBatch = (pool: pg.Pool, ageMs: number, batchSize: number) => Promise<number>;

const deleteOlder =
  (sql: string): DeleteBatch =>
  async (pool, ageMs, batchSize) =>
    (await pool.query(sql, [ageMs, batchSize])).rowCount ?? 0;

/** Runs one batch of at most `batchSize` rows until one deletes fewer, or `maxBatches` ran. */
async function deleteInBatches(
  pool: pg.Pool,
  deleteBatch: DeleteBatch,
  ageMs: number,
  batchSize: number,
  maxBatches: number,
): Promise<number> {
  let total = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const deleted = await deleteBatch(pool, ageMs, batchSize);
    total += deleted;
    if (deleted < batchSize) break;
  }
  return total;
}

/** One retention pass (see above). Returns how many rows of each kind it deleted. */
export async function pruneOnce(pool: pg.Pool, settings: RetentionSettings): Promise<PruneResult> {
  const batchSize = settings.batchSize ?? DEFAULT_PRUNE_BATCH_SIZE;
  const maxBatches = settings.maxBatches ?? Number.POSITIVE_INFINITY;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) {
    throw new Error(`batchSize must be a positive integer, not ${batchSize}`);
  }
  const prune = (deleteBatch: DeleteBatch, ageMs: number) =>
    deleteInBatches(pool, deleteBatch, ageMs, batchSize, maxBatches);
  // Attempts first: a delivery goes only once its attempts have.
  const attempts = await prune(deleteOlder(PRUNE_ATTEMPTS_SQL), settings.attemptRetentionMs);
  const deliveries = await prune(deleteOlder(PRUNE_DELIVERIES_SQL), settings.attemptRetentionMs);
  // Before the events: a trashed record whose deletion event goes leaves the trash with it anyway.
  const trash = await prune(purgeTrash, settings.trashRetentionMs);
  const schemaTrash = await prune(purgeSchemaTrash, settings.trashRetentionMs);
  const events =
    (await prune(pruneDispatchedEvents, settings.eventRetentionMs)) +
    (await prune(pruneHistoryEvents, settings.historyRetentionMs));
  return { attempts, deliveries, events, trash, schemaTrash };
}
