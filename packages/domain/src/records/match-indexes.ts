import { type MatchKey, moduleOfField } from '@recordbase/db/field-types';
import { matchIndexName, matchIndexPrefix, quoteIdent } from '@recordbase/db/physical';
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
 * the hash (to use the index) and the value (hashes collide). Each type's module declares its key.
 */

/** Each index costs every write on the table, and any records:write key could ask for more. */
export const MAX_MATCH_INDEXES_PER_TABLE = 5;

/** The index key of a field, as its type declares it; undefined for types no index covers. */
export function matchKeyOf(field: FieldMeta): MatchKey | undefined {
  return moduleOfField(field).match?.key;
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
