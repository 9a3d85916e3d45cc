import { qualifiedTable, quoteIdent } from '@recordbase/db/physical';
import type pg from 'pg';
import type { TableMeta } from './table-meta';

/**
 * Indexes the service builds behind the user's back (matchOn lookups, filtered and sorted
 * fields): in the background, CONCURRENTLY so writers are not blocked, one build at a time per
 * process, one builder per table across replicas, and at most a bound of each family per table,
 * since each index costs every write on the table.
 */

export interface IndexPlan {
  /** Physical name; it starts with `prefix`, the family it counts against. */
  name: string;
  prefix: string;
  maxPerTable: number;
  /** What follows `ON <table>`: `(elements)` or `USING gin (elements)`. */
  definition: string;
  /**
   * Identifies the plan in this process's memory, with whatever could make the same name mean
   * another index (field types), so a changed field is looked at again.
   */
  key: string;
}

/** Builds read whole tables and hold a connection: one at a time per process, a few waiting. */
const MAX_QUEUED_BUILDS = 20;
/** Outcomes remembered, oldest forgotten first: distinct plans must not grow memory. */
const MAX_REMEMBERED = 10_000;
/** A plan refused by the bound is looked at again later: indexes go away with their fields. */
const RECHECK_REFUSED_AFTER_MS = 10 * 60_000;

/** Key → time until which the plan needs no look (Infinity once its index is ready). */
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

export function ensureIndex(
  pool: pg.Pool,
  table: TableMeta,
  plan: IndexPlan,
  onError: (error: unknown) => void,
): void {
  const key = `${table.schemaName}.${plan.name}:${plan.key}`;
  if (isKnown(key) || building.has(key) || building.size >= MAX_QUEUED_BUILDS) return;
  const build = lastBuild
    .then(() => buildIndex(pool, table, plan))
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
export async function indexBuildsSettled(): Promise<void> {
  await Promise.all(building.values());
}

/**
 * The application_name of a connection while it builds an index in a database's schema. A schema
 * change cancels these builds first (schema-tx.ts): a build waits for older transactions to end,
 * the change's ALTER waits for the build's lock, and PostgreSQL would break that deadlock by
 * failing either one, the user's change included.
 */
export function indexBuilderName(schemaName: string): string {
  return `recordbase-index-build:${schemaName}`;
}

const QUERY_CANCELED = '57014';

async function buildIndex(pool: pg.Pool, table: TableMeta, plan: IndexPlan): Promise<Outcome> {
  const client = await pool.connect();
  try {
    await client.query(`SET application_name = '${indexBuilderName(table.schemaName)}'`);
    const outcome = await underTableBuildLock(client, table, () => buildUnderLock(client, table, plan));
    await client.query('RESET application_name');
    client.release();
    return outcome;
  } catch (error) {
    // Closing the connection also ends its session lock, whatever state the error left.
    client.release(true);
    // Cancelled by a schema change: a later request asks again (and drops the invalid leftover).
    if ((error as { code?: string }).code === QUERY_CANCELED) return 'busy';
    throw error;
  }
}

/** Text whose hashtextextended(·, 0) is the advisory lock of a table's builds. */
export function indexBuildLock(table: Pick<TableMeta, 'schemaName' | 'id'>): string {
  return `match-index:${table.schemaName}.${table.id}`;
}

/**
 * One builder per table across all replicas (a session lock: CONCURRENTLY cannot run in a
 * transaction), so the count of existing indexes stays true until the new one exists. Another
 * replica's build is not waited for: a later request asks again.
 */
async function underTableBuildLock(
  client: pg.PoolClient,
  table: TableMeta,
  build: () => Promise<Outcome>,
): Promise<Outcome> {
  const lockKey = [indexBuildLock(table)];
  const locked = await client.query<{ locked: boolean }>(
    'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked',
    lockKey,
  );
  if (!locked.rows[0]?.locked) return 'busy';
  const outcome = await build();
  await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', lockKey);
  return outcome;
}

async function buildUnderLock(client: pg.PoolClient, table: TableMeta, plan: IndexPlan): Promise<Outcome> {
  const tableRef = qualifiedTable(table.schemaName, table.id);
  const indexRef = `${quoteIdent(table.schemaName)}.${quoteIdent(plan.name)}`;
  const { others, valid } = await existingIndexes(client, table, plan);
  if (valid === true) return 'ready';
  // An invalid index is what an interrupted CONCURRENTLY build leaves behind.
  if (valid === false) await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${indexRef}`);
  if (others >= plan.maxPerTable) return 'over-bound';
  await client.query(
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${quoteIdent(plan.name)} ON ${tableRef} ${plan.definition}`,
  );
  // An index on an expression (a matchOn hash) has no statistics until the table is analyzed:
  // meanwhile the planner guesses, and may prefer a full scan to the index just built.
  await client.query(`ANALYZE ${tableRef}`);
  return 'ready';
}

/** From the catalog, not from memory: other replicas build indexes too. */
async function existingIndexes(
  client: pg.PoolClient,
  table: TableMeta,
  plan: IndexPlan,
): Promise<{ others: number; valid: boolean | null }> {
  const result = await client.query<{ others: number; valid: boolean | null }>(
    `SELECT count(*) FILTER (WHERE c.relname <> $3)::int AS others,
            bool_and(i.indisvalid) FILTER (WHERE c.relname = $3) AS valid
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = to_regclass($1) AND starts_with(c.relname, $2)`,
    [qualifiedTable(table.schemaName, table.id), plan.prefix, plan.name],
  );
  return result.rows[0] ?? { others: 0, valid: null };
}
