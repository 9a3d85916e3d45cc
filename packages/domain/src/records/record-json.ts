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
  return {
    text: `array_to_string(ARRAY[${pieces.join(', ')}], '')`,
    join: valuesJoin(table, fields, valueSql),
  };
}

/** Each field's JSON text as `v.v{i}`, in the order of `fields`, joined after the row `r`. */
function valuesJoin(
  table: TableMeta,
  fields: readonly FieldMeta[],
  valueSql?: (field: FieldMeta, asRead: string) => string,
): string {
  const values = fields.map((field, i) => {
    const value = valueJsonSql(table, field);
    return `${valueSql ? valueSql(field, value) : value} AS v${i}`;
  });
  // OFFSET 0 keeps the planner from inlining the subquery (which would duplicate the expressions).
  return values.length > 0 ? `CROSS JOIN LATERAL (SELECT ${values.join(', ')} OFFSET 0) v` : '';
}

/** How a listing renders its records: as the API's Record, or as Airtable's (by name or by id). */
export type RecordShape = { kind: 'record' } | { kind: 'airtable'; byFieldId: boolean };

/** The JSON texts of the values Airtable leaves out of a record's fields: it shows nothing empty. */
const AIRTABLE_EMPTY_VALUES = `('null', '""', 'false', '[]')`;

/**
 * The row as Airtable's record, `{id, createdTime, fields}`, with empty values left out (the
 * entries are joined by array_to_string, which skips the NULL of a left-out one). Only for fields
 * whose JSON is already Airtable's: attachments, and arrays that may hold them, are reshaped in
 * Node (airtable/records.ts), so `renderedInSqlForAirtable` says which fields qualify.
 */
export function airtableRecordJsonSql(
  table: TableMeta,
  params: SqlParams,
  fields: readonly FieldMeta[],
  byFieldId: boolean,
): RecordJsonSql {
  const entries = fields.map((field, i) => {
    const key = params.add(`${JSON.stringify(byFieldId ? field.id : field.name)}:`);
    return `CASE WHEN v.v${i} IN ${AIRTABLE_EMPTY_VALUES} THEN NULL ELSE ${key}::text || v.v${i} END`;
  });
  const pieces = [
    `'{"id":"'`,
    'r.id::text',
    `'","createdTime":"'`,
    `to_char(r.created_at AT TIME ZONE 'UTC', ${ISO_UTC})`,
    `'","fields":{'`,
    `array_to_string(ARRAY[${entries.join(', ')}]::text[], ',')`,
    `'}}'`,
  ];
  return { text: `array_to_string(ARRAY[${pieces.join(', ')}], '')`, join: valuesJoin(table, fields) };
}

/**
 * Whether the field's JSON is the value Airtable shows: all but attachments (whose objects
 * Airtable shapes otherwise) and the computed arrays that may hold some (a lookup of attachments).
 */
export function renderedInSqlForAirtable(field: FieldMeta): boolean {
  if (field.type === 'attachments') return false;
  const computed = field.type === 'formula' || field.type === 'lookup' || field.type === 'rollup';
  return !computed || (field.template as { resultType?: string } | null)?.resultType !== 'array';
}

/** The SQL rendering a record of the shape asked for. */
export function shapedRecordJsonSql(
  table: TableMeta,
  params: SqlParams,
  shape: RecordShape,
  fields: readonly FieldMeta[],
  expanded: readonly ExpandedLink[],
): RecordJsonSql {
  return shape.kind === 'airtable'
    ? airtableRecordJsonSql(table, params, fields, shape.byFieldId)
    : recordJsonSql(table, params, undefined, fields, expanded);
}
