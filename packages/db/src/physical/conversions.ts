import type { FieldType } from '@recordbase/contracts/fields';
import { textValuePatterns } from '@recordbase/contracts/fields';
import { quoteLiteral } from './naming';

/**
 * SQL expressions that convert a column's values when its field changes type, used as
 * `ALTER COLUMN ... TYPE ... USING <expression>`. A value that cannot be converted raises (cast
 * errors, or rb_conversion_failed from the migrations), which aborts the whole change: a type
 * change never silently drops data. Pairs with no entry have no conversion and are refused.
 */

type TextualType = 'single_line_text' | 'long_text' | 'email' | 'url' | 'phone_number';
const textualTypes: readonly FieldType[] = ['single_line_text', 'long_text', 'email', 'url', 'phone_number'];
const doubleTypes: readonly FieldType[] = ['number', 'currency', 'percent', 'duration'];

const isTextual = (type: FieldType): type is TextualType => textualTypes.includes(type);
const isTextColumn = (type: FieldType) => isTextual(type) || type === 'single_select';
const isNumeric = (type: FieldType) => doubleTypes.includes(type) || type === 'rating';

const failed = (value: string, target: string) =>
  `rb_conversion_failed((${value})::text, ${quoteLiteral(target)})`;

function asText(from: FieldType, column: string): string | null {
  if (isTextColumn(from)) return column;
  if (isNumeric(from)) return `${column}::text`;
  switch (from) {
    case 'date':
      return `to_char(${column}, 'YYYY-MM-DD')`;
    case 'datetime':
      return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    case 'checkbox':
      return `CASE WHEN ${column} THEN 'true' END`;
    case 'multiple_select':
      return `NULLIF(array_to_string(${column}, ', '), '')`;
    default:
      return null;
  }
}

function asDouble(from: FieldType, column: string): string | null {
  if (isNumeric(from)) return `${column}::double precision`;
  if (isTextColumn(from)) {
    // PostgreSQL reads 'NaN' and 'Infinity' as numbers; JSON has no such values, so they do not convert.
    const number = `NULLIF(btrim(${column}), '')::double precision`;
    return `CASE WHEN ${number} IN ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8) THEN ${failed(column, 'a finite number')}::float8 ELSE ${number} END`;
  }
  if (from === 'checkbox') return `CASE WHEN ${column} THEN 1 ELSE 0 END::double precision`;
  return null;
}

/** PostgreSQL reads 'infinity' as a date; the API has no way to show one. */
function finiteOrFail(value: string, column: string, sqlType: 'date' | 'timestamptz'): string {
  return `CASE WHEN isfinite(${value}) IS FALSE THEN ${failed(column, 'a real date')}::${sqlType} ELSE ${value} END`;
}

export interface ConversionContext {
  /** Template of the field after the change (rating needs its max). */
  ratingMax?: number;
}

export function conversionExpression(
  from: FieldType,
  to: FieldType,
  column: string,
  context: ConversionContext = {},
): string | null {
  if (from === to) return column;
  if (from === 'attachments' || from === 'linked_record' || to === 'attachments' || to === 'linked_record') {
    return null;
  }
  if (isTextual(to)) {
    const text = asText(from, column);
    if (text === null) return null;
    if (to === 'single_line_text') return `regexp_replace(${text}, '[\\r\\n]+', ' ', 'g')`;
    if (to === 'email' || to === 'url' || to === 'phone_number') {
      const trimmed = `NULLIF(btrim(${text}), '')`;
      return `CASE WHEN ${trimmed} IS NULL OR ${trimmed} ~* ${quoteLiteral(textValuePatterns[to])} THEN ${trimmed} ELSE ${failed(trimmed, to)} END`;
    }
    return text;
  }
  if (doubleTypes.includes(to)) return asDouble(from, column);
  switch (to) {
    case 'rating': {
      const number = asDouble(from, column);
      if (number === null) return null;
      const max = context.ratingMax ?? 5;
      return `CASE WHEN (${number}) IS NULL THEN NULL WHEN (${number}) = trunc(${number}) AND (${number}) BETWEEN 0 AND ${max} THEN (${number})::smallint ELSE ${failed(number, `rating (a whole number from 0 to ${max})`)}::smallint END`;
    }
    case 'date':
      if (isTextColumn(from)) return finiteOrFail(`NULLIF(btrim(${column}), '')::date`, column, 'date');
      if (from === 'datetime') return `(${column} AT TIME ZONE 'UTC')::date`;
      return null;
    case 'datetime':
      if (isTextColumn(from))
        return finiteOrFail(`NULLIF(btrim(${column}), '')::timestamptz`, column, 'timestamptz');
      if (from === 'date') return `(${column}::timestamp AT TIME ZONE 'UTC')`;
      return null;
    case 'checkbox':
      if (isTextColumn(from)) return `COALESCE(NULLIF(btrim(${column}), '')::boolean, false)`;
      if (isNumeric(from)) return `COALESCE(${column} <> 0, false)`;
      return null;
    case 'single_select':
      if (isTextual(from)) return `NULLIF(btrim(${column}), '')`;
      if (isNumeric(from)) return `${column}::text`;
      if (from === 'multiple_select') {
        return `CASE WHEN cardinality(${column}) > 1 THEN ${failed(`array_to_string(${column}, ', ')`, 'single_select (one option)')} ELSE ${column}[1] END`;
      }
      return null;
    case 'multiple_select':
      if (from === 'single_select')
        return `CASE WHEN ${column} IS NULL THEN '{}'::text[] ELSE ARRAY[${column}] END`;
      if (isTextual(from)) {
        return `CASE WHEN ${column} IS NULL OR btrim(${column}) = '' THEN '{}'::text[] ELSE array_remove(regexp_split_to_array(btrim(${column}), '\\s*,\\s*'), '') END`;
      }
      return null;
    default:
      return null;
  }
}

export function canConvert(from: FieldType, to: FieldType): boolean {
  return conversionExpression(from, to, '"c"') !== null;
}
