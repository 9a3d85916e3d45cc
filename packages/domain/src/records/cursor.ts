import { createHash } from 'node:crypto';
import { invalid } from '@recordbase/contracts/domain-errors';
import type { Filter } from '@recordbase/contracts/records';
import { type KeyValue, keyKinds } from '@recordbase/db/field-types';
import type { SortKey } from './sort-order';
import type { TableMeta } from './table-meta';

/**
 * The list cursor (`nextCursor` in, `cursor` out): where the next page starts, as the sort key
 * values of the last record of a page, its insertion sequence last. Opaque to clients: base64url
 * of JSON. It is bound to the listing it came from (the order's keys and directions, and a digest
 * of the table and the filter), so it cannot continue another listing; its values are checked
 * against the kinds of the keys before any of them reaches SQL, always as parameters. It is not
 * signed: whatever values a client writes into one only select rows it could select with a filter.
 */

const VERSION = 1;

interface CursorBody {
  v: number;
  /** The order: [ref, a|d, kind] per key. */
  o: [string, string, string][];
  /** Digest of the table and the canonical filter. */
  f: string;
  /** The key values of the last record of the page. */
  k: unknown[];
}

const orderBinding = (keys: readonly SortKey[]): CursorBody['o'] =>
  keys.map((key) => [key.ref, key.direction === 'desc' ? 'd' : 'a', key.kind]);

/** The filter with object keys in sorted order: equal filters give equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What a cursor's filter binding holds: the table and the filter, as a short digest. */
export function listingDigest(table: TableMeta, filter: Filter | undefined): string {
  return createHash('sha256')
    .update(`${table.id}\n${filter === undefined ? '' : canonicalJson(filter)}`)
    .digest('base64url')
    .slice(0, 22);
}

/** The cursor after a row whose key values PostgreSQL rendered (sort-order.ts `keyValuesSql`). */
export function encodeCursor(keys: readonly SortKey[], digest: string, values: readonly unknown[]): string {
  const body: CursorBody = { v: VERSION, o: orderBinding(keys), f: digest, k: [...values] };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

const invalidCursor = (why: string) =>
  invalid(['cursor'], `${why}; pass back the nextCursor of a page of the same listing unchanged`);

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The key values a cursor holds, checked: a cursor that does not decode, was made for another
 * order or filter, or holds a value its key cannot take is refused at the input's `cursor`.
 */
export function decodeCursor(text: string, keys: readonly SortKey[], digest: string): KeyValue[] {
  let body: unknown;
  try {
    const bytes = Buffer.from(text, 'base64url');
    // Only the encoding this service writes: Buffer would skip stray characters and padding.
    if (bytes.toString('base64url') !== text) throw new Error('not canonical base64url');
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw invalidCursor('not a cursor this service issued (it does not decode)');
  }
  if (!isObject(body) || body.v !== VERSION || !Array.isArray(body.o) || !Array.isArray(body.k)) {
    throw invalidCursor('not a cursor this service issued');
  }
  if (JSON.stringify(body.o) !== JSON.stringify(orderBinding(keys))) {
    throw invalidCursor('the cursor was made for another sort (or a sorted field has changed its type)');
  }
  if (body.f !== digest) throw invalidCursor('the cursor was made for another filter or table');
  const values = body.k;
  if (values.length !== keys.length) throw invalidCursor('the cursor does not hold one value per sort key');
  return keys.map((key, index) => {
    const value = readKeyValue(key, values[index]);
    if (value === undefined)
      throw invalidCursor(`the cursor holds an invalid value for sort key ${index + 1}`);
    return value;
  });
}

/** A key value in the form its SQL parameter takes, or undefined when the key cannot hold it. */
function readKeyValue(key: SortKey, value: unknown): KeyValue | undefined {
  // Keys without a place for empty values (system columns, the tie-breaker) never hold one.
  if (value === null) return key.nulls === undefined ? undefined : null;
  return keyKinds[key.kind].read(value);
}
