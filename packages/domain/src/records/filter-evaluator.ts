import {
  type Filter,
  type FilterCondition,
  type FilterOperator,
  readFilterCondition,
  type Sort,
  type TableRecord,
} from '@recordbase/contracts/records';
import {
  epochMicros,
  lower,
  matchDateTime,
  moduleOfField,
  notSupported,
  type OracleSortKey,
} from '@recordbase/db/field-types';
import { resolveFieldOrSystem, type TableMeta } from './table-meta';

/**
 * The filter and sort semantics of docs/filters.md, evaluated in memory over records in API
 * shape. Written separately from the SQL on purpose: it is the oracle the property tests hold
 * the SQL against, so it favours the plainest possible statement of each rule. Each field type
 * states its own rules in its registry module (`oracle`); this file walks filters and sorts.
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

/** Tests read instants as the oracle does. */
export { epochMicros } from '@recordbase/db/field-types';

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
  return moduleOfField(target.field).oracle.matches(value, operator, operand);
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
type SortKey = OracleSortKey;

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
  return moduleOfField(target.field).oracle.sortKey(record.data[target.field.id]);
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
