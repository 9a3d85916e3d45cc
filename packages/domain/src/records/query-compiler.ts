import { type InputPath, invalid } from '@recordbase/contracts/domain-errors';
import { type FieldType, groupOfField, systemFieldNames } from '@recordbase/contracts/fields';
import {
  type Filter,
  type FilterCondition,
  type FilterOperator,
  filterOperatorSupportsField,
  filterOperatorsByFieldTypeGroup,
  readFilterCondition,
} from '@recordbase/contracts/records';
import {
  type ConditionContext,
  dateTimeCondition,
  moduleOfField,
  needUuid,
  needUuidList,
} from '@recordbase/db/field-types';
import type { SqlParams } from '@recordbase/db/physical';
import { formulaConditionSql } from '../formula-fields';
import { systemColumnSql } from './sort-order';
import { fieldSql, resolveFieldOrSystem, type TableMeta, unknownField } from './table-meta';

/**
 * Compiles list filters (docs/filters.md) to SQL over a record table aliased `r`. Identifiers come
 * only from the naming helpers and every operand travels as a parameter with an explicit cast. Each field type's module in the registry
 * (@recordbase/db/field-types) holds the SQL of its operators, and their conventions
 * (field-types/operators.ts); this file resolves fields, checks support and words the refusals.
 * docs/filters.md states the semantics for API users; each module's oracle states them again,
 * independently, in memory (the test oracle, see filter-evaluator.ts).
 */

/** The date-time operand parser, which cursors and tests use too. */
export { parseDateTimeOperand } from '@recordbase/db/field-types';

/** The ORDER BY of a request's sort; sort-order.ts holds the order and the keyset conditions. */
export { compileSort } from './sort-order';

const SYSTEM_ID_OPERATORS: readonly FilterOperator[] = ['equals', 'does_not_equal', 'in', 'not_in'];

// ---------------------------------------------------------------------------------------------
// Filters
// ---------------------------------------------------------------------------------------------

/**
 * A condition in the formula language: the Airtable-compatible API's filterByFormula, ANDed into
 * a listing's filter by the domain (airtable/records.ts). The list body's filter schema has no
 * such member, so no other request can carry one; its refusals are at `filterByFormula`, the
 * parameter it came from.
 */
export interface FormulaFilter {
  formula: string;
}

/** What a listing filters on: a list body's filter, or one with a formula condition in it. */
export type ReadFilter = Filter | FormulaFilter | { and: ReadFilter[] } | { or: ReadFilter[] };

const isFormulaFilter = (filter: ReadFilter): filter is FormulaFilter =>
  typeof (filter as { formula?: unknown }).formula === 'string';

/**
 * Whether a filter holds a formula condition, whose literals are written into the statement's
 * text (a formula compiles without parameters): each formula makes a text of its own.
 */
export function holdsFormula(filter: ReadFilter | undefined): boolean {
  if (filter === undefined) return false;
  if (isFormulaFilter(filter)) return true;
  const members = (filter as { and?: ReadFilter[] }).and ?? (filter as { or?: ReadFilter[] }).or ?? [];
  return members.some(holdsFormula);
}

/** `path` is the filter's place in the input, each condition's its place in the tree (`['filter', 'and', 1]`). */
export function compileFilter(
  filter: ReadFilter,
  table: TableMeta,
  params: SqlParams,
  path: InputPath = ['filter'],
): string {
  const and = (filter as { and?: ReadFilter[] }).and;
  const or = (filter as { or?: ReadFilter[] }).or;
  if (and !== undefined) return compileGroup(and, 'AND', table, params, [...path, 'and']);
  if (or !== undefined) return compileGroup(or, 'OR', table, params, [...path, 'or']);
  if (isFormulaFilter(filter)) return formulaConditionSql(filter.formula, table, ['filterByFormula']);
  return compileCondition(filter as FilterCondition, table, params, path);
}

function compileGroup(
  members: ReadFilter[],
  joiner: 'AND' | 'OR',
  table: TableMeta,
  params: SqlParams,
  path: InputPath,
): string {
  // The request schema refuses empty groups; these are the neutral elements all the same.
  if (members.length === 0) return joiner === 'AND' ? 'TRUE' : 'FALSE';
  const compiled = members.map((member, index) => compileFilter(member, table, params, [...path, index]));
  return `(${compiled.join(` ${joiner} `)})`;
}

/** Where to put values and how to refuse an operand; `subject` is such as `number field "Amount"`. */
function conditionContext(
  operator: FilterOperator,
  operand: unknown,
  params: SqlParams,
  subject: string,
  path: InputPath,
) {
  const ctx: ConditionContext = {
    operator,
    operand,
    params,
    needs: (what) =>
      invalid(path, `"${operator}" on ${subject} needs ${what}, got ${describeOperand(operand)}`),
  };
  return ctx;
}

function compileCondition(
  condition: FilterCondition,
  table: TableMeta,
  params: SqlParams,
  path: InputPath,
): string {
  const { field: ref, operator, operand } = readFilterCondition(condition);
  const target = resolveFieldOrSystem(table, ref);
  if (!target) throw invalid([...path, 'field'], unknownField(table, ref, systemFieldNames));

  if (target.kind === 'system') {
    const subject = `system field "${target.name}"`;
    const supported = target.name === 'id' ? SYSTEM_ID_OPERATORS : filterOperatorsByFieldTypeGroup.date;
    if (!supported.includes(operator)) throw unsupported(operator, subject, supported, path);
    const ctx = conditionContext(operator, operand, params, subject, path);
    const column = systemColumnSql[target.name];
    if (target.name === 'id') return compileUuidEquality(column, ctx);
    // createdAt and updatedAt always hold a value.
    if (operator === 'is_empty') return 'FALSE';
    if (operator === 'is_not_empty') return 'TRUE';
    return dateTimeCondition(column, ctx);
  }

  const { field } = target;
  const subject = `${field.type} field "${field.name}"`;
  if (!filterOperatorSupportsField(operator, field)) {
    throw unsupported(operator, subject, filterOperatorsByFieldTypeGroup[groupOfField(field)], path);
  }
  const operatorSql = moduleOfField(field).filters[operator];
  if (!operatorSql) throw noSql(operator, field.type);
  return operatorSql(fieldSql(table, field), conditionContext(operator, operand, params, subject, path));
}

/** The `id` system field: never empty. */
function compileUuidEquality(column: string, ctx: ConditionContext): string {
  const { operator, params } = ctx;
  switch (operator) {
    case 'equals':
      return `${column} = ${params.add(needUuid(ctx))}::uuid`;
    case 'does_not_equal':
      return `${column} <> ${params.add(needUuid(ctx))}::uuid`;
    case 'in':
      return `${column} = ANY(${params.add(needUuidList(ctx))}::uuid[])`;
    case 'not_in':
      return `${column} <> ALL(${params.add(needUuidList(ctx))}::uuid[])`;
    default:
      throw new Error(`query compiler: no SQL for "${operator}" on the id field`);
  }
}

// --- Operand checks ---------------------------------------------------------------------------

function describeOperand(operand: unknown): string {
  const text = JSON.stringify(operand) ?? String(operand);
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

function unsupported(
  operator: FilterOperator,
  subject: string,
  supported: readonly FilterOperator[],
  path: InputPath,
) {
  return invalid(
    path,
    `operator "${operator}" is not supported for ${subject} (supported: ${supported.join(', ')})`,
  );
}

/** An operator the support table allows but the type's module has no SQL for: a bug. */
function noSql(operator: FilterOperator, type: FieldType): Error {
  return new Error(`query compiler: no SQL for "${operator}" on a ${type} field`);
}
