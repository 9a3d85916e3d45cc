import { UUID_PATTERN } from '@recordbase/contracts/common';
import { type FieldType, groupOfFieldType } from '@recordbase/contracts/fields';
import {
  type Filter,
  type FilterCondition,
  type FilterOperator,
  filterOperatorSupportsFieldType,
  filterOperatorsByFieldTypeGroup,
  readFilterCondition,
} from '@recordbase/contracts/records';
import { linkTableName, qualifiedTable, quoteIdent, type SqlParams } from '@recordbase/db/physical';
import { badRequest } from '@recordbase/server-kit/errors';
import { systemColumnSql } from './sort-order';
import { type FieldMeta, resolveFieldOrSystem, type TableMeta } from './table-meta';

/**
 * Compiles list filters (specification 2.4 and 4.1.2; api-contract "Records") to
 * SQL over a record table aliased `r`. Identifiers come only from the naming helpers and every
 * operand travels as a parameter with an explicit cast. docs/filters.md states the semantics for
 * API users; filter-evaluator.ts states them again, independently, in memory (the test oracle).
 *
 * Conventions of every condition below:
 * - `does_not_equal`, `does_not_contain` and `not_in` are the exact complements of `equals`,
 *   `contains` and `in`, so they also match empty values (IS DISTINCT FROM, IS NULL OR ...).
 * - Comparisons (`greater_than`, ...) never match an empty value.
 * - An empty `in` list matches nothing, an empty `not_in` list everything.
 */

/** The ORDER BY of a request's sort; sort-order.ts holds the order and the keyset conditions. */
export { compileSort } from './sort-order';

const SYSTEM_ID_OPERATORS: readonly FilterOperator[] = ['equals', 'does_not_equal', 'in', 'not_in'];

// ---------------------------------------------------------------------------------------------
// Filters
// ---------------------------------------------------------------------------------------------

export function compileFilter(filter: Filter, table: TableMeta, params: SqlParams): string {
  const and = (filter as { and?: Filter[] }).and;
  const or = (filter as { or?: Filter[] }).or;
  if (and !== undefined) return compileGroup(and, 'AND', table, params);
  if (or !== undefined) return compileGroup(or, 'OR', table, params);
  return compileCondition(filter as FilterCondition, table, params);
}

function compileGroup(members: Filter[], joiner: 'AND' | 'OR', table: TableMeta, params: SqlParams): string {
  // The request schema refuses empty groups; these are the neutral elements all the same.
  if (members.length === 0) return joiner === 'AND' ? 'TRUE' : 'FALSE';
  return `(${members.map((member) => compileFilter(member, table, params)).join(` ${joiner} `)})`;
}

/** What a condition compiler needs: where to put values and how to word a 400. */
interface ConditionContext {
  operator: FilterOperator;
  operand: unknown;
  params: SqlParams;
  /** Such as `number field "Amount"` or `system field "createdAt"`. */
  subject: string;
}

function compileCondition(condition: FilterCondition, table: TableMeta, params: SqlParams): string {
  const { field: ref, operator, operand } = readFilterCondition(condition);
  const target = resolveFieldOrSystem(table, ref);
  if (!target) throw badRequest(`filter: unknown field "${ref}"`);

  if (target.kind === 'system') {
    const subject = `system field "${target.name}"`;
    const supported = target.name === 'id' ? SYSTEM_ID_OPERATORS : filterOperatorsByFieldTypeGroup.date;
    if (!supported.includes(operator)) throw unsupported(operator, subject, supported);
    const ctx: ConditionContext = { operator, operand, params, subject };
    const column = systemColumnSql[target.name];
    if (target.name === 'id') return compileUuidEquality(column, ctx);
    // createdAt and updatedAt always hold a value.
    if (operator === 'is_empty') return 'FALSE';
    if (operator === 'is_not_empty') return 'TRUE';
    return compileDateTime(column, ctx);
  }

  const { field } = target;
  const subject = `${field.type} field "${field.name}"`;
  if (!filterOperatorSupportsFieldType(operator, field.type)) {
    throw unsupported(operator, subject, filterOperatorsByFieldTypeGroup[groupOfFieldType(field.type)]);
  }
  const ctx: ConditionContext = { operator, operand, params, subject };
  if (field.type === 'linked_record') return compileLinkedRecord(field, table, ctx);
  const column = `r.${quoteIdent(field.id)}`;
  return compileColumnCondition(field.type, column, ctx);
}

function compileColumnCondition(
  type: Exclude<FieldType, 'linked_record'>,
  column: string,
  ctx: ConditionContext,
) {
  switch (type) {
    case 'single_line_text':
    case 'long_text':
    case 'email':
    case 'url':
    case 'phone_number':
      return compileText(column, ctx);
    case 'number':
    case 'currency':
    case 'percent':
    case 'rating':
    case 'duration':
      return compileNumber(column, ctx);
    case 'date':
      return compileDate(column, ctx);
    case 'datetime':
      return compileDateTime(column, ctx);
    case 'single_select':
      return compileSingleSelect(column, ctx);
    case 'multiple_select':
      return compileMultipleSelect(column, ctx);
    case 'checkbox':
      return compileCheckbox(column, ctx);
    case 'attachments':
      return compileAttachments(column, ctx);
  }
}

// --- Text -------------------------------------------------------------------------------------

function compileText(column: string, ctx: ConditionContext): string {
  const { operator, params } = ctx;
  switch (operator) {
    case 'equals':
      return `${column} = ${params.add(needString(ctx, 'a string'))}::text`;
    case 'does_not_equal':
      return `${column} IS DISTINCT FROM ${params.add(needString(ctx, 'a string'))}::text`;
    case 'contains':
      return ilike(column, `%${escapeLike(needString(ctx, 'a string'))}%`, params);
    case 'does_not_contain':
      return notIlike(column, `%${escapeLike(needString(ctx, 'a string'))}%`, params);
    case 'starts_with':
      return ilike(column, `${escapeLike(needString(ctx, 'a string'))}%`, params);
    case 'ends_with':
      return ilike(column, `%${escapeLike(needString(ctx, 'a string'))}`, params);
    case 'is_empty':
      return `(${column} IS NULL OR ${column} = '')`;
    case 'is_not_empty':
      return `(${column} IS NOT NULL AND ${column} <> '')`;
    case 'in':
      return `${column} = ANY(${params.add(needStringList(ctx, 'an array of strings'))}::text[])`;
    case 'not_in':
      return `(${column} IS NULL OR ${column} <> ALL(${params.add(needStringList(ctx, 'an array of strings'))}::text[]))`;
    default:
      throw unreachable(ctx);
  }
}

/** LIKE metacharacters of the operand taken literally, with `\` as the escape character. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

function ilike(column: string, pattern: string, params: SqlParams): string {
  return `${column} ILIKE ${params.add(pattern)}::text ESCAPE '\\'`;
}

/** The complement of `ilike`: an empty value contains nothing. */
function notIlike(column: string, pattern: string, params: SqlParams): string {
  return `(${column} IS NULL OR ${column} NOT ILIKE ${params.add(pattern)}::text ESCAPE '\\')`;
}

// --- Number -----------------------------------------------------------------------------------

const comparisonSql = {
  greater_than: '>',
  greater_than_or_equal_to: '>=',
  less_than: '<',
  less_than_or_equal_to: '<=',
} as const;

function isComparison(operator: FilterOperator): operator is keyof typeof comparisonSql {
  return Object.hasOwn(comparisonSql, operator);
}

function compileNumber(column: string, ctx: ConditionContext): string {
  const { operator, params } = ctx;
  if (isComparison(operator)) {
    return `${column} ${comparisonSql[operator]} ${params.add(needNumber(ctx))}::double precision`;
  }
  switch (operator) {
    case 'equals':
      return `${column} = ${params.add(needNumber(ctx))}::double precision`;
    case 'does_not_equal':
      return `${column} IS DISTINCT FROM ${params.add(needNumber(ctx))}::double precision`;
    case 'is_empty':
      return `${column} IS NULL`;
    case 'is_not_empty':
      return `${column} IS NOT NULL`;
    case 'in':
      return `${column} = ANY(${params.add(needNumberList(ctx))}::double precision[])`;
    case 'not_in':
      return `(${column} IS NULL OR ${column} <> ALL(${params.add(needNumberList(ctx))}::double precision[]))`;
    default:
      throw unreachable(ctx);
  }
}

// --- Date and datetime ------------------------------------------------------------------------

function compileDate(column: string, ctx: ConditionContext): string {
  const { operator, params } = ctx;
  if (operator === 'is_empty') return `${column} IS NULL`;
  if (operator === 'is_not_empty') return `${column} IS NOT NULL`;
  const day = needDay(ctx);
  if (isComparison(operator)) return `${column} ${comparisonSql[operator]} ${params.add(day)}::date`;
  if (operator === 'equals') return `${column} = ${params.add(day)}::date`;
  if (operator === 'does_not_equal') return `${column} IS DISTINCT FROM ${params.add(day)}::date`;
  throw unreachable(ctx);
}

/** For datetime fields and the createdAt and updatedAt system fields: instants in time. */
function compileDateTime(column: string, ctx: ConditionContext): string {
  const { operator, params } = ctx;
  if (operator === 'is_empty') return `${column} IS NULL`;
  if (operator === 'is_not_empty') return `${column} IS NOT NULL`;
  const operand = needDateTimeOrDay(ctx);

  if (operand.kind === 'instant') {
    const at = `${params.add(operand.utc)}::timestamptz`;
    if (isComparison(operator)) return `${column} ${comparisonSql[operator]} ${at}`;
    if (operator === 'equals') return `${column} = ${at}`;
    if (operator === 'does_not_equal') return `${column} IS DISTINCT FROM ${at}`;
    throw unreachable(ctx);
  }

  // A date-only operand stands for the whole UTC day [start, end).
  const day = params.add(operand.day);
  const start = `(${day}::date::timestamp AT TIME ZONE 'UTC')`;
  const end = `((${day}::date + 1)::timestamp AT TIME ZONE 'UTC')`;
  switch (operator) {
    case 'equals':
      return `(${column} >= ${start} AND ${column} < ${end})`;
    case 'does_not_equal':
      return `(${column} IS NULL OR ${column} < ${start} OR ${column} >= ${end})`;
    case 'greater_than':
      return `${column} >= ${end}`;
    case 'greater_than_or_equal_to':
      return `${column} >= ${start}`;
    case 'less_than':
      return `${column} < ${start}`;
    case 'less_than_or_equal_to':
      return `${column} < ${end}`;
    default:
      throw unreachable(ctx);
  }
}

const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
/** The date-time form record values take: seconds required, fraction optional, Z or ±HH:MM. */
const DATE_TIME_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:(Z)|([+-])(\d{2}):(\d{2}))$/;

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** A calendar date PostgreSQL can hold and a user can mean: years 1 to 9999. */
function isValidDay(year: number, month: number, day: number): boolean {
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

const pad = (value: number, width: number) => String(value).padStart(width, '0');

type DateTimeOperand = { kind: 'day'; day: string } | { kind: 'instant'; utc: string };

/**
 * 'YYYY-MM-DD' as a day, or an ISO 8601 date-time with offset as an instant, written back as a
 * canonical UTC string with microseconds (PostgreSQL's precision; further digits are dropped).
 * Null when the text is neither or names no real date.
 */
export function parseDateTimeOperand(text: string): DateTimeOperand | null {
  const dayMatch = DAY_PATTERN.exec(text);
  if (dayMatch) {
    const [year, month, day] = dayMatch.slice(1, 4).map(Number) as [number, number, number];
    return isValidDay(year, month, day) ? { kind: 'day', day: text } : null;
  }
  const match = DATE_TIME_PATTERN.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as number[] as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = (match[7] ?? '').padEnd(6, '0').slice(0, 6);
  const zulu = match[8] !== undefined;
  const offsetHours = zulu ? 0 : Number(match[10]);
  const offsetMinutes = zulu ? 0 : Number(match[11]);
  if (!isValidDay(year, month, day) || hour > 23 || minute > 59 || second > 59) return null;
  if (offsetHours > 23 || offsetMinutes > 59) return null;

  // setUTCFullYear, unlike Date.UTC, does not read years 0 to 99 as 1900 to 1999.
  const instant = new Date(0);
  instant.setUTCFullYear(year, month - 1, day);
  instant.setUTCHours(hour, minute, second, Number(fraction.slice(0, 3)));
  const offsetSign = match[9] === '-' ? -1 : 1;
  instant.setTime(instant.getTime() - offsetSign * (offsetHours * 60 + offsetMinutes) * 60_000);
  const utcYear = instant.getUTCFullYear();
  if (utcYear < 1 || utcYear > 9999) return null;
  const utc =
    `${pad(utcYear, 4)}-${pad(instant.getUTCMonth() + 1, 2)}-${pad(instant.getUTCDate(), 2)}` +
    `T${pad(instant.getUTCHours(), 2)}:${pad(instant.getUTCMinutes(), 2)}:${pad(instant.getUTCSeconds(), 2)}` +
    `.${fraction}Z`;
  return { kind: 'instant', utc };
}

// --- Selection --------------------------------------------------------------------------------

/** Single select: a text column holding one option name. */
function compileSingleSelect(column: string, ctx: ConditionContext): string {
  const { operator, params } = ctx;
  switch (operator) {
    case 'equals':
      return `${column} = ${params.add(needString(ctx, 'an option name'))}::text`;
    case 'does_not_equal':
      return `${column} IS DISTINCT FROM ${params.add(needString(ctx, 'an option name'))}::text`;
    case 'contains':
      return ilike(column, `%${escapeLike(needString(ctx, 'a string'))}%`, params);
    case 'does_not_contain':
      return notIlike(column, `%${escapeLike(needString(ctx, 'a string'))}%`, params);
    case 'is_empty':
      return `${column} IS NULL`;
    case 'is_not_empty':
      return `${column} IS NOT NULL`;
    case 'in':
      return `${column} = ANY(${params.add(needStringList(ctx, 'an array of option names'))}::text[])`;
    case 'not_in':
      return `(${column} IS NULL OR ${column} <> ALL(${params.add(needStringList(ctx, 'an array of option names'))}::text[]))`;
    default:
      throw unreachable(ctx);
  }
}

/** Multiple select: a text[] column, never null ('{}' when empty). Option names match exactly. */
function compileMultipleSelect(column: string, ctx: ConditionContext): string {
  const { operator, params } = ctx;
  switch (operator) {
    case 'contains':
      return `${column} @> ARRAY[${params.add(needString(ctx, 'an option name'))}::text]`;
    case 'does_not_contain':
      return `NOT (${column} @> ARRAY[${params.add(needString(ctx, 'an option name'))}::text])`;
    case 'equals': {
      // Exactly the one option: the set of names is {operand}.
      const option = params.add(needString(ctx, 'an option name'));
      return `(${column} @> ARRAY[${option}::text] AND ${column} <@ ARRAY[${option}::text])`;
    }
    case 'does_not_equal': {
      const option = params.add(needString(ctx, 'an option name'));
      return `NOT (${column} @> ARRAY[${option}::text] AND ${column} <@ ARRAY[${option}::text])`;
    }
    case 'in':
      return `${column} && ${params.add(needStringList(ctx, 'an array of option names'))}::text[]`;
    case 'not_in':
      return `NOT (${column} && ${params.add(needStringList(ctx, 'an array of option names'))}::text[])`;
    case 'is_empty':
      return `cardinality(${column}) = 0`;
    case 'is_not_empty':
      return `cardinality(${column}) > 0`;
    default:
      throw unreachable(ctx);
  }
}

// --- Checkbox and attachments -----------------------------------------------------------------

function compileCheckbox(column: string, ctx: ConditionContext): string {
  const { operator, params, operand } = ctx;
  if (typeof operand !== 'boolean') throw needs(ctx, 'true or false');
  if (operator === 'equals') return `${column} = ${params.add(operand)}::boolean`;
  if (operator === 'does_not_equal') return `${column} IS DISTINCT FROM ${params.add(operand)}::boolean`;
  throw unreachable(ctx);
}

/** A jsonb array, never null ('[]' when empty). */
function compileAttachments(column: string, ctx: ConditionContext): string {
  if (ctx.operator === 'is_empty') return `jsonb_array_length(${column}) = 0`;
  if (ctx.operator === 'is_not_empty') return `jsonb_array_length(${column}) > 0`;
  throw unreachable(ctx);
}

// --- Linked records and record ids ------------------------------------------------------------

/** Any letters-and-dashes UUID, the form PostgreSQL's uuid type reads (case-insensitive). */

function compileLinkedRecord(field: FieldMeta, table: TableMeta, ctx: ConditionContext): string {
  const { operator, params } = ctx;
  const links = qualifiedTable(table.schemaName, linkTableName(field.id));
  const someLink = (condition: string) =>
    `EXISTS (SELECT 1 FROM ${links} AS lnk WHERE lnk.record_id = r.id${condition})`;
  switch (operator) {
    case 'contains':
      return someLink(` AND lnk.linked_id = ${params.add(needUuid(ctx))}::uuid`);
    case 'does_not_contain':
      return `NOT ${someLink(` AND lnk.linked_id = ${params.add(needUuid(ctx))}::uuid`)}`;
    case 'is_empty':
      return `NOT ${someLink('')}`;
    case 'is_not_empty':
      return someLink('');
    case 'in':
      return someLink(` AND lnk.linked_id = ANY(${params.add(needUuidList(ctx))}::uuid[])`);
    case 'not_in':
      return `NOT ${someLink(` AND lnk.linked_id = ANY(${params.add(needUuidList(ctx))}::uuid[])`)}`;
    default:
      throw unreachable(ctx);
  }
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
      throw unreachable(ctx);
  }
}

// --- Operand checks ---------------------------------------------------------------------------

function describeOperand(operand: unknown): string {
  const text = JSON.stringify(operand) ?? String(operand);
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

function needs(ctx: ConditionContext, what: string) {
  return badRequest(
    `filter: "${ctx.operator}" on ${ctx.subject} needs ${what}, got ${describeOperand(ctx.operand)}`,
  );
}

function unsupported(operator: FilterOperator, subject: string, supported: readonly FilterOperator[]) {
  return badRequest(
    `filter: operator "${operator}" is not supported for ${subject} (supported: ${supported.join(', ')})`,
  );
}

/** An operator the type's switch does not handle although the support table allows it: a bug. */
function unreachable(ctx: ConditionContext): Error {
  return new Error(`query compiler: no SQL for "${ctx.operator}" on ${ctx.subject}`);
}

function needString(ctx: ConditionContext, what: string): string {
  if (typeof ctx.operand !== 'string') throw needs(ctx, what);
  return ctx.operand;
}

function needStringList(ctx: ConditionContext, what: string): string[] {
  const { operand } = ctx;
  if (!Array.isArray(operand) || !operand.every((item) => typeof item === 'string')) throw needs(ctx, what);
  return operand;
}

function needNumber(ctx: ConditionContext): number {
  if (typeof ctx.operand !== 'number' || !Number.isFinite(ctx.operand)) throw needs(ctx, 'a number');
  return ctx.operand;
}

function needNumberList(ctx: ConditionContext): number[] {
  const { operand } = ctx;
  if (
    !Array.isArray(operand) ||
    !operand.every((item) => typeof item === 'number' && Number.isFinite(item))
  ) {
    throw needs(ctx, 'an array of numbers');
  }
  return operand;
}

/** A date field's operand: a day, or a date-time reduced to its UTC day. */
function needDay(ctx: ConditionContext): string {
  const parsed = typeof ctx.operand === 'string' ? parseDateTimeOperand(ctx.operand) : null;
  if (!parsed) throw needs(ctx, 'a valid date (YYYY-MM-DD) or ISO 8601 date-time');
  return parsed.kind === 'day' ? parsed.day : parsed.utc.slice(0, 10);
}

function needDateTimeOrDay(ctx: ConditionContext): DateTimeOperand {
  const parsed = typeof ctx.operand === 'string' ? parseDateTimeOperand(ctx.operand) : null;
  if (!parsed) {
    throw needs(
      ctx,
      'a valid ISO 8601 date-time with a time zone (such as 2024-05-01T12:00:00Z) or a date (YYYY-MM-DD)',
    );
  }
  return parsed;
}

function needUuid(ctx: ConditionContext): string {
  if (typeof ctx.operand !== 'string' || !UUID_PATTERN.test(ctx.operand))
    throw needs(ctx, 'a record id (UUID)');
  return ctx.operand;
}

function needUuidList(ctx: ConditionContext): string[] {
  const { operand } = ctx;
  if (
    !Array.isArray(operand) ||
    !operand.every((item) => typeof item === 'string' && UUID_PATTERN.test(item))
  ) {
    throw needs(ctx, 'an array of record ids (UUIDs)');
  }
  return operand;
}
