import type pg from 'pg';
import { OPEN_STATUSES_SQL } from '../deliveries/state';
import { OUTBOX_TABLE, type ViewMembers } from './append';

/**
 * The outbox's side of dispatching: reading events for the dispatcher, finding those whose
 * publish was lost, marking them dispatched, and pruning them once nothing needs them. The
 * statements measure ages on PostgreSQL's clock.
 */

type Queryable = Pick<pg.Pool, 'query'>;

export interface OutboxEvent {
  eventId: string;
  type: string;
  source: string;
  databaseId: string;
  tableId: string | null;
  changedFieldIds: string[];
  /** Record events: the records inside each view webhooks watch, before and after. */
  viewMembers: ViewMembers | null;
  createdAt: Date;
  /** The event's `data`, as PostgreSQL printed its JSON. */
  dataJson: string;
  dispatched: boolean;
  /** The webhooks' subscriptions version in the snapshot the event was read in. */
  subscriptionsVersion: bigint;
}

interface EventRow {
  id: string;
  type: string;
  source: string;
  database_id: string;
  table_id: string | null;
  changed_field_ids: string[];
  view_members: ViewMembers | null;
  created_at: Date;
  data_json: string;
  dispatched: boolean;
  version: string;
}

/**
 * The events of `ids` that exist, each with the subscriptions version read in the same snapshot
 * (so that webhooks changed after it are known to be newer than what matched the event).
 */
export async function readEventsForDispatch(
  client: Queryable,
  ids: readonly string[],
): Promise<Map<string, OutboxEvent>> {
  const result = await client.query<EventRow>(
    `SELECT e.id, e.type, e.source, e.database_id, e.table_id, e.changed_field_ids, e.view_members, e.created_at, e.data::text AS data_json,
            e.dispatched_at IS NOT NULL AS dispatched, v.version::text AS version
       FROM ${OUTBOX_TABLE} e CROSS JOIN webhook_subscriptions_version v
      WHERE e.id = ANY ($1::uuid[])`,
    [ids],
  );
  return new Map(
    result.rows.map((row) => [
      row.id,
      {
        eventId: row.id,
        type: row.type,
        source: row.source,
        databaseId: row.database_id,
        tableId: row.table_id,
        changedFieldIds: row.changed_field_ids,
        viewMembers: row.view_members,
        createdAt: row.created_at,
        dataJson: row.data_json,
        dispatched: row.dispatched,
        subscriptionsVersion: BigInt(row.version),
      },
    ]),
  );
}

/** Up to `limit` undispatched events created more than `olderThanMs` ago, oldest first. */
export async function undispatchedEventIds(
  client: Queryable,
  olderThanMs: number,
  limit: number,
): Promise<string[]> {
  const result = await client.query<{ id: string }>(
    `SELECT id FROM ${OUTBOX_TABLE}
      WHERE dispatched_at IS NULL AND created_at < now() - $1 * interval '1 millisecond'
      ORDER BY created_at
      LIMIT $2`,
    [olderThanMs, limit],
  );
  return result.rows.map((row) => row.id);
}

/** How many events wait to be dispatched. */
export async function countUndispatchedEvents(client: Queryable): Promise<number> {
  const result = await client.query<{ count: string }>(
    `SELECT count(*) AS count FROM ${OUTBOX_TABLE} WHERE dispatched_at IS NULL`,
  );
  return Number(result.rows[0]?.count ?? 0);
}

/**
 * A data-modifying CTE body marking dispatched the events whose ids the uuid[] parameter
 * `idsParam` (e.g. `$18`) holds, for a statement that records their deliveries in the same breath.
 */
export function markDispatchedSql(idsParam: string): string {
  return `UPDATE ${OUTBOX_TABLE} SET dispatched_at = now() WHERE id = ANY (${idsParam}::uuid[]) AND dispatched_at IS NULL`;
}

/**
 * The join a statement on deliveries reads its event through: `alias` names the event, and a
 * delivery whose event was pruned finds nulls.
 */
export function joinEventSql(alias: string, eventIdColumn: string): string {
  return `LEFT JOIN ${OUTBOX_TABLE} ${alias} ON ${alias}.id = ${eventIdColumn}`;
}

/**
 * The events history reads (record_revisions points into them): kept for HISTORY_RETENTION rather
 * than CHANGES_RETENTION. The same text is in the partial indexes' predicates and the
 * revisions trigger's condition (migrations/*_record_revisions.sql, *_history_lean.sql); `e` is
 * the event.
 */
export const HISTORY_EVENT_SQL = `(e.type IN ('record.created', 'record.updated', 'record.deleted') AND e.source <> 'dependency')`;

// An undispatched event is never deleted, however old: the sweep still has to send it; nor is one
// with an open delivery, whose next attempt reads the event's body from this row.
const PRUNABLE_SQL = `e.dispatched_at IS NOT NULL
      AND e.created_at < now() - $1 * interval '1 millisecond'
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                       WHERE d.event_id = e.id AND d.status IN ${OPEN_STATUSES_SQL})`;

// Each prune statement moves its databases' change feed cut (change_feed_pruned) to the latest
// feed position it deleted, in the statement itself, so a feed reader sees both or neither.
// `gone` is the CTE of the deleted events.
const RECORD_FEED_CUT_SQL = `
feed_cut AS (
  INSERT INTO change_feed_pruned AS cut (database_id, xid, seq)
  SELECT DISTINCT ON (database_id) database_id, COALESCE(xid, '0'::xid8), seq
    FROM gone WHERE NOT suppressed
   ORDER BY database_id, COALESCE(xid, '0'::xid8) DESC, seq DESC
  ON CONFLICT (database_id) DO UPDATE SET xid = EXCLUDED.xid, seq = EXCLUDED.seq, pruned_at = now()
   WHERE (cut.xid, cut.seq) < (EXCLUDED.xid, EXCLUDED.seq))`;

// Found through outbox_events_dispatched_at_idx, which leaves history's events out. An event is
// dispatched after it is created, so asking both ages only keeps an event dispatched late (after
// an outage) for the span from then.
const PRUNE_EVENTS_SQL = `
WITH gone AS (
  DELETE FROM ${OUTBOX_TABLE}
   WHERE id IN (
     SELECT e.id FROM ${OUTBOX_TABLE} e
      WHERE e.dispatched_at < now() - $1 * interval '1 millisecond'
        AND NOT ${HISTORY_EVENT_SQL}
        AND ${PRUNABLE_SQL}
      ORDER BY e.dispatched_at
      LIMIT $2
        FOR UPDATE OF e SKIP LOCKED)
  RETURNING database_id, xid, seq, suppressed),
${RECORD_FEED_CUT_SQL}
SELECT count(*)::int AS deleted FROM gone`;

// Found through outbox_events_history_created_at_idx. Their revisions, and the trash rows of the
// records they deleted, go in the same statement (no foreign key does it: its check of every
// revision written was a third of history's cost on a write), found through their event_seq
// indexes.
const PRUNE_HISTORY_EVENTS_SQL = `
WITH gone AS (
  DELETE FROM ${OUTBOX_TABLE}
   WHERE id IN (
     SELECT e.id FROM ${OUTBOX_TABLE} e
      WHERE ${HISTORY_EVENT_SQL}
        AND e.dispatched_at < now() - $1 * interval '1 millisecond'
        AND ${PRUNABLE_SQL}
      ORDER BY e.created_at
      LIMIT $2
        FOR UPDATE OF e SKIP LOCKED)
  RETURNING database_id, xid, seq, suppressed),
revisions AS (DELETE FROM record_revisions WHERE event_seq = ANY (ARRAY(SELECT seq FROM gone))),
trash AS (DELETE FROM record_trash WHERE event_seq = ANY (ARRAY(SELECT seq FROM gone))),
${RECORD_FEED_CUT_SQL}
SELECT count(*)::int AS deleted FROM gone`;

/**
 * Deletes at most `batchSize` events (other than history's) dispatched and created more than
 * `olderThanMs` ago with no open delivery, skipping rows a writer holds; returns how many it deleted.
 */
export async function pruneDispatchedEvents(
  client: Queryable,
  olderThanMs: number,
  batchSize: number,
): Promise<number> {
  const result = await client.query<{ deleted: number }>(PRUNE_EVENTS_SQL, [olderThanMs, batchSize]);
  return result.rows[0]?.deleted ?? 0;
}

/**
 * The same for the record events history reads, created more than `olderThanMs` ago
 * (HISTORY_RETENTION), with their revisions.
 */
export async function pruneHistoryEvents(
  client: Queryable,
  olderThanMs: number,
  batchSize: number,
): Promise<number> {
  const result = await client.query<{ deleted: number }>(PRUNE_HISTORY_EVENTS_SQL, [olderThanMs, batchSize]);
  return result.rows[0]?.deleted ?? 0;
}
