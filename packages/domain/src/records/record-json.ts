import { moduleOfField } from '@recordbase/db/field-types';
import type { SqlParams } from '@recordbase/db/physical';
import { type ExpandedLink, expandedPieces } from './expand';
import { type FieldMeta, fieldSql, type TableMeta } from './table-meta';

/**
 * The SQL that renders a row of the physical table (aliased `r`) as the API's Record, so
 * PostgreSQL builds the JSON and Node only passes text along. Field ids and names go in as
 * parameters, never into the SQL text.
 */

const ISO_UTC = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** A field's value as JSON text, never SQL NULL (an empty value is the JSON `null`). */
export function valueJsonSql(table: TableMeta, field: FieldMeta): string {
  return moduleOfField(field).json(fieldSql(table, field));
}

export interface RecordJsonSql {
  /** The record as JSON text. */
  text: string;
  /**
   * Joined after the row source aliased `r`: renders each value once per row, though both `data`
   * and `fields` show it.
   */
  join: string;
}

/**
 * Renders the record by joining pieces of text: each value is turned into JSON once, and the
 * keys (field ids and names, JSON-encoded here) arrive as parameters. Cheaper than building two
 * json objects, which would encode every value twice.
 */
export function recordJsonSql(
  table: TableMeta,
  params: SqlParams,
  /**
   * Renders a field otherwise than a read would (a write's link fields, and the formulas reading
   * them, from its own input): given the usual SQL.
   */
  valueSql?: (field: FieldMeta, asRead: string) => string,
  /** The fields to render (a projection); all of the table's by default. */
  fields: readonly FieldMeta[] = table.fields,
  /** Link fields whose linked records are rendered beside their ids (`expand`). */
  expanded: readonly ExpandedLink[] = [],
): RecordJsonSql {
  const pieces: string[] = [`'{"id":"'`, 'r.id::text', `'","data":{'`];
  fields.forEach((field, i) => {
    pieces.push(`${params.add(`${i > 0 ? ',' : ''}${JSON.stringify(field.id)}:`)}::text`, `v.v${i}`);
  });
  pieces.push(`'},"fields":{'`);
  fields.forEach((field, i) => {
    pieces.push(`${params.add(`${i > 0 ? ',' : ''}${JSON.stringify(field.name)}:`)}::text`, `v.v${i}`);
  });
  pieces.push(
    `'},"createdAt":"'`,
    `to_char(r.created_at AT TIME ZONE 'UTC', ${ISO_UTC})`,
    `'","updatedAt":"'`,
    `to_char(r.updated_at AT TIME ZONE 'UTC', ${ISO_UTC})`,
    `'"'`,
    ...expandedPieces(table, expanded, params),
    `'}'`,
  );
  const values = fields.map((field, i) => {
    const value = valueJsonSql(table, field);
    return `${valueSql ? valueSql(field, value) : value} AS v${i}`;
  });
  return {
    text: `array_to_string(ARRAY[${pieces.join(', ')}], '')`,
    // OFFSET 0 keeps the planner from inlining the subquery (which would duplicate the expressions).
    join: values.length > 0 ? `CROSS JOIN LATERAL (SELECT ${values.join(', ')} OFFSET 0) v` : '',
  };
}
