import type { FieldType } from '@recordbase/contracts/fields';
import {
  type Filter,
  type FilterCondition,
  type FilterOperator,
  readFilterCondition,
  type Sort,
  type TableRecord,
} from '@recordbase/contracts/records';
import { resolveFieldOrSystem, type TableMeta } from './table-meta';

/**
 * The filter and sort semantics of docs/filters.md, evaluated in memory over records in API
 * shape. Written separately from query-compiler.ts on purpose: it is the oracle the property
 * tests hold the SQL against, so it favours the plainest possible statement of each rule.
 *
 * It expects a filter the compiler accepted (unknown fields, unsupported operators and operands
 * of the wrong shape throw plain errors here, with no care for the wording).
 *
 * Agreement with PostgreSQL holds under these conditions, which property tests must respect:
 * - Case-insensitive matching lowercases both sides with `toLowerCase()`; PostgreSQL's ILIKE
 *   lowercases the same way for ASCII only, so generate ASCII text.
 * - Strings sort by UTF-16 code unit (`a < b`); the SQL sorts with `COLLATE "C"` (code point
 *   order), which agrees for text without characters outside the Basic Multilingual Plane.
 * - Date-times compare as instants at microsecond precision (PostgreSQL's), so records must
 *   carry their full stored precision.
 */

// ---------------------------------------------------------------------------------------------
// Filters
// ---------------------------------------------------------------------------------------------

export function matchesFilter(record: TableRecord, filter: Filter, table: TableMeta): boolean {
  if ('and' in filter && filter.and !== undefined) {
    return filter.and.every((member) => matchesFilter(record, member, table));
  }
  if ('or' in filter && filter.or !== undefined) {
    return filter.or.some((member) => matchesFilter(record, member, table));
  }
  const { field, operator, operand } = readFilterCondition(filter as FilterCondition);
  const target = resolveFieldOrSystem(table, field);
  if (target === undefined) throw new Error(`unknown field ${field}`);

  if (target.kind === 'system') {
    if (target.name === 'id') return matchRecordId(record.id, operator, operand);
    if (operator === 'is_empty') return false;
    if (operator === 'is_not_empty') return true;
    return matchDateTime(
      target.name === 'createdAt' ? record.createdAt : record.updatedAt,
      operator,
      operand,
    );
  }

  const value: unknown = record.data[target.field.id];
  return matchByType(target.field.type, value, operator, operand);
}

function matchByType(type: FieldType, value: unknown, operator: FilterOperator, operand: unknown): boolean {
  switch (type) {
    case 'single_line_text':
    case 'long_text':
    case 'email':
    case 'url':
    case 'phone_number':
      return matchText(asStringOrNull(value), operator, operand);
    case 'number':
    case 'currency':
    case 'percent':
    case 'rating':
    case 'duration':
      return matchNumber(typeof value === 'number' ? value : null, operator, operand);
    case 'date':
      return matchDate(asStringOrNull(value), operator, operand);
    case 'datetime':
      return matchDateTime(asStringOrNull(value), operator, operand);
    case 'single_select':
      return matchSingleSelect(asStringOrNull(value), operator, operand);
    case 'multiple_select':
      return matchMultipleSelect(Array.isArray(value) ? (value as string[]) : [], operator, operand);
    case 'checkbox':
      return matchCheckbox(value === true, operator, operand);
    case 'attachments':
      return matchAttachments(Array.isArray(value) ? value : [], operator);
    case 'linked_record':
      return matchLinkedRecords(Array.isArray(value) ? (value as string[]) : [], operator, operand);
  }
}

function asStringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function notSupported(operator: FilterOperator, what: string): Error {
  return new Error(`operator ${operator} is not supported for ${what}`);
}

const lower = (text: string) => text.toLowerCase();

/** Text: `equals` and `in` are exact; `contains`, `starts_with`, `ends_with` ignore case. */
function matchText(text: string | null, operator: FilterOperator, operand: unknown): boolean {
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

/** Numbers: comparisons never match an empty value. */
function matchNumber(number: number | null, operator: FilterOperator, operand: unknown): boolean {
  switch (operator) {
    case 'equals':
      return number !== null && number === operand;
    case 'does_not_equal':
      return !matchNumber(number, 'equals', operand);
    case 'greater_than':
      return number !== null && number > (operand as number);
    case 'greater_than_or_equal_to':
      return number !== null && number >= (operand as number);
    case 'less_than':
      return number !== null && number < (operand as number);
    case 'less_than_or_equal_to':
      return number !== null && number <= (operand as number);
    case 'is_empty':
      return number === null;
    case 'is_not_empty':
      return number !== null;
    case 'in':
      return number !== null && (operand as number[]).includes(number);
    case 'not_in':
      return !matchNumber(number, 'in', operand);
    default:
      throw notSupported(operator, 'numbers');
  }
}

const DAY_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const MICROS_PER_DAY = 86_400_000_000n;

/**
 * An ISO 8601 date-time with Z or ±HH:MM as microseconds since the epoch. Date.parse reads the
 * whole seconds and the offset; the fraction is added digit by digit (beyond six it is dropped).
 */
export function epochMicros(isoDateTime: string): bigint {
  const parts = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(isoDateTime);
  if (parts === null) throw new Error(`not an ISO 8601 date-time: ${isoDateTime}`);
  const wholeSecondsMillis = Date.parse(`${parts[1]}${parts[3]}`);
  if (Number.isNaN(wholeSecondsMillis)) throw new Error(`not a valid date-time: ${isoDateTime}`);
  const fractionMicros = (parts[2] ?? '').padEnd(6, '0').slice(0, 6);
  return BigInt(wholeSecondsMillis) * 1000n + BigInt(fractionMicros);
}

/** A date field's operand as a day: a date-time operand counts as its UTC day. */
function operandDay(operand: unknown): string {
  const text = operand as string;
  if (DAY_ONLY.test(text)) return text;
  return new Date(Number(epochMicros(text) / 1000n)).toISOString().slice(0, 10);
}

/** Dates ('YYYY-MM-DD', which compare correctly as strings). */
function matchDate(day: string | null, operator: FilterOperator, operand: unknown): boolean {
  if (operator === 'is_empty') return day === null;
  if (operator === 'is_not_empty') return day !== null;
  if (operator === 'does_not_equal') return !matchDate(day, 'equals', operand);
  if (day === null) return false;
  const other = operandDay(operand);
  switch (operator) {
    case 'equals':
      return day === other;
    case 'greater_than':
      return day > other;
    case 'greater_than_or_equal_to':
      return day >= other;
    case 'less_than':
      return day < other;
    case 'less_than_or_equal_to':
      return day <= other;
    default:
      throw notSupported(operator, 'dates');
  }
}

/**
 * Date-times. Every operand is a span [from, to) of microseconds: a date-only operand is its
 * whole UTC day, a date-time operand the single microsecond it names. Then "equals" is "within
 * the span", "greater than" is "at or after its end", "less than" is "before its start".
 */
function matchDateTime(value: string | null, operator: FilterOperator, operand: unknown): boolean {
  if (operator === 'is_empty') return value === null;
  if (operator === 'is_not_empty') return value !== null;
  if (operator === 'does_not_equal') return !matchDateTime(value, 'equals', operand);
  if (value === null) return false;
  const at = epochMicros(value);
  const text = operand as string;
  const from = DAY_ONLY.test(text) ? epochMicros(`${text}T00:00:00Z`) : epochMicros(text);
  const to = DAY_ONLY.test(text) ? from + MICROS_PER_DAY : from + 1n;
  switch (operator) {
    case 'equals':
      return from <= at && at < to;
    case 'greater_than':
      return at >= to;
    case 'greater_than_or_equal_to':
      return at >= from;
    case 'less_than':
      return at < from;
    case 'less_than_or_equal_to':
      return at < to;
    default:
      throw notSupported(operator, 'date-times');
  }
}

/** Single select: option names match exactly, except `contains` (a substring, ignoring case). */
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

/** Multiple select: the value is a set of option names; names match exactly. */
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

function matchCheckbox(checked: boolean, operator: FilterOperator, operand: unknown): boolean {
  if (operator === 'equals') return checked === operand;
  if (operator === 'does_not_equal') return checked !== operand;
  throw notSupported(operator, 'checkbox');
}

function matchAttachments(attachments: unknown[], operator: FilterOperator): boolean {
  if (operator === 'is_empty') return attachments.length === 0;
  if (operator === 'is_not_empty') return attachments.length > 0;
  throw notSupported(operator, 'attachments');
}

/** Linked records: UUIDs, compared without regard to case as PostgreSQL's uuid type does. */
function matchLinkedRecords(linkedIds: string[], operator: FilterOperator, operand: unknown): boolean {
  const ids = linkedIds.map(lower);
  switch (operator) {
    case 'contains':
      return ids.includes(lower(operand as string));
    case 'does_not_contain':
      return !ids.includes(lower(operand as string));
    case 'is_empty':
      return ids.length === 0;
    case 'is_not_empty':
      return ids.length > 0;
    case 'in':
      return (operand as string[]).some((id) => ids.includes(lower(id)));
    case 'not_in':
      return !(operand as string[]).some((id) => ids.includes(lower(id)));
    default:
      throw notSupported(operator, 'linked records');
  }
}

/** The `id` system field: always present, so `does_not_equal` and `not_in` are plain negations. */
function matchRecordId(id: string, operator: FilterOperator, operand: unknown): boolean {
  switch (operator) {
    case 'equals':
      return lower(id) === lower(operand as string);
    case 'does_not_equal':
      return lower(id) !== lower(operand as string);
    case 'in':
      return (operand as string[]).some((candidate) => lower(candidate) === lower(id));
    case 'not_in':
      return !(operand as string[]).some((candidate) => lower(candidate) === lower(id));
    default:
      throw notSupported(operator, 'the id field');
  }
}

// ---------------------------------------------------------------------------------------------
// Sorting
// ---------------------------------------------------------------------------------------------

/** What a value sorts by. `null` is an empty value and the smallest of all. */
type SortKey = null | number | bigint | string | boolean | string[];

/**
 * Negative when `a` comes first, positive when `b` does, 0 when the sort cannot tell them apart
 * (the service then falls back to insertion order, which records do not carry). No sort means
 * createdAt ascending.
 */
export function compareForSort(
  a: TableRecord,
  b: TableRecord,
  sort: Sort[] | undefined,
  table: TableMeta,
): number {
  const entries: Sort[] =
    sort === undefined || sort.length === 0 ? [{ field: 'createdAt', direction: 'asc' }] : sort;
  for (const entry of entries) {
    const order = compareKeys(sortKey(a, entry.field, table), sortKey(b, entry.field, table));
    if (order !== 0) return entry.direction === 'desc' ? -order : order;
  }
  return 0;
}

function sortKey(record: TableRecord, ref: string, table: TableMeta): SortKey {
  const target = resolveFieldOrSystem(table, ref);
  if (target === undefined) throw new Error(`unknown field ${ref}`);
  if (target.kind === 'system') {
    if (target.name === 'id') return lower(record.id);
    return epochMicros(target.name === 'createdAt' ? record.createdAt : record.updatedAt);
  }
  const value: unknown = record.data[target.field.id];
  switch (target.field.type) {
    case 'single_line_text':
    case 'long_text':
    case 'email':
    case 'url':
    case 'phone_number':
    case 'single_select':
    case 'date': // 'YYYY-MM-DD' sorts as a string
      return asStringOrNull(value);
    case 'number':
    case 'currency':
    case 'percent':
    case 'rating':
    case 'duration':
      return typeof value === 'number' ? value : null;
    case 'datetime':
      return typeof value === 'string' ? epochMicros(value) : null;
    case 'multiple_select':
      return Array.isArray(value) ? (value as string[]) : [];
    case 'checkbox':
      return value === true;
    case 'attachments':
    case 'linked_record':
      // By how many there are.
      return Array.isArray(value) ? value.length : 0;
  }
}

function compareKeys(a: SortKey, b: SortKey): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  if (Array.isArray(a) && Array.isArray(b)) {
    // Element by element; a list that is a prefix of the other comes first.
    for (let index = 0; index < Math.min(a.length, b.length); index += 1) {
      const order = compareKeys(a[index] as string, b[index] as string);
      if (order !== 0) return order;
    }
    return a.length - b.length;
  }
  // Same kind on both sides: numbers, bigints, strings (by code unit) or booleans (false first).
  if (a < b) return -1;
  if (a > b) return 1;
  return 0;
}
