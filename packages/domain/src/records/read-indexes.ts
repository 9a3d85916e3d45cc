import type { ListRecordsRequest } from '@recordbase/contracts/records';
import {
  type FilterCondition,
  type FilterOperator,
  readFilterCondition,
} from '@recordbase/contracts/records';
import { moduleOfField } from '@recordbase/db/field-types';
import { quoteIdent, readIndexName, readIndexPrefix } from '@recordbase/db/physical';
import type pg from 'pg';
import { ensureIndex, type IndexPlan } from './background-indexes';
import { holdsFormula, type ReadFilter } from './query-compiler';
import { type FieldMeta, type FieldOrSystem, resolveFieldOrSystem, type TableMeta } from './table-meta';

/**
 * Indexes on what listings filter and sort, built the first time a large table is read that way,
 * so the next page seeks instead of scanning. Which index serves which use:
 * - an order on a field of fixed width (numbers, dates, checkbox) or a single select: a btree on
 *   exactly the ORDER BY of sort-order.ts (the key, its direction and where empty values go, then
 *   the insertion order), so a page is read off the index in order;
 * - comparisons, equality and `in` on those fields: the ascending one of these;
 * - `contains`, `starts_with`, `ends_with` and equality on text: a trigram GIN index, which
 *   serves ILIKE and has no limit on the length of a value (a btree on text would refuse long
 *   values, and these indexes must never break a valid write).
 * Each index costs every write on the table, so a table has at most a few, and small tables none.
 */

export const MAX_READ_INDEXES_PER_TABLE = 6;

/** Below this many records a scan is as quick as an index: nothing is built. */
export const DEFAULT_READ_INDEX_MIN_ROWS = 10_000;

type Direction = 'asc' | 'desc';

const TRIGRAM_OPERATORS = new Set<FilterOperator>(['contains', 'starts_with', 'ends_with', 'equals']);
const BTREE_OPERATORS = new Set<FilterOperator>([
  'equals',
  'in',
  'greater_than',
  'greater_than_or_equal_to',
  'less_than',
  'less_than_or_equal_to',
]);

function orderIndex(
  table: TableMeta,
  key: string,
  direction: Direction,
  fieldTypes: string,
  neverEmpty = false,
): IndexPlan {
  // The order of sort-order.ts: empty values first ascending, last descending, and no NULLS
  // clause for the system fields, which are never empty; seq breaks ties.
  const order = neverEmpty
    ? direction.toUpperCase()
    : direction === 'asc'
      ? 'ASC NULLS FIRST'
      : 'DESC NULLS LAST';
  const definition = `(${key} ${order}, seq)`;
  return plan(table, definition, fieldTypes);
}

function plan(table: TableMeta, definition: string, fieldTypes: string): IndexPlan {
  return {
    name: readIndexName(table.id, definition),
    prefix: readIndexPrefix(table.id),
    maxPerTable: MAX_READ_INDEXES_PER_TABLE,
    definition,
    key: fieldTypes,
  };
}

function* conditionsOf(filter: ReadFilter): Generator<{ field: string; operator: FilterOperator }> {
  if ('and' in filter || 'or' in filter) {
    for (const member of 'and' in filter ? filter.and : filter.or) yield* conditionsOf(member);
    return;
  }
  // A formula condition (filterByFormula) names no field an index of ours would serve.
  if (holdsFormula(filter)) return;
  const { field, operator } = readFilterCondition(filter as FilterCondition);
  yield { field, operator };
}

/**
 * `sortedFieldId`: the field of the listing's first sort key, whose btree (in the sort's order)
 * serves the comparisons on it too; only its trigram index would still be wanted.
 */
function filterIndex(
  table: TableMeta,
  field: FieldMeta,
  operator: FilterOperator,
  sortedFieldId: string | undefined,
): IndexPlan | undefined {
  const column = quoteIdent(field.id);
  const spec = moduleOfField(field).readIndex;
  if (spec?.filter === 'trigram') {
    if (!TRIGRAM_OPERATORS.has(operator)) return undefined;
    return plan(table, `USING gin (${column} public.gin_trgm_ops)`, field.type);
  }
  if (!spec || !BTREE_OPERATORS.has(operator) || field.id === sortedFieldId) return undefined;
  if (spec.filter === 'btree') return plan(table, `(${column})`, field.type);
  return spec.order ? orderIndex(table, spec.order(column), 'asc', field.type) : undefined;
}

function sortIndex(table: TableMeta, target: FieldOrSystem, direction: Direction): IndexPlan | undefined {
  if (target.kind === 'system') {
    // Ascending createdAt is the default order, which every table has an index for.
    if (target.name === 'id' || (target.name === 'createdAt' && direction === 'asc')) return undefined;
    const column = target.name === 'createdAt' ? 'created_at' : 'updated_at';
    return orderIndex(table, column, direction, 'system', true);
  }
  const order = moduleOfField(target.field).readIndex?.order;
  return order
    ? orderIndex(table, order(quoteIdent(target.field.id)), direction, target.field.type)
    : undefined;
}

/** The indexes that would serve a listing, at most one per condition and sort key. */
export function readIndexPlans(table: TableMeta, request: ListRecordsRequest): IndexPlan[] {
  const plans = new Map<string, IndexPlan>();
  const add = (candidate: IndexPlan | undefined) => {
    if (candidate) plans.set(candidate.name, candidate);
  };
  // The first sort key decides the order a page is read in; later keys only break its ties.
  const first = request.sort?.[0];
  const sorted = first ? resolveFieldOrSystem(table, first.field) : undefined;
  if (first && sorted) add(sortIndex(table, sorted, first.direction));
  const sortedFieldId = sorted?.kind === 'field' ? sorted.field.id : undefined;
  if (request.filter) {
    for (const { field: ref, operator } of conditionsOf(request.filter)) {
      const target = resolveFieldOrSystem(table, ref);
      if (target?.kind === 'field') add(filterIndex(table, target.field, operator, sortedFieldId));
    }
  }
  return [...plans.values()];
}

/** Asks for the listing's indexes, if the table is large enough to need them. */
export function ensureReadIndexes(
  pool: pg.Pool,
  table: TableMeta,
  request: ListRecordsRequest,
  tableRows: number | null,
  minRows: number,
  onError: (error: unknown) => void,
): void {
  if (tableRows === null || tableRows < minRows) return;
  for (const candidate of readIndexPlans(table, request)) ensureIndex(pool, table, candidate, onError);
}
