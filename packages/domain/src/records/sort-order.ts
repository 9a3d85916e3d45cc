import { invalid } from '@recordbase/contracts/domain-errors';
import { type SystemFieldName, systemFieldNames } from '@recordbase/contracts/fields';
import type { Sort, SortDirection } from '@recordbase/contracts/records';
import { type KeyKind, type KeyValue, keyKinds, moduleOfField } from '@recordbase/db/field-types';
import type { SqlParams } from '@recordbase/db/physical';
import { fieldSql, resolveFieldOrSystem, type TableMeta, unknownField } from './table-meta';

/**
 * The order of a listing as one description (the sort keys), from which both the ORDER BY and the
 * keyset condition "after this row" of a cursor are generated, so the two cannot disagree.
 * Everything is SQL over a record table aliased `r`.
 */

/** The system fields' columns on the record table. */
export const systemColumnSql: Record<SystemFieldName, string> = {
  id: 'r.id',
  createdAt: 'r.created_at',
  updatedAt: 'r.updated_at',
};

/** How a key's value travels in a cursor: the registry's key kinds (field-types/key-kinds.ts). */
export type { KeyKind, KeyValue } from '@recordbase/db/field-types';

export interface SortKey {
  /** What the key sorts by: a field id, a system field name, or `seq` for the tie-breaker. */
  ref: string;
  /** The SQL expression over `r` (text compared by code point through COLLATE "C"). */
  expression: string;
  kind: KeyKind;
  direction: SortDirection;
  /** Where empty values go; absent for keys that are never empty (the order leaves it implicit). */
  nulls?: 'first' | 'last';
}

/** Insertion order: the last key of every ORDER BY, so equal rows keep a stable order across pages. */
const TIE_BREAKER: SortKey = { ref: 'seq', expression: 'r.seq', kind: 'bigint', direction: 'asc' };

const DEFAULT_ORDER: SortKey = {
  ref: 'createdAt',
  expression: 'r.created_at',
  kind: 'timestamp',
  direction: 'asc',
};

const systemKind: Record<SystemFieldName, KeyKind> = {
  id: 'uuid',
  createdAt: 'timestamp',
  updatedAt: 'timestamp',
};

/**
 * The keys of an order, the tie-breaker last. Empty values sort as the smallest: first ascending,
 * last descending. Text and select values sort by code point (`COLLATE "C"`), the same on every
 * machine and the order filter-evaluator.ts's `compareForSort` uses.
 */
export function sortKeys(sort: Sort[] | undefined, table: TableMeta): SortKey[] {
  if (sort === undefined || sort.length === 0) return [DEFAULT_ORDER, TIE_BREAKER];
  const keys = sort.map((entry, index): SortKey => {
    const target = resolveFieldOrSystem(table, entry.field);
    if (!target) {
      throw invalid(['sort', index, 'field'], unknownField(table, entry.field, systemFieldNames));
    }
    const nulls = entry.direction === 'desc' ? 'last' : 'first';
    if (target.kind === 'system') {
      const name = target.name;
      // Never empty: without a NULLS clause the order matches the table's (created_at, seq) index.
      return {
        ref: name,
        expression: systemColumnSql[name],
        kind: systemKind[name],
        direction: entry.direction,
      };
    }
    const { expression, kind } = moduleOfField(target.field).sort(fieldSql(table, target.field));
    return { ref: target.field.id, expression, kind, direction: entry.direction, nulls };
  });
  return [...keys, TIE_BREAKER];
}

/** The ORDER BY list (without the keyword). */
export function orderBySql(keys: readonly SortKey[]): string {
  return keys
    .map((key) => {
      const direction = key.direction === 'desc' ? 'DESC' : 'ASC';
      return key.nulls
        ? `${key.expression} ${direction} NULLS ${key.nulls.toUpperCase()}`
        : `${key.expression} ${direction}`;
    })
    .join(', ');
}

/** The ORDER BY list of a request's sort (without the keyword). */
export function compileSort(sort: Sort[] | undefined, table: TableMeta): string {
  return orderBySql(sortKeys(sort, table));
}

// ---------------------------------------------------------------------------------------------
// Keyset: the values of a row's keys, and the rows after them
// ---------------------------------------------------------------------------------------------

/** The row's key values as a JSON array (null for an empty value), in the order of `keys`. */
export function keyValuesSql(keys: readonly SortKey[]): string {
  return `jsonb_build_array(${keys.map((key) => keyKinds[key.kind].json(key.expression)).join(', ')})`;
}

/** Whether an empty value of this key comes before every other value. */
const emptyFirst = (key: SortKey) =>
  key.nulls === 'first' || (key.nulls === undefined && key.direction === 'desc');

/**
 * The rows strictly after the row whose key values are `values` in the order of `keys`. Mixed
 * directions and empty values rule out a plain row comparison in general, so the condition is
 * the expanded chain `k1 after v1 OR (k1 = v1 AND (k2 after v2 OR (...)))`, with empty values
 * placed as the ORDER BY places them. Where a leading run of keys allows it, a row comparison is
 * added (or, when it covers every key, used alone): it says the same and lets an index on those
 * keys be scanned from the cursor on.
 */
export function keysetAfterSql(
  keys: readonly SortKey[],
  values: readonly KeyValue[],
  params: SqlParams,
): string {
  if (keys.length === 0 || keys.length !== values.length) throw new Error('keyset: one value per sort key');
  const literals = values.map((value, index) =>
    value === null ? null : `${params.add(value)}::${keyKinds[keys[index]!.kind].sqlType}`,
  );
  const run = comparableRun(keys, values);
  const comparison = (length: number, strict: boolean) => {
    const operator = keys[0]!.direction === 'asc' ? (strict ? '>' : '>=') : strict ? '<' : '<=';
    const left = keys.slice(0, length).map((key) => key.expression);
    const right = literals.slice(0, length);
    return length === 1
      ? `${left[0]} ${operator} ${right[0]}`
      : `(${left.join(', ')}) ${operator} (${right.join(', ')})`;
  };
  if (run === keys.length) return comparison(run, true);
  const chain = afterChain(keys, literals, 0);
  return run > 0 ? `(${comparison(run, false)} AND ${chain})` : chain;
}

/**
 * How many leading keys a row comparison can take: keys of the first key's direction whose
 * value is given, and which are never empty or put empty values first ascending (a NULL in a row
 * comparison then only drops rows that come before the cursor anyway).
 */
function comparableRun(keys: readonly SortKey[], values: readonly KeyValue[]): number {
  const direction = keys[0]!.direction;
  let length = 0;
  for (const [index, key] of keys.entries()) {
    const fits =
      key.direction === direction &&
      values[index] !== null &&
      (key.nulls === undefined || (key.direction === 'asc' && key.nulls === 'first'));
    if (!fits) break;
    length += 1;
  }
  return length;
}

function afterChain(keys: readonly SortKey[], literals: readonly (string | null)[], index: number): string {
  const key = keys[index]!;
  const literal = literals[index]!;
  const after = afterOne(key, literal);
  if (index === keys.length - 1) return after ?? 'FALSE';
  const equal = literal === null ? `${key.expression} IS NULL` : `${key.expression} = ${literal}`;
  const rest = `${equal} AND ${afterChain(keys, literals, index + 1)}`;
  return after === null ? `(${rest})` : `(${after} OR (${rest}))`;
}

/** The rows after `literal` on this one key, or null when none can be. */
function afterOne(key: SortKey, literal: string | null): string | null {
  if (literal === null) return emptyFirst(key) ? `${key.expression} IS NOT NULL` : null;
  const operator = key.direction === 'asc' ? '>' : '<';
  const beyond = `${key.expression} ${operator} ${literal}`;
  // Empty values after every other value follow a non-empty cursor value too.
  return emptyFirst(key) || key.nulls === undefined ? beyond : `(${beyond} OR ${key.expression} IS NULL)`;
}
