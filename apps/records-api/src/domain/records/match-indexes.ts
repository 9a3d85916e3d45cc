import { columnSpecByType, matchIndexName, matchIndexPrefix, quoteIdent } from '@recordbase/db/physical';
import type pg from 'pg';
import { ensureIndex, indexBuildLock, indexBuildsSettled } from './background-indexes';
import type { FieldMeta, TableMeta } from './table-meta';

/**
 * Upserts look records up by their matchOn fields, which no index covers at first: a table of a
 * million records would be scanned on every request. The first upsert on a set of fields builds a
 * btree index on them in the background (CONCURRENTLY, so writers are not blocked); dropping a
 * field drops its indexes with it, and changing its type drops them too (see the DDL).
 *
 * The index must never refuse a value its columns accept, since it is built behind the user's
 * back: a btree row holds at most ~2.7 kB, and text may be 100,000 characters (twenty 2,048-char
 * URLs overflow it too). So text is indexed by a 64-bit hash, and the match query compares both
 * the hash (to use the index) and the value (hashes collide).
 */

/** Each index costs every write on the table, and any records:write key could ask for more. */
export const MAX_MATCH_INDEXES_PER_TABLE = 5;

interface MatchKey {
  /** The indexed value of a column (or of a value compared with it), as SQL. */
  of(sql: string): string;
  /** Named in the index, so a build planned before a type change fails rather than fit the new type. */
  opclass: string;
}

const hashed: MatchKey = { of: (sql) => `hashtextextended(${sql}, 0)`, opclass: 'int8_ops' };
const raw = (opclass: string): MatchKey => ({ of: (sql) => sql, opclass });

/**
 * By column type. Fixed-width values are indexed as they are; text of any length by its hash.
 * Types absent here (text[] of multiple selects, which match as sets; jsonb) are not indexed.
 */
const matchKeyBySqlType = new Map<string, MatchKey>([
  ['text', hashed],
  ['double precision', raw('float8_ops')],
  ['smallint', raw('int2_ops')],
  ['date', raw('date_ops')],
  ['timestamptz', raw('timestamptz_ops')],
  ['boolean', raw('bool_ops')],
]);

export function matchKeyOf(field: FieldMeta): MatchKey | undefined {
  if (field.type === 'linked_record') return undefined;
  return matchKeyBySqlType.get(columnSpecByType[field.type].sqlType);
}

/** By field id, as the index name is: [a, b] and [b, a] lock the same keys and share one index. */
export function inCanonicalOrder(fields: readonly FieldMeta[]): FieldMeta[] {
  return [...fields].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export function ensureMatchIndex(
  pool: pg.Pool,
  table: TableMeta,
  fields: readonly FieldMeta[],
  onError: (error: unknown) => void,
): void {
  if (!fields.every(matchKeyOf)) return;
  const sorted = inCanonicalOrder(fields);
  const elements = sorted.map((field) => {
    const key = matchKeyOf(field)!;
    return `(${key.of(quoteIdent(field.id))}) ${key.opclass}`;
  });
  ensureIndex(
    pool,
    table,
    {
      name: matchIndexName(
        table.id,
        sorted.map((field) => field.id),
      ),
      prefix: matchIndexPrefix(table.id),
      maxPerTable: MAX_MATCH_INDEXES_PER_TABLE,
      definition: `(${elements.join(', ')})`,
      // With the types in the key, a set is looked at again after one of its fields changes type.
      key: sorted.map((field) => field.type).join(','),
    },
    onError,
  );
}

/** Resolves once this process's builds have ended (for tests). */
export const matchIndexBuildsSettled = indexBuildsSettled;
/** Text whose hashtextextended(·, 0) is the advisory lock of a table's builds. */
export const matchIndexBuildLock = indexBuildLock;
