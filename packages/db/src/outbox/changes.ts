import type pg from 'pg';
import { OUTBOX_TABLE } from './append';

/**
 * The change feed's read of the outbox (migrations/*_outbox_commit_order.sql): a database's events
 * in an order that a later commit never cuts into, so a reader following the cursor sees every
 * committed event exactly once. An event is handed out only once every transaction older than
 * its own has ended (its xid below the snapshot's xmin), and events go by (xid, seq): whatever
 * commits after a read belongs to a transaction at or past that xmin, which sorts after all the
 * read handed out. Events appended for history only (suppressWebhooks) are not changes anyone
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
  source: string;
  createdAt: Date;
  /** The event's data as JSON text. */
  dataJson: string;
}

export interface ChangesPage {
  changes: StoredChange[];
  /** After the last change handed out, or where the reader stood when there was none. */
  position: ChangePosition;
  /** More changes are readable now. */
  hasMore: boolean;
}

const XID_SQL = `COALESCE(e.xid, '0'::xid8)`;

/**
 * Up to `limit` changes of the database after `after` (from the oldest kept without it), only of
 * table `tableId` and of `types` when given.
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
    options.after?.xid ?? '0',
    options.after?.seq ?? '0',
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
    id: string;
    xid: string;
    seq: string;
    table_id: string | null;
    type: string;
    source: string;
    created_at: Date;
    data: string;
    horizon: string;
  }>(
    `WITH horizon AS MATERIALIZED (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin)
     SELECT e.id, ${XID_SQL}::text AS xid, e.seq::text AS seq, e.table_id, e.type, e.source, e.created_at,
            e.data::text AS data, h.xmin::text AS horizon
       FROM horizon h
       LEFT JOIN LATERAL (
         SELECT * FROM ${OUTBOX_TABLE} e
          WHERE e.database_id = $1::uuid AND NOT e.suppressed
            AND (${XID_SQL}, e.seq) > ($2::xid8, $3::bigint)
            AND ${XID_SQL} < h.xmin
            ${filters.join(' ')}
          ORDER BY ${XID_SQL}, e.seq
          LIMIT $4) e ON true`,
    values,
  );
  const rows = result.rows.filter((row) => row.id !== null);
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  const horizon = result.rows[0]!.horizon;
  return {
    changes: page.map((row) => ({
      id: row.id,
      position: { xid: row.xid, seq: row.seq },
      tableId: row.table_id,
      type: row.type,
      source: row.source,
      createdAt: row.created_at,
      dataJson: row.data,
    })),
    position: last ? { xid: last.xid, seq: last.seq } : standingPosition(options.after, horizon),
    hasMore: rows.length > options.limit,
  };
}

/**
 * Where a reader that found nothing stands: where it was, or, when every transaction before the
 * horizon has ended and it was before the horizon, just before it (nothing older can come now).
 */
function standingPosition(after: ChangePosition | undefined, horizon: string): ChangePosition {
  const at = after ?? { xid: '0', seq: '0' };
  return BigInt(at.xid) < BigInt(horizon) - 1n
    ? { xid: (BigInt(horizon) - 1n).toString(), seq: '9223372036854775807' }
    : at;
}

/** The feed's current end: every change committed so far is before it (`cursor=latest`). */
export async function latestChangePosition(client: Queryable): Promise<ChangePosition> {
  const result = await client.query<{ horizon: string }>(
    'SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon',
  );
  return standingPosition(undefined, result.rows[0]!.horizon);
}
