import type { FieldType } from '@recordbase/contracts/fields';
import type { FilterOperator } from '@recordbase/contracts/filters';
import { quoteLiteral } from '../physical/naming';
import { failed, hashedKey, numberFromText, toJsonOrNull } from './column-sql';
import { needString, needStringList } from './operands';
import { equalityOperators, escapeLike, ilike, listOperators, notIlike } from './operators';
import { asStringOrNull, lower, notSupported } from './oracle';
import type { FieldTypeModule, OperatorSql, Readings } from './types';

/**
 * What the five free-text types (single line, long text, email, url, phone number) share: a text
 * column, '' stored as empty, the text operators, code point order. They differ only in how they
 * are built from other types (a module passes its `convertFrom`).
 */

/** Case-insensitive substring match; single selects use it too. */
export const containsOperators: Partial<Record<FilterOperator, OperatorSql>> = {
  contains: ({ column }, ctx) => ilike(column, `%${escapeLike(needString(ctx, 'a string'))}%`, ctx),
  does_not_contain: ({ column }, ctx) =>
    notIlike(column, `%${escapeLike(needString(ctx, 'a string'))}%`, ctx),
};

export const textOperators: Partial<Record<FilterOperator, OperatorSql>> = {
  ...equalityOperators((ctx) => needString(ctx, 'a string'), 'text'),
  ...containsOperators,
  starts_with: ({ column }, ctx) => ilike(column, `${escapeLike(needString(ctx, 'a string'))}%`, ctx),
  ends_with: ({ column }, ctx) => ilike(column, `%${escapeLike(needString(ctx, 'a string'))}`, ctx),
  is_empty: ({ column }) => `(${column} IS NULL OR ${column} = '')`,
  is_not_empty: ({ column }) => `(${column} IS NOT NULL AND ${column} <> '')`,
  ...listOperators((ctx) => needStringList(ctx, 'an array of strings'), 'text'),
};

/** Text in the oracle: `equals` and `in` are exact; `contains`, `starts_with`, `ends_with` ignore case. */
export function matchText(text: string | null, operator: FilterOperator, operand: unknown): boolean {
  switch (operator) {
    case 'equals':
      return text !== null && text === operand;
    case 'does_not_equal':
      return !matchText(text, 'equals', operand);
    case 'contains':
      return text !== null && lower(text).includes(lower(operand as string));
    case 'does_not_contain':
      return !matchText(text, 'contains', operand);
    case 'starts_with':
      return text !== null && lower(text).startsWith(lower(operand as string));
    case 'ends_with':
      return text !== null && lower(text).endsWith(lower(operand as string));
    case 'is_empty':
      return text === null || text === '';
    case 'is_not_empty':
      return !matchText(text, 'is_empty', operand);
    case 'in':
      return text !== null && (operand as string[]).includes(text);
    case 'not_in':
      return !matchText(text, 'in', operand);
    default:
      throw notSupported(operator, 'text');
  }
}

/** A text column read by other types: as itself, as a number, and (for selects) as free text. */
export function textColumnReadings(column: string): Readings {
  return { text: column, number: numberFromText(column), textColumn: column };
}

/** Trimmed text that must match the type's pattern (the one its write schema uses). */
export function validatedFrom(type: string, pattern: string) {
  return (from: Readings): string | null => {
    if (from.text === undefined) return null;
    const trimmed = `NULLIF(btrim(${from.text}), '')`;
    return `CASE WHEN ${trimmed} IS NULL OR ${trimmed} ~* ${quoteLiteral(pattern)} THEN ${trimmed} ELSE ${failed(trimmed, type)} END`;
  };
}

export function textLike<T extends FieldType>(
  type: T,
  convertFrom: FieldTypeModule['convertFrom'],
  fromText: (text: string) => string | undefined = (text) => text,
): FieldTypeModule<T> {
  return {
    type,
    column: { sqlType: 'text' },
    formula: 'text',
    prepared: 'columns',
    coerce: (value) => (value === null || value === '' ? null : value),
    fromText,
    json: ({ column }) => toJsonOrNull(column),
    filters: textOperators,
    sort: ({ column }) => ({ expression: `${column} COLLATE "C"`, kind: 'text' }),
    match: { key: hashedKey },
    // Text may be 100,000 characters: too long for a btree, so filters get a trigram index.
    readIndex: { filter: 'trigram' },
    readings: (column) => ({ ...textColumnReadings(column), freeText: column }),
    convertFrom,
    oracle: {
      matches: (value, operator, operand) => matchText(asStringOrNull(value), operator, operand),
      sortKey: asStringOrNull,
    },
  };
}
