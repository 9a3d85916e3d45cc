import type { FieldTemplate } from '@recordbase/contracts/fields';
import type { FilterOperator } from '@recordbase/contracts/filters';
import { toJsonOrNull } from './column-sql';
import { needString, needStringList } from './operands';
import { asArray, notSupported } from './oracle';
import { keepOptionColours, optionNames, unknownOption } from './select-options';
import { listFromText } from './text-cells';
import type { ConditionContext, FieldTypeModule } from './types';

const option = (ctx: ConditionContext) => `${ctx.params.add(needString(ctx, 'an option name'))}::text`;
const optionList = (ctx: ConditionContext) =>
  `${ctx.params.add(needStringList(ctx, 'an array of option names'))}::text[]`;

/** Multiple select in the oracle: the value is a set of option names; names match exactly. */
function matchMultipleSelect(options: string[], operator: FilterOperator, operand: unknown): boolean {
  switch (operator) {
    case 'contains':
      return options.includes(operand as string);
    case 'does_not_contain':
      return !options.includes(operand as string);
    case 'equals':
      // The selection is exactly the one option.
      return options.length > 0 && options.every((option) => option === operand);
    case 'does_not_equal':
      return !matchMultipleSelect(options, 'equals', operand);
    case 'in':
      return options.some((option) => (operand as string[]).includes(option));
    case 'not_in':
      return !matchMultipleSelect(options, 'in', operand);
    case 'is_empty':
      return options.length === 0;
    case 'is_not_empty':
      return options.length > 0;
    default:
      throw notSupported(operator, 'multiple select');
  }
}

/** A set of option names in a text[] column, never null ('{}' when empty). */
export const multipleSelect: FieldTypeModule<'multiple_select'> = {
  type: 'multiple_select',
  formula: 'array',
  column: { sqlType: 'text[]', notNullDefault: "'{}'::text[]" },
  prepared: 'columns',
  fromText: listFromText,
  coerce: (value, { template, fail }) => {
    if (value === null) return [];
    const options = optionNames(template as FieldTemplate<'multiple_select'>);
    const unknown = (value as string[]).find((name) => !options.has(name));
    if (unknown !== undefined) fail(unknownOption(unknown, template as FieldTemplate<'multiple_select'>));
    return [...new Set(value as string[])];
  },
  json: ({ column }) => toJsonOrNull(column),
  filters: {
    contains: ({ column }, ctx) => `${column} @> ARRAY[${option(ctx)}]`,
    does_not_contain: ({ column }, ctx) => `NOT (${column} @> ARRAY[${option(ctx)}])`,
    // Exactly the one option: the set of names is {operand}.
    equals: ({ column }, ctx) => {
      const one = option(ctx);
      return `(${column} @> ARRAY[${one}] AND ${column} <@ ARRAY[${one}])`;
    },
    does_not_equal: ({ column }, ctx) => {
      const one = option(ctx);
      return `NOT (${column} @> ARRAY[${one}] AND ${column} <@ ARRAY[${one}])`;
    },
    in: ({ column }, ctx) => `${column} && ${optionList(ctx)}`,
    not_in: ({ column }, ctx) => `NOT (${column} && ${optionList(ctx)})`,
    is_empty: ({ column }) => `cardinality(${column}) = 0`,
    is_not_empty: ({ column }) => `cardinality(${column}) > 0`,
  },
  sort: ({ column }) => ({ expression: `${column} COLLATE "C"`, kind: 'textArray' }),
  // Option sets match regardless of order; no index (a btree would compare them in order).
  match: { equals: (column, value) => `(${column} @> ${value} AND ${column} <@ ${value})` },
  readings: (column) => ({ text: `NULLIF(array_to_string(${column}, ', '), '')`, options: column }),
  convertFrom: (from) => {
    if (from.option !== undefined) {
      return `CASE WHEN ${from.option} IS NULL THEN '{}'::text[] ELSE ARRAY[${from.option}] END`;
    }
    if (from.freeText !== undefined) {
      const text = from.freeText;
      return `CASE WHEN ${text} IS NULL OR btrim(${text}) = '' THEN '{}'::text[] ELSE array_remove(regexp_split_to_array(btrim(${text}), '\\s*,\\s*'), '') END`;
    }
    return null;
  },
  storedValuesSql: (table, column, limit) =>
    `SELECT DISTINCT unnest(${column}) AS value FROM ${table} LIMIT ${limit}`,
  // Removed options are taken out of every selection.
  fitToTemplate: (table, column, template) => ({
    text: `UPDATE ${table} SET ${column} = ARRAY(SELECT v FROM unnest(${column}) AS v WHERE v = ANY($1::text[])) WHERE NOT ${column} <@ $1::text[]`,
    values: [(template as FieldTemplate<'multiple_select'>).options.map((o) => o.name)],
  }),
  updatedTemplate: keepOptionColours,
  oracle: {
    matches: (value, operator, operand) => matchMultipleSelect(asArray<string>(value), operator, operand),
    sortKey: (value) => asArray<string>(value),
  },
};
