import type pg from 'pg';
import { OUTBOX_TABLE } from './outbox/append';
import { readEventRecordsPage } from './outbox/revisions';
import { qualifiedTable, quoteIdent, quoteLiteral, systemColumns } from './physical';

/**
 * The record trash (migrations/*_record_trash.sql, *_deletions_in_trash.sql): a row per record per
 * deletion, which is the deletion's revision in history, holding the record's stored row and the
 * link rows naming it while it is in the trash (`stored` not null), until it is restored or purged.
 * The statements here are its only writers and readers, but for history's (outbox/revisions.ts)
 * and the retention sweep's delete with the event. A record's rendering, its deleter and the time
 * come from its record.deleted event.
 */

type Queryable = Pick<pg.Pool, 'query'>;

/** A link table naming records of a table on one side or both: from the catalog, never from input. */
export interface LinkTableOf {
  /** Schema-qualified, as the catalog prints regclass (quoted where needed). */
  linkTable: string;
  /** The tables its record_id and linked_id reference, printed the same way. */
  recordTable: string;
  linkedTable: string;
  /** Whether its record_id, and its linked_id, are records of the table asked about. */
  ownedByTable: boolean;
  linksToTable: boolean;
}

/** The link tables whose rows name records of `schemaName.tableId`, found through their foreign keys. */
export async function linkTablesOf(
  client: Queryable,
  schemaName: string,
  tableId: string,
): Promise<LinkTableOf[]> {
  const result = await client.query<{
    link_table: string;
    record_table: string;
    linked_table: string;
    owned: boolean;
    links_to: boolean;
  }>(
    `SELECT l.conrelid::regclass::text AS link_table, r.confrelid::regclass::text AS record_table,
            l.confrelid::regclass::text AS linked_table, r.confrelid = $1::regclass AS owned,
            l.confrelid = $1::regclass AS links_to
       FROM pg_constraint l
       JOIN pg_constraint r ON r.conrelid = l.conrelid AND r.contype = 'f'
        AND r.conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = l.conrelid AND attname = 'record_id')]
      WHERE l.contype = 'f'
        AND l.conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = l.conrelid AND attname = 'linked_id')]
        AND (l.confrelid = $1::regclass OR r.confrelid = $1::regclass)
      ORDER BY 1`,
    [qualifiedTable(schemaName, tableId)],
  );
  return result.rows.map((row) => ({
    linkTable: row.link_table,
    recordTable: row.record_table,
    linkedTable: row.linked_table,
    ownedByTable: row.owned,
    linksToTable: row.links_to,
  }));
}

/**
 * Deletes records `ids` of the table, copying each (in the order of their record.deleted event
 * `eventId`'s recordIds) and every link row naming it into the trash in the same statement (the
 * deletion's revision: the revisions trigger leaves record.deleted events to this): the
 * DELETE's RETURNING gives the rows, read once, and the link rows are read from the statement's
 * snapshot, before the foreign keys' cascade (which runs at its end) takes them. Returns the ids
 * deleted.
 */
export async function deleteIntoTrash(
  client: Queryable,
  table: { schemaName: string; id: string },
  ids: readonly string[],
  eventId: string,
): Promise<string[]> {
  const linkTables = await linkTablesOf(client, table.schemaName, table.id);
  const linkRows = linkTables.flatMap(({ linkTable, ownedByTable, linksToTable }) => {
    const sides: string[] = [];
    const row = `jsonb_build_object('table', ${quoteLiteral(linkTable)}, 'record_id', k.record_id, 'linked_id', k.linked_id, 'position', k.position)`;
    if (ownedByTable) sides.push(`SELECT ${row} AS link FROM ${linkTable} k WHERE k.record_id = g.id`);
    if (linksToTable) sides.push(`SELECT ${row} AS link FROM ${linkTable} k WHERE k.linked_id = g.id`);
    return sides;
  });
  const links =
    linkRows.length === 0
      ? `'[]'::jsonb`
      : `(SELECT COALESCE(jsonb_agg(s.link), '[]') FROM (${linkRows.join(' UNION ALL ')}) s)`;
  const result = await client.query<{ id: string }>(
    `WITH gone AS (
       DELETE FROM ${qualifiedTable(table.schemaName, table.id)} r WHERE r.id = ANY ($2::uuid[]) RETURNING r.*),
     trashed AS (
       INSERT INTO record_trash (table_id, record_id, event_seq, position, stored, links)
       SELECT $1, g.id, e.seq, x.position, to_jsonb(g), ${links}
         FROM gone g
         JOIN unnest($2::uuid[]) WITH ORDINALITY AS x(id, position) ON x.id = g.id
        CROSS JOIN (SELECT seq FROM ${OUTBOX_TABLE} WHERE id = $3::uuid) e
        WHERE ${HISTORY_ON_SQL})
     SELECT g.id::text AS id FROM gone g`,
    [table.id, ids, eventId],
  );
  return result.rows.map((row) => row.id);
}

/**
 * Whether history and the trash are kept: `recordbase.history` set to 'off' for the database (or
 * the session) turns both off, as the revisions trigger reads it (migrations/*_history_setting.sql).
 */
export const HISTORY_ON_SQL = `current_setting('recordbase.history', true) IS DISTINCT FROM 'off'`;

export interface TrashedRecord {
  recordId: string;
  /** The record as its record.deleted event holds it (JSON text). */
  recordJson: string | null;
  deletedAt: Date;
  /** The deleting key's `{id, name}` (JSON text), or null. */
  actorJson: string | null;
  seq: string;
  position: number;
}

/** Up to `limit` records of the table's trash, most recently deleted first, after `after`. */
export async function readTrash(
  client: Queryable,
  options: { tableId: string; after?: { seq: string; position: number }; limit: number },
): Promise<TrashedRecord[]> {
  const values: unknown[] = [options.tableId, options.limit];
  let after = '';
  if (options.after) {
    values.push(options.after.seq, options.after.position);
    after = 'AND (t.event_seq, t.position) < ($3::bigint, $4::int)';
  }
  const page = await readEventRecordsPage(
    client,
    `SELECT t.event_seq, t.position, t.record_id FROM record_trash t
      WHERE t.table_id = $1 AND t.stored IS NOT NULL ${after}
      ORDER BY t.event_seq DESC, t.position DESC
      LIMIT $2`,
    values,
  );
  return page.map((row) => ({
    recordId: row.recordId,
    recordJson: row.recordJson,
    deletedAt: row.createdAt,
    actorJson: row.actorJson,
    seq: row.seq,
    position: row.position,
  }));
}

/** The table's columns a row can be written with (not generated), in order. */
export async function writableColumnsOf(
  client: Queryable,
  schemaName: string,
  tableId: string,
): Promise<string[]> {
  const result = await client.query<{ attname: string }>(
    `SELECT attname FROM pg_attribute
      WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = ''
      ORDER BY attnum`,
    [qualifiedTable(schemaName, tableId)],
  );
  return result.rows.map((row) => row.attname);
}

/** The trashed records among `ids`, locked until the transaction ends, with their stored columns' names. */
export async function lockTrashed(
  client: Queryable,
  tableId: string,
  ids: readonly string[],
): Promise<Map<string, { columns: string[] }>> {
  const result = await client.query<{ record_id: string; columns: string[] }>(
    `SELECT record_id::text, ARRAY(SELECT jsonb_object_keys(stored) ORDER BY 1) AS columns
       FROM record_trash WHERE record_id = ANY($2::uuid[]) AND table_id = $1 AND stored IS NOT NULL
      ORDER BY record_id FOR UPDATE`,
    [tableId, ids],
  );
  return new Map(result.rows.map((row) => [row.record_id, { columns: row.columns }]));
}

/**
 * Puts trashed records `ids` of the table back as they were stored, `groups` saying with which
 * columns (each group's records stored those, and the table has them now; the others take their
 * defaults); then the link rows whose link table still names the table and whose other record
 * still exists. A record's own links keep their positions; a link another record had to it goes
 * after that record's links now. Then the trash rows go.
 */
export async function restoreTrashed(
  client: Queryable,
  table: { schemaName: string; id: string },
  ids: readonly string[],
  groups: readonly { ids: readonly string[]; columns: readonly string[] }[],
): Promise<void> {
  const ref = qualifiedTable(table.schemaName, table.id);
  for (const group of groups) {
    const columns = group.columns.map(quoteIdent);
    await client.query(
      `INSERT INTO ${ref} (${columns.join(', ')}) OVERRIDING SYSTEM VALUE
       SELECT ${columns.map((column) => `p.${column}`).join(', ')}
         FROM record_trash t CROSS JOIN LATERAL jsonb_populate_record(NULL::${ref}, t.stored) p
        WHERE t.record_id = ANY($2::uuid[]) AND t.table_id = $1 AND t.stored IS NOT NULL
        ORDER BY (t.stored ->> ${quoteLiteral(systemColumns.seq)})::bigint`,
      [table.id, group.ids],
    );
  }
  for (const { linkTable, recordTable, linkedTable, ownedByTable } of await linkTablesOf(
    client,
    table.schemaName,
    table.id,
  )) {
    const saved = `SELECT DISTINCT ON (x.record_id, x.linked_id) x.record_id, x.linked_id, x.position
           FROM record_trash t CROSS JOIN LATERAL jsonb_to_recordset(t.links) AS x("table" text, record_id uuid, linked_id uuid, position int)
          WHERE t.record_id = ANY($2::uuid[]) AND t.table_id = $1 AND t.stored IS NOT NULL AND x."table" = $3
          ORDER BY x.record_id, x.linked_id`;
    // The records on the other side, held (in id order) until the commit: one deleted meanwhile is
    // skipped here and left out below, never a foreign key the insert would break.
    for (const [side, referenced] of [
      ['record_id', recordTable],
      ['linked_id', linkedTable],
    ] as const) {
      await client.query(
        `SELECT 1 FROM ${referenced} o WHERE o.id IN (SELECT s.${side} FROM (${saved}) s) ORDER BY o.id FOR SHARE`,
        [table.id, ids, linkTable],
      );
    }
    await client.query(
      `WITH saved AS (${saved}),
       present AS (
         SELECT s.* FROM saved s
          WHERE EXISTS (SELECT 1 FROM ${recordTable} o WHERE o.id = s.record_id)
            AND EXISTS (SELECT 1 FROM ${linkedTable} o WHERE o.id = s.linked_id))
       INSERT INTO ${linkTable} (record_id, linked_id, position)
       SELECT s.record_id, s.linked_id,
              CASE WHEN ${ownedByTable ? 's.record_id = ANY($2::uuid[])' : 'false'} THEN s.position
                   ELSE COALESCE((SELECT max(k.position) FROM ${linkTable} k WHERE k.record_id = s.record_id), 0)
                        + row_number() OVER (PARTITION BY s.record_id ORDER BY s.position) END
         FROM present s
       ON CONFLICT DO NOTHING`,
      [table.id, ids, linkTable],
    );
  }
  // Out of the trash; the row stays as the deletion's revision.
  await client.query(
    `UPDATE record_trash SET stored = NULL, links = NULL
      WHERE record_id = ANY($2::uuid[]) AND table_id = $1 AND stored IS NOT NULL`,
    [table.id, ids],
  );
}

// Found through record_trash_purge_idx: the oldest deletions still in the trash first. The rows
// stay, as the deletions' revisions, without what they kept.
const PURGE_TRASH_SQL = `
UPDATE record_trash SET stored = NULL, links = NULL
 WHERE (event_seq, position) IN (
   SELECT t.event_seq, t.position FROM record_trash t JOIN ${OUTBOX_TABLE} e ON e.seq = t.event_seq
    WHERE t.stored IS NOT NULL AND e.created_at < now() - $1 * interval '1 millisecond'
    ORDER BY t.event_seq
    LIMIT $2
      FOR UPDATE OF t SKIP LOCKED)`;

/** Takes at most `batchSize` records deleted more than `olderThanMs` ago out of the trash; returns how many. */
export async function purgeTrash(client: Queryable, olderThanMs: number, batchSize: number): Promise<number> {
  const result = await client.query(PURGE_TRASH_SQL, [olderThanMs, batchSize]);
  return result.rowCount ?? 0;
}
