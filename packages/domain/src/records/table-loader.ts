import { TABLE_ID_PATTERN } from '@recordbase/contracts/common';
import type { FieldTemplate, FieldType } from '@recordbase/contracts/fields';
import type pg from 'pg';
import { nameKey, tableNotFound } from '../access';
import { databaseNotFound } from '../access-policy';
import { buildTableMeta, type LinkedReader, type TableMeta, type ViewMeta } from './table-meta';

interface TableRow {
  database_id: string;
  schema_version: string;
  schema_name: string;
  table_id: string;
  table_name: string;
  primary_field_id: string | null;
  fields: { id: string; name: string; type: FieldType; template: FieldTemplate }[] | null;
  linked_readers: LinkedReader[] | null;
  views: ViewMeta[] | null;
}

/** The count, lookup and rollup fields reading a table through links (TableMeta's linkedReaders), as JSON. */
const linkedReadersSql = (databaseId: string, tableId: string) =>
  `(SELECT json_agg(json_build_object('tableId', f.table_id, 'fieldId', f.template ->> 'fieldId'))
      FROM fields f JOIN tables ft ON ft.id = f.table_id
     WHERE ft.database_id = ${databaseId} AND f.type IN ('count', 'lookup', 'rollup')
       AND f.template ->> 'tableId' = ${tableId})`;

/** A table's linkedReaders as they are now (in the caller's transaction). */
export async function loadLinkedReaders(
  client: Pick<pg.Pool, 'query'>,
  table: Pick<TableMeta, 'databaseId' | 'id'>,
): Promise<LinkedReader[] | undefined> {
  const result = await client.query<{ readers: LinkedReader[] | null }>(
    `SELECT ${linkedReadersSql('$1::uuid', '$2::text')} AS readers`,
    [table.databaseId, table.id],
  );
  return result.rows[0]?.readers ?? undefined;
}

/**
 * Everything a record request needs to know about its table, in one round trip (`id` comes from
 * access-policy.ts's accessibleDatabaseId).
 */
export async function loadTableMeta(
  pool: Pick<pg.Pool, 'query'>,
  id: string,
  tableRef: string,
): Promise<TableMeta> {
  const result = await pool.query<TableRow>(
    `SELECT d.id AS database_id, d.schema_version::text, d.schema_name, t.id AS table_id, t.name AS table_name, t.primary_field_id,
            (SELECT json_agg(json_build_object('id', f.id, 'name', f.name, 'type', f.type, 'template', f.template)
                             ORDER BY f.position)
               FROM fields f WHERE f.table_id = t.id) AS fields,
            ${linkedReadersSql('d.id', 't.id')} AS linked_readers,
            (SELECT json_agg(json_build_object('id', v.id, 'name', v.name, 'filter', v.filter, 'sort', v.sort,
                                               'fieldIds', v.field_ids, 'search', v.search,
                                               'watched', EXISTS (SELECT 1 FROM webhooks w WHERE w.view_id = v.id))
                             ORDER BY v.created_at, v.id)
               FROM views v WHERE v.table_id = t.id) AS views
       FROM databases d JOIN tables t ON t.database_id = d.id
      WHERE d.id = $1 AND (t.id = $2 OR t.name_key = $3)
      ORDER BY t.id = $2 DESC
      LIMIT 1`,
    [id, TABLE_ID_PATTERN.test(tableRef) ? tableRef : '', nameKey(tableRef)],
  );
  const row = result.rows[0];
  if (!row) {
    // The database's own table names, for the nearest one to be suggested.
    const database = await pool.query<{ names: string[] }>(
      `SELECT coalesce((SELECT array_agg(t.name ORDER BY t.created_at) FROM tables t WHERE t.database_id = d.id), '{}') AS names
         FROM databases d WHERE d.id = $1`,
      [id],
    );
    const names = database.rows[0]?.names;
    throw names === undefined ? databaseNotFound(id) : tableNotFound(tableRef, names);
  }
  const fields = row.fields ?? [];
  return buildTableMeta({
    databaseId: row.database_id,
    schemaName: row.schema_name,
    schemaVersion: row.schema_version,
    id: row.table_id,
    name: row.table_name,
    primaryFieldId: row.primary_field_id ?? fields[0]?.id ?? '',
    fields,
    ...(row.linked_readers ? { linkedReaders: row.linked_readers } : {}),
    ...(row.views ? { views: row.views } : {}),
  });
}
