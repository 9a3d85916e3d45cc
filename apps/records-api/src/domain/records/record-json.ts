import { linkTableName, qualifiedTable, quoteIdent, type SqlParams } from '@recordbase/db/physical';
import type { FieldMeta, TableMeta } from './table-meta';

/**
 * The SQL that renders a row of the physical table (aliased `r`) as the API's Record, so
 * PostgreSQL builds the JSON and Node only passes text along. Field ids and names go in as
 * parameters, never into the SQL text.
 */

const ISO_UTC = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

function valueSql(table: TableMeta, field: FieldMeta): string {
  const column = `r.${quoteIdent(field.id)}`;
  switch (field.type) {
    case 'date':
      return `to_char(${column}, 'YYYY-MM-DD')`;
    case 'datetime':
      return `to_char(${column} AT TIME ZONE 'UTC', ${ISO_UTC})`;
    case 'multiple_select':
      return `to_json(${column})`;
    case 'linked_record': {
      const link = qualifiedTable(table.schemaName, linkTableName(field.id));
      return `COALESCE((SELECT json_agg(l.linked_id ORDER BY l.position) FROM ${link} l WHERE l.record_id = r.id), '[]'::json)`;
    }
    default:
      return column;
  }
}

/** json_build_object takes at most 100 arguments; wider tables are built in chunks and merged. */
const PAIRS_PER_CALL = 50;

function objectSql(pairs: [key: string, value: string][]): string {
  if (pairs.length === 0) return `'{}'::json`;
  if (pairs.length <= PAIRS_PER_CALL)
    return `json_build_object(${pairs.map(([k, v]) => `${k}, ${v}`).join(', ')})`;
  const chunks: string[] = [];
  for (let i = 0; i < pairs.length; i += PAIRS_PER_CALL) {
    chunks.push(
      `jsonb_build_object(${pairs
        .slice(i, i + PAIRS_PER_CALL)
        .map(([k, v]) => `${k}, ${v}`)
        .join(', ')})`,
    );
  }
  return `(${chunks.join(' || ')})::json`;
}

export function recordJsonSql(table: TableMeta, params: SqlParams): string {
  const values = table.fields.map((field) => valueSql(table, field));
  const byId = table.fields.map((field, i): [string, string] => [
    `${params.add(field.id)}::text`,
    values[i]!,
  ]);
  const byName = table.fields.map((field, i): [string, string] => [
    `${params.add(field.name)}::text`,
    values[i]!,
  ]);
  return `json_build_object('id', r.id, 'data', ${objectSql(byId)}, 'fields', ${objectSql(byName)}, 'createdAt', to_char(r.created_at AT TIME ZONE 'UTC', ${ISO_UTC}), 'updatedAt', to_char(r.updated_at AT TIME ZONE 'UTC', ${ISO_UTC}))`;
}
