import type pg from 'pg';

/**
 * Keeps a lost connection (PostgreSQL restarted, the backend terminated) from crashing the
 * process. pg emits 'error' on a client whose connection ends outside a query, and pg-pool
 * listens for it only while the client is idle. A listener the caller adds after
 * `await pool.connect()` comes too late as well: the pool hands the client out from inside pg's
 * parsing of its ReadyForQuery, and the FATAL of a pg_terminate_backend read in the same chunk is
 * parsed before the caller resumes. So every connection of the pool gets a listener as it
 * connects, for its whole life: its queries still fail (answered 503), and the pool discards it
 * on release. An idle client's loss goes to the pool's own 'error', ignored too: the pool
 * replaces it.
 */
export function survivesLostConnections(pool: pg.Pool): void {
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
}
