import { createHash } from 'node:crypto';

/**
 * Totals of filtered listings, kept per (table, compiled filter) with the table's write version
 * they were counted at. Clients read a filter page after page; the count is paid once per version
 * instead of once per page. A total is served only when the version a page was read at equals the
 * kept one: no committed change lies between the two (the version is the table's change counter,
 * see the table_write_versions migration), so the kept total is exact for that page's snapshot.
 * Counts are only taken by listings, each its own statement: a transaction that had written to
 * the table would see a version no other session may ever see, and must not keep its count.
 */

/** Entries kept; the least recently used go first. Each is a small fixed size (hashed key). */
const MAX_ENTRIES = 20_000;

interface Counted {
  version: string;
  total: number;
}

const counted = new Map<string, Counted>();

/**
 * The key of a filter: its SQL and parameters as the compiler produced them, which already say
 * which fields (by id) and values it means, however the request named them. Hashed, so a filter
 * of 100 kB of patterns costs no more memory than any other.
 */
export function countKey(tableId: string, whereSql: string, params: readonly unknown[]): string {
  return createHash('sha256')
    .update(tableId)
    .update('\u0000')
    .update(whereSql)
    .update('\u0000')
    .update(JSON.stringify(params))
    .digest('base64');
}

export function keptTotal(key: string, version: string): number | undefined {
  const entry = counted.get(key);
  if (entry === undefined) return undefined;
  if (entry.version !== version) return undefined;
  // Most recently used last, so eviction takes the oldest.
  counted.delete(key);
  counted.set(key, entry);
  return entry.total;
}

export function keepTotal(key: string, version: string, total: number): void {
  counted.delete(key);
  counted.set(key, { version, total });
  if (counted.size > MAX_ENTRIES) counted.delete(counted.keys().next().value!);
}
