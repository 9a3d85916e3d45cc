import type { FilterOperator } from '@recordbase/contracts/filters';
import type { ConditionContext, FieldSql, OperatorSql } from './types';

/**
 * Building blocks of the operators' SQL that several types share. Conventions of every
 * condition (docs/filters.md):
 * - `does_not_equal`, `does_not_contain` and `not_in` are the exact complements of `equals`,
 *   `contains` and `in`, so they also match empty values (IS DISTINCT FROM, IS NULL OR ...).
 * - Comparisons (`greater_than`, ...) never match an empty value.
 * - An empty `in` list matches nothing, an empty `not_in` list everything.
 */

export const isNull: OperatorSql = ({ column }) => `${column} IS NULL`;
export const isNotNull: OperatorSql = ({ column }) => `${column} IS NOT NULL`;

export const comparisonSql = {
  greater_than: '>',
  greater_than_or_equal_to: '>=',
  less_than: '<',
  less_than_or_equal_to: '<=',
} as const;
export type ComparisonOperator = keyof typeof comparisonSql;

export function isComparison(operator: FilterOperator): operator is ComparisonOperator {
  return Object.hasOwn(comparisonSql, operator);
}

type Operators = Partial<Record<FilterOperator, OperatorSql>>;

/** An operand read (and checked) by `read`, as a parameter cast to `cast`. */
const parameter = (read: (ctx: ConditionContext) => unknown, cast: string) => (ctx: ConditionContext) =>
  `${ctx.params.add(read(ctx))}::${cast}`;

/** `equals` and its complement `does_not_equal` over a scalar column. */
export function equalityOperators(read: (ctx: ConditionContext) => unknown, cast: string): Operators {
  const value = parameter(read, cast);
  return {
    equals: ({ column }, ctx) => `${column} = ${value(ctx)}`,
    does_not_equal: ({ column }, ctx) => `${column} IS DISTINCT FROM ${value(ctx)}`,
  };
}

/** The four comparisons, which never match an empty value (NULL compares to nothing). */
export function comparisonOperators(read: (ctx: ConditionContext) => unknown, cast: string): Operators {
  const value = parameter(read, cast);
  const compare =
    (operator: ComparisonOperator): OperatorSql =>
    ({ column }, ctx) =>
      `${column} ${comparisonSql[operator]} ${value(ctx)}`;
  return {
    greater_than: compare('greater_than'),
    greater_than_or_equal_to: compare('greater_than_or_equal_to'),
    less_than: compare('less_than'),
    less_than_or_equal_to: compare('less_than_or_equal_to'),
  };
}

/** `in` and `not_in` over a scalar column, the list cast to `cast[]`. */
export function listOperators(read: (ctx: ConditionContext) => unknown[], cast: string): Operators {
  const list = (ctx: ConditionContext) => `${ctx.params.add(read(ctx))}::${cast}[]`;
  return {
    in: ({ column }, ctx) => `${column} = ANY(${list(ctx)})`,
    not_in: ({ column }, ctx) => `(${column} IS NULL OR ${column} <> ALL(${list(ctx)}))`,
  };
}

/** One operator's SQL for a field whose every operator is one function of the operator. */
export function byOperator(
  operators: readonly FilterOperator[],
  condition: (sql: FieldSql, ctx: ConditionContext) => string,
): Operators {
  return Object.fromEntries(operators.map((operator) => [operator, condition]));
}

/** LIKE metacharacters of the operand taken literally, with `\` as the escape character. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

/** `column ILIKE pattern ESCAPE '\'` exactly: the trigram indexes on text columns serve this form. */
export function ilike(column: string, pattern: string, ctx: ConditionContext): string {
  return `${column} ILIKE ${ctx.params.add(pattern)}::text ESCAPE '\\'`;
}

/** The complement of `ilike`: an empty value contains nothing. */
export function notIlike(column: string, pattern: string, ctx: ConditionContext): string {
  return `(${column} IS NULL OR ${column} NOT ILIKE ${ctx.params.add(pattern)}::text ESCAPE '\\')`;
}
