import pg from 'pg';
import type { SqlCredentials } from './roles';

/**
 * Connections for read-only SQL, each logged in as one database's query role (roles.ts). At most
 * `maxConnections` are open at once across all databases; an idle one is kept for the next query of
 * its database, closed after `idleMs`, or closed at once to make room for another database's.
 * A caller that finds none within `acquireTimeoutMs` gets an error (answered 503).
 */

export interface SqlConnectionOptions {
  /** DATABASE_URL: host, port and database; user and password are each role's. */
  databaseUrl: string;
  maxConnections: number;
  acquireTimeoutMs: number;
  idleMs?: number;
}

export interface SqlConnection {
  readonly client: pg.Client;
  readonly databaseId: string;
}

export interface SqlConnections {
  acquire(credentials: SqlCredentials): Promise<SqlConnection>;
  /** `reusable: false` after a cancel or a failure that may have left the session in any state. */
  release(connection: SqlConnection, reusable: boolean): void;
  close(): Promise<void>;
}

export class SqlConnectionsBusy extends Error {
  constructor() {
    super('every connection for SQL queries is in use');
  }
}

interface Idle {
  connection: SqlConnection;
  timer: NodeJS.Timeout;
}

interface Waiter {
  credentials: SqlCredentials;
  resolve(connection: SqlConnection): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

const DEFAULT_IDLE_MS = 30_000;

export function createSqlConnections(options: SqlConnectionOptions): SqlConnections {
  const url = new URL(options.databaseUrl);
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  /** Oldest first, so room is made by closing the longest idle. */
  const idle: Idle[] = [];
  const waiters: Waiter[] = [];
  /** Ended by the server or by us; counted out of `open` once, by whoever last held it. */
  const ended = new WeakSet<SqlConnection>();
  let open = 0;
  let closed = false;

  const end = (connection: SqlConnection) => {
    open -= 1;
    connection.client.end().catch(() => {});
  };

  const connect = async (credentials: SqlCredentials): Promise<SqlConnection> => {
    open += 1;
    const client = new pg.Client({
      host: url.hostname,
      port: Number(url.port || 5432),
      database: decodeURIComponent(url.pathname.slice(1)),
      user: credentials.user,
      password: credentials.password,
      application_name: 'recordbase-sql',
      connectionTimeoutMillis: options.acquireTimeoutMs,
    });
    // A connection ended under it (its role dropped, the server restarting) must not crash us.
    client.on('error', () => {});
    try {
      await client.connect();
    } catch (error) {
      open -= 1;
      serveWaiters();
      throw error;
    }
    const connection = { client, databaseId: credentials.databaseId };
    client.on('end', () => {
      ended.add(connection);
      forgetIdle(connection);
    });
    return connection;
  };

  const forgetIdle = (connection: SqlConnection) => {
    const index = idle.findIndex((entry) => entry.connection === connection);
    if (index < 0) return;
    const [entry] = idle.splice(index, 1);
    if (entry) clearTimeout(entry.timer);
    open -= 1;
    serveWaiters();
  };

  const takeIdle = (databaseId: string): SqlConnection | undefined => {
    for (let index = idle.length - 1; index >= 0; index -= 1) {
      const entry = idle[index];
      if (entry?.connection.databaseId === databaseId) {
        idle.splice(index, 1);
        clearTimeout(entry.timer);
        return entry.connection;
      }
    }
    return undefined;
  };

  /** Room for one more connection: free already, or made by closing the longest idle one. */
  const makeRoom = (): boolean => {
    if (open < options.maxConnections) return true;
    const oldest = idle.shift();
    if (!oldest) return false;
    clearTimeout(oldest.timer);
    end(oldest.connection);
    return true;
  };

  const serveWaiters = () => {
    for (let index = 0; index < waiters.length; ) {
      const waiter = waiters[index] as Waiter;
      const reused = takeIdle(waiter.credentials.databaseId);
      if (!reused && !makeRoom()) return;
      waiters.splice(index, 1);
      clearTimeout(waiter.timer);
      if (reused) waiter.resolve(reused);
      else connect(waiter.credentials).then(waiter.resolve, waiter.reject);
    }
  };

  return {
    async acquire(credentials) {
      if (closed) throw new Error('the SQL connections are closed');
      const reused = takeIdle(credentials.databaseId);
      if (reused) return reused;
      if (waiters.length === 0 && makeRoom()) return connect(credentials);
      return new Promise<SqlConnection>((resolve, reject) => {
        const waiter: Waiter = {
          credentials,
          resolve,
          reject,
          timer: setTimeout(() => {
            waiters.splice(waiters.indexOf(waiter), 1);
            reject(new SqlConnectionsBusy());
          }, options.acquireTimeoutMs),
        };
        waiters.push(waiter);
      });
    },

    release(connection, reusable) {
      if (ended.has(connection)) {
        open -= 1;
      } else if (!reusable || closed) {
        end(connection);
      } else {
        const entry: Idle = { connection, timer: setTimeout(() => forgetIdleAndEnd(connection), idleMs) };
        entry.timer.unref();
        idle.push(entry);
      }
      serveWaiters();
    },

    async close() {
      closed = true;
      for (const waiter of waiters.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.reject(new Error('the SQL connections are closed'));
      }
      const ending = idle.splice(0).map((entry) => {
        clearTimeout(entry.timer);
        open -= 1;
        return entry.connection.client.end().catch(() => {});
      });
      await Promise.all(ending);
    },
  };

  function forgetIdleAndEnd(connection: SqlConnection) {
    const index = idle.findIndex((entry) => entry.connection === connection);
    if (index < 0) return;
    idle.splice(index, 1);
    end(connection);
    serveWaiters();
  }
}
