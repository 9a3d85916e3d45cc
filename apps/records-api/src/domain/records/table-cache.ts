import { createListener, type Listener } from '@recordbase/server-kit/listener';
import type { Logger } from '@recordbase/server-kit/logger';
import pg from 'pg';
import type { TableMeta } from './table-meta';

/**
 * Channel on which every schema change NOTIFYs, in its own transaction (so on commit only); the
 * payload is empty: a change drops every cached table of every listening process.
 */
export const SCHEMA_CHANNEL = 'recordbase_schema';

/** Distinct tables remembered per process, oldest forgotten first. */
const MAX_CACHED_TABLES = 10_000;

/**
 * Table metadata per process, so a record request needs no metadata round trip. It is trusted
 * only while this process LISTENs on the schema channel: a change made anywhere drops it (a
 * NOTIFY missed while reconnecting is covered by dropping everything on reconnect), and a change
 * made here drops it before its answer leaves. What a notification still in flight could leave
 * stale, the callers catch: an error the old metadata explains makes them load it again and retry
 * once (see `withTable` in records-service.ts).
 */
export interface TableCache {
  /** The cached metadata of `key`, else what `load` answers (kept unless a change came meanwhile). */
  get(key: string, load: () => Promise<TableMeta>): Promise<{ table: TableMeta; cached: boolean }>;
  /** Drops one entry (its metadata was found stale). */
  drop(key: string): void;
  /** Drops everything (a schema change committed). */
  clear(): void;
  close(): Promise<void>;
}

/** `pool` gives the connection settings; the LISTEN connection is a pool of one of its own. */
export function createTableCache(options: { pool: pg.Pool; logger: Logger }): TableCache {
  const tables = new Map<string, TableMeta>();
  /** Moves on every drop: a load that began before it must not store what it read. */
  let generation = 0;
  const clear = () => {
    generation += 1;
    tables.clear();
  };
  // A connection of its own, outside the request pool, whose size stays what was configured.
  const { max: _max, ...settings } = options.pool.options;
  const listenPool = new pg.Pool({ ...settings, max: 1 });
  listenPool.on('error', () => {});
  const listener: Listener = createListener({
    pool: listenPool,
    channels: [SCHEMA_CHANNEL],
    onNotification: clear,
    onConnected: clear,
    logger: options.logger,
  });
  listener.start();
  return {
    async get(key, load) {
      const hit = tables.get(key);
      if (hit && listener.connected()) return { table: hit, cached: true };
      const before = generation;
      const table = await load();
      if (before === generation && listener.connected()) {
        tables.delete(key);
        tables.set(key, table);
        if (tables.size > MAX_CACHED_TABLES) tables.delete(tables.keys().next().value!);
      }
      return { table, cached: false };
    },
    drop(key) {
      generation += 1;
      tables.delete(key);
    },
    clear,
    async close() {
      clear();
      await listener.close();
      await listenPool.end();
    },
  };
}

/** The statement a schema change runs in its transaction. */
export const notifySchemaChange = `SELECT pg_notify('${SCHEMA_CHANNEL}', '')`;
