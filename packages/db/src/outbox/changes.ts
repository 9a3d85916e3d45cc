import type pg from 'pg';
import { OUTBOX_TABLE } from './append';

/**
 * The change feed's read of the outbox (migrations/*_outbox_commit_order.sql): a database's events
 * in an order that a later commit never cuts into, so a reader following the cursor sees every
 * committed event exactly once. An event is handed out only once every transaction older than
 * its own that may write here has ended (its xid below the horizon, HORIZON_SQL), and events go by
 * (xid, seq): whatever commits after a read belongs to a transaction at or past that horizon,
 * which sorts after all the read handed out. Events appended for history only (suppressWebhooks) are not changes anyone
 * hears of.
 */

type Queryable = Pick<pg.Pool, 'query'>;

/** A place in the feed: after the event of transaction `xid` with sequence `seq`. */
export interface ChangePosition {
  /** xid8 as decimal text. */
  xid: string;
  seq: string;
}

export interface StoredChange {
  id: string;
  position: ChangePosition;
  tableId: string | null;
  type: string;
  /**
   * The event's body as the feed gives it, rendered by PostgreSQL (CHANGE_BODY_SQL): the format of
   * contracts/events.ts's eventBodyJson without a delivery, which a test holds them to.
   */
  bodyJson: string;
}

export type ChangesPage =
  | ({ outcome: 'read' } & ChangesRead)
  /** Retention deleted events after `after`: following on would skip them. */
  | { outcome: 'expired' }
  /** `after` is no place the feed has been: past its end. */
  | { outcome: 'ahead' }
  /** The database does not exist (asked in the read's own statement, which saves a round trip a page). */
  | { outcome: 'missing' };

export interface ChangesRead {
  changes: StoredChange[];
  /** After the last change handed out, or where the reader stood when there was none. */
  position: ChangePosition;
  /** More changes are readable now. */
  hasMore: boolean;
}

const XID_SQL = `COALESCE(e.xid, '0'::xid8)`;

/**
 * The feed's horizon: the oldest transaction still running that may yet append to this
 * database's outbox, or, with none, the first transaction id not yet given (the snapshot's xmax).
 * Transaction ids are the whole PostgreSQL server's, so the snapshot's own xmin would hold every
 * feed back for a long transaction in *another* database of the server (another installation,
 * a migration, a test run beside). A backend is connected to one database for good, so an id
 * pg_stat_activity shows under another database's backend, read after the snapshot, cannot append
 * here; an id it does not show (ended meanwhile, a prepared transaction) is kept, so the horizon
 * errs only towards waiting. Outbox ids are top-level (pg_current_xact_id), as the snapshot's are.
 */
const HORIZON_SQL = `(SELECT COALESCE(
      (SELECT min(x) FROM pg_snapshot_xip(snap.s) x
        WHERE NOT EXISTS (
          SELECT 1 FROM pg_stat_activity a
           WHERE a.backend_xid = ((x::text::bigint % 4294967296)::text)::xid
             AND a.datid <> (SELECT oid FROM pg_database WHERE datname = current_database()))),
      pg_snapshot_xmax(snap.s))
    FROM (SELECT pg_current_snapshot() AS s) snap)`;

/**
 * An event's feed body rendered where its data already is as text: on a catch-up of a million
 * events, parsing each timestamp into a Date and building the body in Node cost a third of the
 * read. `e` is the event; types and sources are fixed ASCII words, ids UUIDs.
 */
const CHANGE_BODY_SQL = `'{"id":"evt_' || e.id || '","type":' || to_json(e.type) || ',"timestamp":"'
  || to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '","data":' || e.data::text
  || ',"metadata":{"baseId":"' || e.database_id || '","source":' || to_json(e.source) || '}}'`;

/**
 * Up to `limit` changes of the database after `after` (from the oldest kept without it), only of
 * table `tableId` and of `types` when given. The cut retention left (change_feed_pruned) is read
 * in the same snapshot as the events: a position before it has lost events since.
 */
export async function readChanges(
  client: Queryable,
  options: {
    databaseId: string;
    after?: ChangePosition;
    limit: number;
    tableId?: string;
    types?: readonly string[];
  },
): Promise<ChangesPage> {
  const values: unknown[] = [
    options.databaseId,
    options.after?.xid ?? null,
    options.after?.seq ?? null,
    options.limit + 1,
  ];
  const filters: string[] = [];
  if (options.tableId !== undefined) {
    values.push(options.tableId);
    filters.push(`AND e.table_id = $${values.length}`);
  }
  if (options.types !== undefined) {
    values.push(options.types);
    filters.push(`AND e.type = ANY ($${values.length}::text[])`);
  }
  const result = await client.query<{
    id: string | null;
    xid: string;
    seq: string;
    table_id: string | null;
    type: string;
    body: string;
    horizon: string;
    cut_xid: string;
    cut_seq: string;
    known: boolean;
  }>(
    `WITH horizon AS MATERIALIZED (
       SELECT ${HORIZON_SQL} AS xmin,
              COALESCE(c.xid, '0'::xid8) AS cut_xid, COALESCE(c.seq, 0) AS cut_seq,
              EXISTS (SELECT 1 FROM databases WHERE id = $1::uuid) AS known
         FROM (SELECT 1) one LEFT JOIN change_feed_pruned c ON c.database_id = $1::uuid),
     start AS MATERIALIZED (
       SELECT h.*, COALESCE($2::xid8, h.cut_xid) AS xid, COALESCE($3::bigint, h.cut_seq) AS seq FROM horizon h)
     SELECT e.id, ${XID_SQL}::text AS xid, e.seq::text AS seq, e.table_id, e.type, ${CHANGE_BODY_SQL} AS body,
            s.xmin::text AS horizon, s.cut_xid::text AS cut_xid, s.cut_seq::text AS cut_seq, s.known
       FROM start s
       LEFT JOIN LATERAL (
         SELECT * FROM ${OUTBOX_TABLE} e
          WHERE e.database_id = $1::uuid AND NOT e.suppressed
            AND (${XID_SQL}, e.seq) > (s.xid, s.seq)
            AND ${XID_SQL} < s.xmin
            AND (s.xid, s.seq) >= (s.cut_xid, s.cut_seq)
            ${filters.join(' ')}
          ORDER BY ${XID_SQL}, e.seq
          LIMIT $4) e ON true`,
    values,
  );
  const first = result.rows[0]!;
  if (!first.known) return { outcome: 'missing' };
  const cut = { xid: first.cut_xid, seq: first.cut_seq };
  const after = options.after ?? cut;
  if (comparePositions(after, cut) < 0) return { outcome: 'expired' };
  if (BigInt(after.xid) >= BigInt(first.horizon)) return { outcome: 'ahead' };
  const { rows, position, hasMore } = pageOf(result.rows, options.limit, after, first.horizon);
  return {
    outcome: 'read',
    changes: rows.map((row) => ({
      id: row.id,
      position: { xid: row.xid, seq: row.seq },
      tableId: row.table_id,
      type: row.type,
      bodyJson: row.body,
    })),
    position,
    hasMore,
  };
}

/**
 * The page of a read of `limit + 1` rows (one row of nulls when there were none, from its LEFT
 * JOIN): its first `limit` rows, where the reader stands after them (after the last, or where it
 * was, moved up to the horizon), and whether more were there.
 */
function pageOf<Row extends { id: string | null; xid: string; seq: string }>(
  read: readonly Row[],
  limit: number,
  after: ChangePosition,
  horizon: string,
): { rows: (Row & { id: string })[]; position: ChangePosition; hasMore: boolean } {
  const found = read.filter((row): row is Row & { id: string } => row.id !== null);
  const rows = found.slice(0, limit);
  const last = rows.at(-1);
  return {
    rows,
    position: last ? { xid: last.xid, seq: last.seq } : standingPosition(after, horizon),
    hasMore: found.length > limit,
  };
}

/** Negative when `a` comes before `b` in the feed, zero when they are the same place. */
export function comparePositions(a: ChangePosition, b: ChangePosition): number {
  const byXid = BigInt(a.xid) - BigInt(b.xid);
  if (byXid !== 0n) return byXid < 0n ? -1 : 1;
  const bySeq = BigInt(a.seq) - BigInt(b.seq);
  return bySeq === 0n ? 0 : bySeq < 0n ? -1 : 1;
}

/**
 * Where a reader that found nothing stands: where it was, or, when every transaction before the
 * horizon has ended and it was before the horizon, just before it (nothing older can come now).
 */
function standingPosition(at: ChangePosition, horizon: string): ChangePosition {
  const beforeHorizon = { xid: (BigInt(horizon) - 1n).toString(), seq: MAX_SEQ };
  return comparePositions(at, beforeHorizon) < 0 ? beforeHorizon : at;
}

/** Past every event of a transaction: positions of the same xid compare by seq. */
const MAX_SEQ = '9223372036854775807';

/** The feed's current end: every change committed so far is before it (`cursor=latest`). */
export async function latestChangePosition(client: Queryable): Promise<ChangePosition>;
/** The same for a database's feed: null when the database does not exist. */
export async function latestChangePosition(
  client: Queryable,
  databaseId: string,
): Promise<ChangePosition | null>;
export async function latestChangePosition(
  client: Queryable,
  databaseId?: string,
): Promise<ChangePosition | null> {
  const result = await client.query<{ horizon: string; known: boolean }>(
    `SELECT ${HORIZON_SQL}::text AS horizon,
            $1::uuid IS NULL OR EXISTS (SELECT 1 FROM databases WHERE id = $1::uuid) AS known`,
    [databaseId ?? null],
  );
  const { horizon, known } = result.rows[0]!;
  return known ? standingPosition({ xid: '0', seq: '0' }, horizon) : null;
}

export interface TailedChange extends StoredChange {
  databaseId: string;
}

export interface TailPage {
  changes: TailedChange[];
  /** After the last change handed out, or where the tail stands when there was none. */
  position: ChangePosition;
  hasMore: boolean;
}

/**
 * The live end of the feed for a process's streams: up to `limit` changes of any of `databaseIds`
 * after `after`, in feed order, under the same horizon as readChanges. Positions are global, so
 * one tail serves every database: each database's first `limit` through its own index, merged.
 */
export async function tailChanges(
  client: Queryable,
  options: { databaseIds: readonly string[]; after: ChangePosition; limit: number },
): Promise<TailPage> {
  const result = await client.query<{
    id: string | null;
    database_id: string;
    xid: string;
    seq: string;
    table_id: string | null;
    type: string;
    body: string;
    horizon: string;
  }>(
    `WITH horizon AS MATERIALIZED (SELECT ${HORIZON_SQL} AS xmin),
     tail AS (
       SELECT e.* FROM horizon h, unnest($1::uuid[]) d (id)
        CROSS JOIN LATERAL (
          SELECT e.id, e.database_id, ${XID_SQL} AS xid, e.seq, e.table_id, e.type, ${CHANGE_BODY_SQL} AS body
            FROM ${OUTBOX_TABLE} e
           WHERE e.database_id = d.id AND NOT e.suppressed
             AND (${XID_SQL}, e.seq) > ($2::xid8, $3::bigint)
             AND ${XID_SQL} < h.xmin
           ORDER BY ${XID_SQL}, e.seq
           LIMIT $4) e
        ORDER BY e.xid, e.seq
        LIMIT $4)
     SELECT t.id, t.database_id, t.xid::text AS xid, t.seq::text AS seq, t.table_id, t.type, t.body,
            h.xmin::text AS horizon
       FROM horizon h LEFT JOIN tail t ON true`,
    [options.databaseIds, options.after.xid, options.after.seq, options.limit + 1],
  );
  const { rows, position, hasMore } = pageOf(
    result.rows,
    options.limit,
    options.after,
    result.rows[0]!.horizon,
  );
  return {
    changes: rows.map((row) => ({
      id: row.id,
      databaseId: row.database_id,
      position: { xid: row.xid, seq: row.seq },
      tableId: row.table_id,
      type: row.type,
      bodyJson: row.body,
    })),
    position,
    hasMore,
  };
}
