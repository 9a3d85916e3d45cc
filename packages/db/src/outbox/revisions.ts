import type pg from 'pg';
import { OUTBOX_TABLE } from './append';
import { HISTORY_EVENT_SQL } from './dispatch';

/**
 * Record history, read from the outbox: record_revisions (written by the outbox's insert trigger,
 * migrations/*_record_revisions.sql) places each record in the events that wrote it, record_trash
 * in the events that deleted it (record-trash.ts), and the event
 * holds the record after the write (its last state for a delete) and an update's previous values.
 * A page is one statement: the revisions through an index, newest first, then each event's records
 * and changes walked once, in step, for the positions the page needs.
 */

type Queryable = Pick<pg.Pool, 'query'>;

/** Where a page starts: after (older than) this revision. */
export interface RevisionKey {
  seq: string;
  position: number;
}

export interface StoredRevision extends RevisionKey {
  recordId: string;
  type: string;
  source: string;
  createdAt: Date;
  /** The key's `{id, name}` as JSON text, or null. */
  actorJson: string | null;
  /** The record as the event holds it (JSON text); null when the event carries ids only (imports). */
  recordJson: string | null;
  /** An update's change of this record (`{recordId, changedFieldIds, previous}`), JSON text. */
  changeJson: string | null;
}

interface RevisionRow {
  seq: string;
  position: number;
  record_id: string;
  type: string;
  source: string;
  created_at: Date;
  actor: string | null;
  record: string | null;
  change: string | null;
}

/**
 * Up to `limit` revisions of table `tableId` (of one record with `recordId`), newest first,
 * older than `after` when given. A record's are found through its revisions' index; a table's
 * through its record events' (outbox_events_table_history_idx, one row per event), each event's
 * records expanded in place and kept where they have a revision (history may have been off).
 */
export async function readRevisions(
  client: Queryable,
  options: { tableId: string; recordId?: string; after?: RevisionKey; limit: number },
): Promise<StoredRevision[]> {
  const values: unknown[] = [options.tableId, options.limit];
  if (options.recordId !== undefined) {
    values.push(options.recordId);
    let after = '';
    if (options.after) {
      values.push(options.after.seq, options.after.position);
      after = 'AND (v.event_seq, v.position) < ($4::bigint, $5::int)';
    }
    // Its writes' revisions and its deletions' (record_trash), each through its record index.
    const newest = (relation: string) =>
      `(SELECT v.event_seq, v.position, v.record_id FROM ${relation} v
         WHERE v.record_id = $3::uuid AND v.table_id = $1 ${after}
         ORDER BY v.event_seq DESC, v.position DESC LIMIT $2)`;
    return readEventRecordsPage(
      client,
      `SELECT u.event_seq, u.position, u.record_id
         FROM (${newest('record_revisions')} UNION ALL ${newest('record_trash')}) u
        ORDER BY u.event_seq DESC, u.position DESC
        LIMIT $2`,
      values,
    );
  }
  let after = '';
  if (options.after) {
    values.push(options.after.seq, options.after.position);
    // The event's bound alone reaches the index; the pair picks up inside the event.
    after = 'AND e.seq <= $3::bigint AND (e.seq, r.position) < ($3::bigint, $4::int)';
  }
  return readEventRecordsPage(
    client,
    `SELECT e.seq AS event_seq, r.position::int AS position, r.id::uuid AS record_id
       FROM ${OUTBOX_TABLE} e
      CROSS JOIN LATERAL json_array_elements_text(e.data -> 'recordIds') WITH ORDINALITY AS r(id, position)
      WHERE e.table_id = $1 AND ${HISTORY_EVENT_SQL} ${after}
        AND ${REVISION_EXISTS_SQL}
      ORDER BY e.seq DESC, r.position DESC
      LIMIT $2`,
    values,
  );
}

/**
 * Whether record `r.position` of event `e` has a revision (history may have been off): a
 * deletion's is its record_trash row, any other's its record_revisions row.
 */
const REVISION_EXISTS_SQL = `CASE WHEN e.type = 'record.deleted'
         THEN EXISTS (SELECT FROM record_trash v WHERE v.event_seq = e.seq AND v.position = r.position)
         ELSE EXISTS (SELECT FROM record_revisions v WHERE v.event_seq = e.seq AND v.position = r.position) END`;

/**
 * The records of a page of record events: `page` selects `event_seq`, `position` and `record_id`
 * (newest first, with its LIMIT) from record_revisions or record_trash, `values` its parameters.
 * Each event of the page is walked once, however many of its records the page shows: ROWS FROM
 * takes `records` and `changes` side by side (changes are in the order of records; an event
 * without them gives nulls), and the page's positions are picked from that.
 */
export async function readEventRecordsPage(
  client: Queryable,
  page: string,
  values: readonly unknown[],
): Promise<StoredRevision[]> {
  const result = await client.query<RevisionRow>(
    `WITH page AS MATERIALIZED (${page}),
     walked AS (
       SELECT e.seq, r.record, r.change, r.position
         FROM (SELECT DISTINCT event_seq FROM page) pe
         JOIN ${OUTBOX_TABLE} e ON e.seq = pe.event_seq
         CROSS JOIN LATERAL ROWS FROM (json_array_elements(e.data -> 'records'),
                                      json_array_elements(e.data -> 'changes'))
              WITH ORDINALITY AS r(record, change, position))
     SELECT p.event_seq::text AS seq, p.position, p.record_id::text AS record_id, e.type, e.source,
            e.created_at, e.actor::text AS actor, w.record::text AS record, w.change::text AS change
       FROM page p
       JOIN ${OUTBOX_TABLE} e ON e.seq = p.event_seq
       LEFT JOIN walked w ON w.seq = p.event_seq AND w.position = p.position
      ORDER BY p.event_seq DESC, p.position DESC`,
    [...values],
  );
  return result.rows.map((row) => ({
    seq: row.seq,
    position: row.position,
    recordId: row.record_id,
    type: row.type,
    source: row.source,
    createdAt: row.created_at,
    actorJson: row.actor,
    recordJson: row.record,
    changeJson: row.change,
  }));
}

/** One revision of a record: its event's type and the record as the event holds it; null when there is none. */
export async function readRevision(
  client: Queryable,
  key: { tableId: string; recordId: string; seq: string; position: number },
): Promise<{ type: string; recordJson: string | null } | null> {
  const result = await client.query<{ type: string; record: string | null }>(
    `SELECT e.type, (e.data -> 'records' -> (v.position - 1))::text AS record
       FROM (SELECT event_seq, position, record_id, table_id FROM record_revisions
              WHERE event_seq = $3::bigint AND position = $4
             UNION ALL
             SELECT event_seq, position, record_id, table_id FROM record_trash
              WHERE event_seq = $3::bigint AND position = $4) v
       JOIN ${OUTBOX_TABLE} e ON e.seq = v.event_seq
      WHERE v.record_id = $2::uuid AND v.table_id = $1`,
    [key.tableId, key.recordId, key.seq, key.position],
  );
  const row = result.rows[0];
  return row ? { type: row.type, recordJson: row.record } : null;
}
