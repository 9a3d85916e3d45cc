import { fieldTypeModule, type MatchKey } from '@recordbase/db/field-types';
import { matchIndexName, matchIndexPrefix, qualifiedTable, quoteIdent } from '@recordbase/db/physical';
import type pg from 'pg';
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
/** Builds read whole tables and hold a connection: one at a time per process, a few waiting. */
const MAX_QUEUED_BUILDS = 20;
/** Outcomes remembered, oldest forgotten first: distinct matchOn sets must not grow memory. */
const MAX_REMEMBERED = 10_000;
/** A set refused by the bound is looked at again later: indexes go away with their fields. */
const RECHECK_REFUSED_AFTER_MS = 10 * 60_000;

/** The index key of a field, as its type declares it; undefined for types no index covers. */
export function matchKeyOf(field: FieldMeta): MatchKey | undefined {
  return fieldTypeModule(field.type).match?.key;
}

/** By field id, as the index name is: [a, b] and [b, a] lock the same keys and share one index. */
export function inCanonicalOrder(fields: readonly FieldMeta[]): FieldMeta[] {
  return [...fields].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Key → time until which the set needs no look (Infinity once its index is ready). */
const known = new Map<string, number>();
/** Queued or running builds by key; each runs after the one before it. */
const building = new Map<string, Promise<void>>();
let lastBuild: Promise<void> = Promise.resolve();

function isKnown(key: string): boolean {
  return (known.get(key) ?? 0) > Date.now();
}

function remember(key: string, until: number): void {
  known.delete(key);
  known.set(key, until);
  if (known.size > MAX_REMEMBERED) known.delete(known.keys().next().value!);
}

type Outcome = 'ready' | 'over-bound' | 'busy';

export function ensureMatchIndex(
  pool: pg.Pool,
  table: TableMeta,
  fields: readonly FieldMeta[],
  onError: (error: unknown) => void,
): void {
  if (!fields.every(matchKeyOf)) return;
  const sorted = inCanonicalOrder(fields);
  const ids = sorted.map((field) => field.id);
  const name = matchIndexName(table.id, ids);
  // With the types in the key, a set is looked at again after one of its fields changes type.
  const key = `${table.schemaName}.${name}:${sorted.map((field) => field.type).join(',')}`;
  if (isKnown(key) || building.has(key) || building.size >= MAX_QUEUED_BUILDS) return;
  const build = lastBuild
    .then(() => buildMatchIndex(pool, table, sorted, name))
    .then((outcome) => {
      if (outcome === 'ready') remember(key, Number.POSITIVE_INFINITY);
      if (outcome === 'over-bound') remember(key, Date.now() + RECHECK_REFUSED_AFTER_MS);
    })
    .catch(onError)
    .finally(() => building.delete(key));
  building.set(key, build);
  lastBuild = build;
}

/** Resolves once this process's builds have ended (for tests). */
export async function matchIndexBuildsSettled(): Promise<void> {
  await Promise.all(building.values());
}

async function buildMatchIndex(
  pool: pg.Pool,
  table: TableMeta,
  fields: readonly FieldMeta[],
  name: string,
): Promise<Outcome> {
  const client = await pool.connect();
  try {
    const outcome = await underTableBuildLock(client, table, () =>
      buildUnderLock(client, table, fields, name),
    );
    client.release();
    return outcome;
  } catch (error) {
    // Closing the connection also ends its session lock, whatever state the error left.
    client.release(true);
    throw error;
  }
}

/** Text whose hashtextextended(·, 0) is the advisory lock of a table's builds. */
export function matchIndexBuildLock(table: Pick<TableMeta, 'schemaName' | 'id'>): string {
  return `match-index:${table.schemaName}.${table.id}`;
}

/**
 * One builder per table across all replicas (a session lock: CONCURRENTLY cannot run in a
 * transaction), so the count of existing indexes stays true until the new one exists. Another
 * replica's build is not waited for: a later upsert asks again.
 */
async function underTableBuildLock(
  client: pg.PoolClient,
  table: TableMeta,
  build: () => Promise<Outcome>,
): Promise<Outcome> {
  const lockKey = [matchIndexBuildLock(table)];
  const locked = await client.query<{ locked: boolean }>(
    'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked',
    lockKey,
  );
  if (!locked.rows[0]?.locked) return 'busy';
  const outcome = await build();
  await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', lockKey);
  return outcome;
}

async function buildUnderLock(
  client: pg.PoolClient,
  table: TableMeta,
  fields: readonly FieldMeta[],
  name: string,
): Promise<Outcome> {
  const tableRef = qualifiedTable(table.schemaName, table.id);
  const indexRef = `${quoteIdent(table.schemaName)}.${quoteIdent(name)}`;
  const { others, valid } = await existingMatchIndexes(client, table, name);
  if (valid === true) return 'ready';
  // An invalid index is what an interrupted CONCURRENTLY build leaves behind.
  if (valid === false) await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${indexRef}`);
  if (others >= MAX_MATCH_INDEXES_PER_TABLE) return 'over-bound';
  const elements = fields.map((field) => {
    const key = matchKeyOf(field)!;
    return `(${key.of(quoteIdent(field.id))}) ${key.opclass}`;
  });
  await client.query(
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${quoteIdent(name)} ON ${tableRef} (${elements.join(', ')})`,
  );
  return 'ready';
}

/** From the catalog, not from memory: other replicas build indexes too. */
async function existingMatchIndexes(
  client: pg.PoolClient,
  table: TableMeta,
  name: string,
): Promise<{ others: number; valid: boolean | null }> {
  const result = await client.query<{ others: number; valid: boolean | null }>(
    `SELECT count(*) FILTER (WHERE c.relname <> $3)::int AS others,
            bool_and(i.indisvalid) FILTER (WHERE c.relname = $3) AS valid
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = to_regclass($1) AND starts_with(c.relname, $2)`,
    [qualifiedTable(table.schemaName, table.id), matchIndexPrefix(table.id), name],
  );
  return result.rows[0] ?? { others: 0, valid: null };
}
