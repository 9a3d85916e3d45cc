import pg from 'pg';
import { createListener, type Listener, type ListenerLogger } from './listener';
import { survivesLostConnections } from './pool-errors';

/**
 * Values kept per process and trusted only while the process LISTENs on channels that every
 * change NOTIFYs from its own transaction (so on commit only): a notification drops everything,
 * a (re)connect drops everything (what was missed meanwhile is unknown), and while the listening
 * connection is down nothing is served from memory. The process making a change also calls
 * `clear` before answering, since its own notification may arrive after its next request.
 *
 * A connection can also be lost without a word reaching the process (a partition, a host gone):
 * until the listener's heartbeat finds out, notifications are missed while it still looks up. So
 * an entry is also trusted for `maxAgeMs` at most, which bounds how long any missed change (a
 * revoked key) can go unseen, for the price of one load per entry and period.
 */
export interface NotifiedCache<V> {
  /** The kept value of `key`, else what `load` answers (kept unless a change came meanwhile). */
  get(key: string, load: () => Promise<V>): Promise<{ value: V; cached: boolean }>;
  /** Drops one entry (it was found stale). */
  drop(key: string): void;
  /** Drops everything (a change committed). */
  clear(): void;
  /** Whether entries are kept now: the LISTEN connection is up. */
  listening(): boolean;
  close(): Promise<void>;
}

/**
 * How long an entry is trusted without a notification having dropped it: the longest a change
 * missed by a silently lost LISTEN connection (a revoked key still accepted) can go unseen.
 */
export const MAX_ENTRY_AGE_MS = 60_000;

export function createNotifiedCache<V>(options: {
  /** Gives the connection settings; the LISTEN connection is a pool of one of its own. */
  pool: pg.Pool;
  /** Every channel a change of what is kept NOTIFYs on; one connection listens to them all. */
  channels: string[];
  logger: ListenerLogger;
  /** Entries kept, oldest forgotten first. */
  maxEntries: number;
  /** Whether a loaded value may be kept (a lookup that found nothing should not, for one). */
  keep?: (value: V) => boolean;
  /** How long an entry is trusted at most (default MAX_ENTRY_AGE_MS). */
  maxAgeMs?: number;
}): NotifiedCache<V> {
  const maxAgeMs = options.maxAgeMs ?? MAX_ENTRY_AGE_MS;
  /** Each value and when it was read: as its load began (monotonic, unlike Date.now()). */
  const entries = new Map<string, { value: V; readAt: number }>();
  /** Moves on every drop: a load that began before it must not store what it read. */
  let generation = 0;
  const clear = () => {
    generation += 1;
    entries.clear();
  };
  // Outside the request pool, whose size stays what was configured.
  const { max: _max, ...settings } = options.pool.options;
  const listenPool = new pg.Pool({ ...settings, max: 1 });
  // The listener adds its own 'error' listener only once it has the connection: too late for a
  // backend terminated as the pool hands the connection out, which would crash the process.
  survivesLostConnections(listenPool);
  const listener: Listener = createListener({
    pool: listenPool,
    channels: options.channels,
    onNotification: clear,
    onConnected: clear,
    logger: options.logger,
  });
  listener.start();
  return {
    async get(key, load) {
      const hit = entries.get(key);
      if (hit !== undefined && performance.now() - hit.readAt >= maxAgeMs) {
        // Gone even if the load below finds nothing to keep (a key revoked meanwhile).
        entries.delete(key);
      } else if (hit !== undefined && listener.connected()) {
        return { value: hit.value, cached: true };
      }
      const before = generation;
      const readAt = performance.now();
      const value = await load();
      if (before === generation && listener.connected() && (options.keep?.(value) ?? true)) {
        entries.delete(key);
        entries.set(key, { value, readAt });
        if (entries.size > options.maxEntries) entries.delete(entries.keys().next().value!);
      }
      return { value, cached: false };
    },
    drop(key) {
      generation += 1;
      entries.delete(key);
    },
    clear,
    listening: () => listener.connected(),
    async close() {
      clear();
      await listener.close();
      await listenPool.end();
    },
  };
}

/** The statement a change runs in its transaction to drop every process's entries on commit. */
export const notifyStatement = (channel: string) => `SELECT pg_notify('${channel}', '')`;
