import type { Principal } from '@recordbase/contracts/api-keys';
import { busy, DomainError } from '@recordbase/contracts/domain-errors';
import { type Connections, withTransaction } from '@recordbase/db';
import type pg from 'pg';
import { accessibleDatabaseId } from '../access-policy';
import { type EventContext, type EventPublisher, publishingEvents, type TransactionEvents } from '../events';
import type { FileLinks } from './presentation';
import type { TableCache } from './table-cache';
import { loadTableMeta } from './table-loader';
import { StaleTableMeta, type TableMeta } from './table-meta';

/**
 * Where the record use cases (records-service.ts) run: with the table's metadata, cached and
 * loaded afresh once when a schema change made it stale, in one statement or one transaction on
 * the request's connections, whose record events are published once it commits.
 */

export interface TableAddress {
  databaseId: string;
  tableRef: string;
}

/**
 * Where record work runs: `db` is the request's connections (its statements are cancelled when the
 * client goes away); `background` the shared pool, for work that outlives the request.
 */
export interface RecordsDb {
  db: Connections;
  background: pg.Pool;
  onBackgroundError?: (error: unknown) => void;
  /** Which attachment urls are uploaded files, and the signed links of those in the records answered. */
  fileLinks: FileLinks;
  /** Where the record events of a committed write go. */
  events: EventPublisher;
  /** Table metadata kept between requests (without it, every request loads it). */
  tables?: TableCache;
  /** Tables with at least this many records get indexes on what their listings filter and sort. */
  readIndexMinRows?: number;
}

/** Errors that metadata a schema change made stale would explain: unknown columns, tables or types, refused input. */
const STALE_METADATA_SQLSTATES = new Set(['42703', '42P01', '42804', '22P02']);

function mayBeStaleMetadata(error: unknown): boolean {
  if (error instanceof StaleTableMeta) return true;
  if (error instanceof DomainError) return error.kind === 'invalid';
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && STALE_METADATA_SQLSTATES.has(code);
}

/**
 * Runs `work` with the table's metadata, from the cache when it has it. Work that fails in a way
 * stale metadata would explain (a change whose NOTIFY has not arrived yet) runs once more with
 * metadata loaded afresh; it wrote nothing, its transaction or statement having failed. A listing
 * finds stale metadata itself (StaleTableMeta), whether it came from the cache or not.
 */
export async function withTable<T>(
  tables: TableCache | undefined,
  db: Connections,
  principal: Principal,
  address: TableAddress,
  work: (table: TableMeta) => Promise<T>,
): Promise<T> {
  const databaseId = accessibleDatabaseId(principal, address.databaseId);
  const load = () => loadTableMeta(db, databaseId, address.tableRef);
  const key = `${databaseId}/${address.tableRef}`;
  const { value: table, cached } = tables
    ? await tables.get(key, load)
    : { value: await load(), cached: false };
  try {
    return await work(table);
  } catch (error) {
    // Metadata loaded just now is only stale if a change committed in between: that alone is retried.
    if (!(cached ? mayBeStaleMetadata(error) : error instanceof StaleTableMeta)) throw error;
    tables?.drop(key);
    try {
      return await work(tables ? (await tables.get(key, load)).value : await load());
    } catch (again) {
      if (again instanceof StaleTableMeta) {
        throw busy('The table is being changed; retry shortly', 1);
      }
      throw again;
    }
  }
}

/** One statement (a transaction by itself) on a connection of the request, publishing its events after. */
export function inStatement<T>(
  { db, events }: Pick<RecordsDb, 'db' | 'events'>,
  /** The writing key (kept on the events) and whether integrations hear of the write. */
  context: EventContext,
  work: (client: pg.PoolClient, events: TransactionEvents) => Promise<T>,
): Promise<T> {
  return publishingEvents(
    events,
    async (onClient: (client: pg.PoolClient) => Promise<T>) => {
      const client = await db.connect();
      try {
        return await onClient(client);
      } finally {
        client.release();
      }
    },
    work,
    context,
  );
}

/** A transaction on the request's connections whose events are published once it commits. */
export function inTransaction<T>(
  { db, events }: Pick<RecordsDb, 'db' | 'events'>,
  /** The writing key (kept on the events) and whether integrations hear of the write. */
  context: EventContext,
  work: (client: pg.PoolClient, events: TransactionEvents) => Promise<T>,
): Promise<T> {
  return publishingEvents(
    events,
    (inTx: (client: pg.PoolClient) => Promise<T>) => withTransaction(db, inTx),
    work,
    context,
  );
}
