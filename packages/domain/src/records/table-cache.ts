import {
  createNotifiedCache,
  type ListenerLogger,
  type NotifiedCache,
  notifyStatement,
  SCHEMA_CHANNEL,
} from '@recordbase/db';
import type pg from 'pg';
import type { TableMeta } from './table-meta';

/** Distinct tables remembered per process, oldest forgotten first. */
const MAX_CACHED_TABLES = 10_000;

/**
 * Table metadata per process, so a record request needs no metadata round trip, trusted only
 * while this process LISTENs on the schema channel (db's notified-cache.ts). What a
 * notification still in flight could leave stale, the callers catch: an error the old metadata
 * explains makes them load it again and retry once (see `withTable` in records-service.ts).
 */
export type TableCache = NotifiedCache<TableMeta>;

export function createTableCache(options: { pool: pg.Pool; logger: ListenerLogger }): TableCache {
  return createNotifiedCache<TableMeta>({
    pool: options.pool,
    channels: [SCHEMA_CHANNEL],
    logger: options.logger,
    maxEntries: MAX_CACHED_TABLES,
  });
}

/** The statement a schema change runs in its transaction. */
export const notifySchemaChange = notifyStatement(SCHEMA_CHANNEL);
