import type pg from 'pg';
import { parse as parseArray } from 'postgres-array';
import type { PortalField } from './portal';

/**
 * From PostgreSQL's text output to the API's JSON: numbers as numbers where a JSON reader gets
 * the same value (bigint and numeric past that as strings), timestamps ISO 8601 in UTC, dates as
 * they are (YYYY-MM-DD: the role's DateStyle is ISO), JSON and arrays as JSON, the rest as text.
 * The role's settings (packages/db sql-roles.ts) fix the output styles this relies on.
 */

export interface SqlColumnType {
  /** As `format_type` names it: integer, text[], timestamp with time zone. */
  name: string;
  convert(text: string): unknown;
}

const asText = (text: string): unknown => text;

const asFloat = (text: string): unknown => {
  const number = Number(text);
  return Number.isFinite(number) ? number : text;
};

const asBigint = (text: string): unknown => {
  const number = Number(text);
  return Number.isSafeInteger(number) ? number : text;
};

/** A double holds any decimal of up to 15 significant digits and gives it back unchanged. */
const MAX_EXACT_DIGITS = 15;

export function asNumeric(text: string): unknown {
  const number = Number(text);
  if (!Number.isFinite(number)) return text; // NaN, Infinity
  // Significant digits run from the first non-zero digit to the last, the point aside.
  let first = -1;
  let last = -1;
  let position = 0;
  for (const character of text) {
    if (character < '0' || character > '9') continue;
    if (character !== '0') {
      if (first < 0) first = position;
      last = position;
    }
    position += 1;
  }
  return first < 0 || last - first < MAX_EXACT_DIGITS ? number : text;
}

/** `2026-11-24 03:00:00.5+00` (timestamptz in UTC) or without offset (timestamp). */
const TIMESTAMP = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?(?:\+00)?$/;

export function asTimestamp(text: string): unknown {
  const match = TIMESTAMP.exec(text);
  if (!match) return text; // infinity, years past 9999, BC: PostgreSQL's own text says it best
  const fraction = (match[3] ?? '').padEnd(3, '0');
  return `${match[1]}T${match[2]}.${fraction}Z`;
}

const converters: Record<string, (text: string) => unknown> = {
  bool: (text) => text === 't',
  int2: Number,
  int4: Number,
  oid: Number,
  int8: asBigint,
  float4: asFloat,
  float8: asFloat,
  numeric: asNumeric,
  json: JSON.parse,
  jsonb: JSON.parse,
  timestamp: asTimestamp,
  timestamptz: asTimestamp,
};

interface TypeRow {
  position: number;
  name: string;
  typname: string;
  category: string;
  element: string | null;
  delimiter: string | null;
}

function typeOf(row: TypeRow): SqlColumnType {
  if (row.category === 'A' && row.element !== null) {
    const element = converters[row.element];
    // Every built-in type but box separates array elements with a comma.
    if (row.delimiter !== ',') return { name: row.name, convert: asText };
    return {
      name: row.name,
      convert: element ? (text) => parseArray(text, element) : (text) => parseArray(text),
    };
  }
  return { name: row.name, convert: converters[row.typname] ?? asText };
}

/** Built-in types never change; a type a database defines may, so is looked up each time. */
const FIRST_NORMAL_OID = 16_384;
const builtInTypes = new Map<string, SqlColumnType>();
const keyOf = (field: PortalField) => `${field.dataTypeID}:${field.dataTypeModifier}`;

/** The type of each result column, on the query's own connection (it may read pg_type). */
export async function columnTypes(
  client: pg.Client,
  fields: readonly PortalField[],
): Promise<SqlColumnType[]> {
  const missing = fields
    .map((field, position) => ({ field, position }))
    .filter(({ field }) => !builtInTypes.has(keyOf(field)));
  const found = new Map<number, SqlColumnType>();
  if (missing.length > 0) {
    const { rows } = await client.query<TypeRow>(
      `SELECT f.position::int AS position, pg_catalog.format_type(t.oid, f.modifier) AS name,
              t.typname::text AS typname, t.typcategory AS category,
              e.typname::text AS element, e.typdelim AS delimiter
         FROM ROWS FROM (pg_catalog.unnest($1::oid[]), pg_catalog.unnest($2::int4[]), pg_catalog.unnest($3::int4[]))
              AS f(type, modifier, position)
         JOIN pg_catalog.pg_type t ON t.oid = f.type
         LEFT JOIN pg_catalog.pg_type e ON e.oid = t.typelem AND t.typcategory = 'A'`,
      [
        missing.map(({ field }) => field.dataTypeID),
        missing.map(({ field }) => field.dataTypeModifier),
        missing.map(({ position }) => position),
      ],
    );
    for (const row of rows) {
      const type = typeOf(row);
      found.set(row.position, type);
      const field = fields[row.position] as PortalField;
      if (field.dataTypeID < FIRST_NORMAL_OID) builtInTypes.set(keyOf(field), type);
    }
  }
  return fields.map(
    (field, position) =>
      builtInTypes.get(keyOf(field)) ?? found.get(position) ?? { name: 'unknown', convert: asText },
  );
}
