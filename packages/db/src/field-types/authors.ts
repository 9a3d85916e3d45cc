import type { FilterOperator } from '@recordbase/contracts/filters';
import { toJsonOrNull } from './column-sql';
import { neverWritten, notConvertedInto } from './computed';
import { matchText, textOperators } from './text-like';
import type { FieldSql, FieldTypeModule, OperatorSql, WrittenSpec } from './types';

/**
 * created_by and last_modified_by: `{id, name}` of the API key that wrote the record (`id` is
 * "root" for the root key), kept in a jsonb column by the write itself (`written`), since only
 * the write knows its key. The name is what they are as text: filters (the text operators), sorts,
 * search and formulas read it; converted to a text type, a field keeps the names. Records there
 * before the field was added have no known author: null.
 */

/** The key's name, as these fields read as text. */
const nameOf = (column: string) => `(${column} ->> 'name')`;

const onName =
  (operator: OperatorSql): OperatorSql =>
  (sql: FieldSql, ctx) =>
    operator({ ...sql, column: nameOf(sql.column) }, ctx);

const nameOperators = Object.fromEntries(
  Object.entries(textOperators).map(([operator, sql]) => [operator, onName(sql as OperatorSql)]),
) as Partial<Record<FilterOperator, OperatorSql>>;

const authorName = (value: unknown): string | null =>
  typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string'
    ? (value as { name: string }).name
    : null;

function author<T extends 'created_by' | 'last_modified_by'>(
  type: T,
  written: WrittenSpec,
): FieldTypeModule<T> {
  return {
    type,
    column: { sqlType: 'jsonb' },
    primary: false,
    formula: 'text',
    written,
    coerce: neverWritten,
    json: ({ column }) => toJsonOrNull(column),
    filters: nameOperators,
    sort: ({ column }) => ({ expression: `${nameOf(column)} COLLATE "C"`, kind: 'text' }),
    readings: (column) => ({ text: nameOf(column) }),
    convertFrom: notConvertedInto,
    oracle: {
      matches: (value, operator, operand) => matchText(authorName(value), operator, operand),
      sortKey: authorName,
    },
  };
}

export const createdBy = author('created_by', { inserted: ({ author }) => author });

/** Every write to the record moves it, whatever it changed. */
export const lastModifiedBy = author('last_modified_by', {
  inserted: ({ author }) => author,
  updated: ({ author }) => author,
});
