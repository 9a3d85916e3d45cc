import type { FieldTemplate } from '@recordbase/contracts/fields';
import type { FilterOperator } from '@recordbase/contracts/filters';
import { failed, hashedKey, toJsonOrNull } from './column-sql';
import { needString, needStringList } from './operands';
import { equalityOperators, isNotNull, isNull, listOperators } from './operators';
import { asStringOrNull, lower, notSupported } from './oracle';
import { keepOptionColours, optionNames, unknownOption } from './select-options';
import { containsOperators, textColumnReadings } from './text-like';
import type { FieldTypeModule } from './types';

/** Single select in the oracle: option names match exactly, except `contains` (a substring, ignoring case). */
function matchSingleSelect(option: string | null, operator: FilterOperator, operand: unknown): boolean {
  switch (operator) {
    case 'equals':
      return option !== null && option === operand;
    case 'does_not_equal':
      return !matchSingleSelect(option, 'equals', operand);
    case 'contains':
      return option !== null && lower(option).includes(lower(operand as string));
    case 'does_not_contain':
      return !matchSingleSelect(option, 'contains', operand);
    case 'is_empty':
      return option === null;
    case 'is_not_empty':
      return option !== null;
    case 'in':
      return option !== null && (operand as string[]).includes(option);
    case 'not_in':
      return !matchSingleSelect(option, 'in', operand);
    default:
      throw notSupported(operator, 'single select');
  }
}

/** One option name of the template's options, in a text column. */
export const singleSelect: FieldTypeModule<'single_select'> = {
  type: 'single_select',
  formula: 'text',
  column: { sqlType: 'text' },
  prepared: 'columns',
  fromText: (text) => text.trim(),
  coerce: (value, { template, fail }) => {
    if (value === null) return null;
    if (!optionNames(template as FieldTemplate<'single_select'>).has(value as string)) {
      fail(unknownOption(value as string, template as FieldTemplate<'single_select'>));
    }
    return value;
  },
  json: ({ column }) => toJsonOrNull(column),
  filters: {
    ...equalityOperators((ctx) => needString(ctx, 'an option name'), 'text'),
    ...containsOperators,
    is_empty: isNull,
    is_not_empty: isNotNull,
    ...listOperators((ctx) => needStringList(ctx, 'an array of option names'), 'text'),
  },
  sort: ({ column }) => ({ expression: `${column} COLLATE "C"`, kind: 'text' }),
  match: { key: hashedKey },
  // Option names are at most 255 characters: well inside a btree row. Filters compare options in
  // the column's own collation, not the sort's "C", so they get their own index.
  readIndex: { order: (column) => `${column} COLLATE "C"`, filter: 'btree' },
  readings: (column) => ({ ...textColumnReadings(column), option: column }),
  convertFrom: (from) => {
    if (from.freeText !== undefined) return `NULLIF(btrim(${from.freeText}), '')`;
    if (from.numberColumn !== undefined) return `${from.numberColumn}::text`;
    if (from.options !== undefined) {
      const options = from.options;
      return `CASE WHEN cardinality(${options}) > 1 THEN ${failed(`array_to_string(${options}, ', ')`, 'single_select (one option)')} ELSE ${options}[1] END`;
    }
    return null;
  },
  storedValuesSql: (table, column, limit) =>
    `SELECT DISTINCT ${column} AS value FROM ${table} WHERE ${column} IS NOT NULL LIMIT ${limit}`,
  // Values of removed options are cleared.
  fitToTemplate: (table, column, template) => ({
    text: `UPDATE ${table} SET ${column} = NULL WHERE ${column} <> ALL($1::text[])`,
    values: [(template as FieldTemplate<'single_select'>).options.map((o) => o.name)],
  }),
  updatedTemplate: keepOptionColours,
  oracle: {
    matches: (value, operator, operand) => matchSingleSelect(asStringOrNull(value), operator, operand),
    sortKey: asStringOrNull,
  },
};
