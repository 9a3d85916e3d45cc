import { quoteLiteral } from '../physical/naming';
import type { MatchKey } from './types';

/** SQL pieces several types share: JSON rendering, match keys and conversion checks. */

/** Any value PostgreSQL's to_json renders as the API does (text, option names, arrays). */
export const toJsonOrNull = (column: string) => `COALESCE(to_json(${column})::text, 'null')`;

/**
 * A number's and a boolean's text output is already its JSON (PostgreSQL prints the shortest
 * exact form of a double), so these skip to_json.
 */
export const textOrNull = (column: string) => `COALESCE(${column}::text, 'null')`;

/** Milliseconds, as record values and createdAt/updatedAt are answered. */
export const ISO_UTC_MILLIS = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/**
 * Match index keys. Fixed-width values are indexed as they are; text of any length by its
 * 64-bit hash, since a btree row holds at most ~2.7 kB (the match compares the values too).
 */
export const hashedKey: MatchKey = { of: (sql) => `hashtextextended(${sql}, 0)`, opclass: 'int8_ops' };
export const rawKey = (opclass: string): MatchKey => ({ of: (sql) => sql, opclass });

/**
 * A conversion that cannot convert a value raises rb_conversion_failed (from the migrations),
 * which aborts the whole change: a type change never silently drops data.
 */
export const failed = (value: string, target: string) =>
  `rb_conversion_failed((${value})::text, ${quoteLiteral(target)})`;

/** PostgreSQL reads 'infinity' as a date; the API has no way to show one. */
export function finiteOrFail(value: string, column: string, sqlType: 'date' | 'timestamptz'): string {
  return `CASE WHEN isfinite(${value}) IS FALSE THEN ${failed(column, 'a real date')}::${sqlType} ELSE ${value} END`;
}

/** Text as a double. PostgreSQL reads 'NaN' and 'Infinity' as numbers; JSON has none, so they fail. */
export function numberFromText(column: string): string {
  const number = `NULLIF(btrim(${column}), '')::double precision`;
  return `CASE WHEN ${number} IN ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8) THEN ${failed(column, 'a finite number')}::float8 ELSE ${number} END`;
}
