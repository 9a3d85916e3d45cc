import { linkTableName, qualifiedTable, quoteIdent, type SqlParams } from '@recordbase/db/physical';
import type { FieldMeta, TableMeta } from './table-meta';

/**
 * The SQL that renders a row of the physical table (aliased `r`) as the API's Record, so
 * PostgreSQL builds the JSON and Node only passes text along. Field ids and names go in as
 * parameters, never into the SQL text.
 */

const ISO_UTC = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** Values that need computing (formatting, the link subquery); plain columns are read as they are. */
function computedValueSql(table: TableMeta, field: FieldMeta): string | null {
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
      return null;
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

export interface RecordJsonSql {
  /** The record as a json expression. */
  json: string;
  /**
   * Joined after the row source aliased `r`: computes each formatted value once per row (both
   * `data` and `fields` show it), where referencing the expression twice would run it twice.
   */
  join: string;
}

export function recordJsonSql(table: TableMeta, params: SqlParams): RecordJsonSql {
  const computed: string[] = [];
  const values = table.fields.map((field) => {
    const expression = computedValueSql(table, field);
    if (expression === null) return `r.${quoteIdent(field.id)}`;
    computed.push(`${expression} AS v${computed.length}`);
    return `v.v${computed.length - 1}`;
  });
  const byId = table.fields.map((field, i): [string, string] => [
    `${params.add(field.id)}::text`,
    values[i]!,
  ]);
  const byName = table.fields.map((field, i): [string, string] => [
    `${params.add(field.name)}::text`,
    values[i]!,
  ]);
  return {
    json: `json_build_object('id', r.id, 'data', ${objectSql(byId)}, 'fields', ${objectSql(byName)}, 'createdAt', to_char(r.created_at AT TIME ZONE 'UTC', ${ISO_UTC}), 'updatedAt', to_char(r.updated_at AT TIME ZONE 'UTC', ${ISO_UTC}))`,
    // OFFSET 0 keeps the planner from inlining the subquery (which would duplicate the expressions).
    join: computed.length > 0 ? `CROSS JOIN LATERAL (SELECT ${computed.join(', ')} OFFSET 0) v` : '',
  };
}
