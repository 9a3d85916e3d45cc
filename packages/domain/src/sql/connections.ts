import { boundMessages, type LongStatements } from '@recordbase/db';
import pg from 'pg';
import { parse as parseConnectionString } from 'pg-connection-string';
import type { SqlCredentials } from './roles';

/**
 * Connections for read-only SQL, each logged in as one database's query role (roles.ts). At most
 * `maxConnections` are open at once across all databases, and at most `perDatabase` for one
 * database (its role's connection limit, which other processes share: a login refused for it is
 * tried again). An idle connection is kept for the next query of its database, closed after
 * `idleMs`, or closed at once to make room for another database's; one older than `maxLifetimeMs`
 * is closed when released, so that a process kept busy cannot hold the role's connections for good
 * while another process waits for one. Callers wait their turn in order; one that gets no
 * connection within `acquireTimeoutMs` gets SqlConnectionsBusy (the service is busy).
 */

export interface SqlConnectionOptions {
  /** DATABASE_URL: every setting of it (host, TLS, options) but the user and password, which are each role's. */
  databaseUrl: string;
  maxConnections: number;
  perDatabase: number;
  acquireTimeoutMs: number;
  idleMs?: number;
  maxLifetimeMs?: number;
  /** The longest protocol message a connection takes (message-bound.ts): one row, or one error. */
  maxMessageBytes: number;
  /** Makes a query that runs long yield the CPU to quick ones (the service's, shared with its pool). */
  longStatements?: LongStatements | undefined;
}

export interface SqlConnection {
  readonly client: pg.Client;
  readonly databaseId: string;
  readonly openedAt: number;
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
  deadline: NodeJS.Timeout;
  settled: boolean;
}

/** A login costs a few milliseconds (SCRAM, a new backend): once a second per connection is cheap. */
const DEFAULT_IDLE_MS = 1000;
const DEFAULT_MAX_LIFETIME_MS = 1000;
/** PostgreSQL's "too many connections for role": other processes hold the role's connections. */
const ROLE_CONNECTION_LIMIT = '53300';
const ROLE_LIMIT_RETRY_MS = 50;

export function createSqlConnections(options: SqlConnectionOptions): SqlConnections {
  const { user: _user, password: _password, ...server } = parseConnectionString(options.databaseUrl);
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  const maxLifetimeMs = options.maxLifetimeMs ?? DEFAULT_MAX_LIFETIME_MS;
  /** Oldest first, so room is made by closing the longest idle. */
  const idle: Idle[] = [];
  const waiters: Waiter[] = [];
  /** Ended by the server or by us: counted out once, by whoever held it last. */
  const ended = new WeakSet<SqlConnection>();
  const openPerDatabase = new Map<string, number>();
  let open = 0;
  let closed = false;

  const count = (databaseId: string, delta: number) => {
    open += delta;
    const now = (openPerDatabase.get(databaseId) ?? 0) + delta;
    if (now > 0) openPerDatabase.set(databaseId, now);
    else openPerDatabase.delete(databaseId);
  };

  const end = (connection: SqlConnection) => {
    count(connection.databaseId, -1);
    connection.client.end().catch(() => {});
  };

  const removeIdle = (connection: SqlConnection): boolean => {
    const index = idle.findIndex((entry) => entry.connection === connection);
    if (index < 0) return false;
    const [entry] = idle.splice(index, 1);
    if (entry) clearTimeout(entry.timer);
    return true;
  };

  const takeIdle = (databaseId: string): SqlConnection | undefined => {
    for (let index = idle.length - 1; index >= 0; index -= 1) {
      const connection = idle[index]?.connection;
      if (connection?.databaseId === databaseId) {
        removeIdle(connection);
        return connection;
      }
    }
    return undefined;
  };

  /** Whether one more connection for the database fits, closing the longest idle one if need be. */
  const makeRoom = (databaseId: string): boolean => {
    if ((openPerDatabase.get(databaseId) ?? 0) >= options.perDatabase) return false;
    if (open < options.maxConnections) return true;
    const oldest = idle[0];
    if (!oldest) return false;
    removeIdle(oldest.connection);
    end(oldest.connection);
    return true;
  };

  const connect = async (waiter: Waiter): Promise<void> => {
    const { credentials } = waiter;
    count(credentials.databaseId, 1);
    const client = new pg.Client({
      ...(server as pg.ClientConfig),
      user: credentials.user,
      password: credentials.password,
      application_name: 'recordbase-sql',
      connectionTimeoutMillis: options.acquireTimeoutMs,
    });
    // A connection ended under us (its role dropped, the server restarting) must not crash us.
    client.on('error', () => {});
    boundMessages(client, options.maxMessageBytes);
    try {
      await client.connect();
    } catch (error) {
      count(credentials.databaseId, -1);
      if ((error as { code?: unknown }).code === ROLE_CONNECTION_LIMIT && !waiter.settled) {
        setTimeout(() => {
          if (waiter.settled) return;
          waiters.unshift(waiter);
          serve();
        }, ROLE_LIMIT_RETRY_MS).unref();
      } else {
        settle(waiter, () => waiter.reject(error as Error));
      }
      serve();
      return;
    }
    // Every query runs in a read-only transaction (query.ts): its statements may yield inside it.
    options.longStatements?.watch(client, { readOnly: true });
    const connection = { client, databaseId: credentials.databaseId, openedAt: Date.now() };
    client.on('end', () => {
      ended.add(connection);
      if (removeIdle(connection)) {
        count(connection.databaseId, -1);
        serve();
      }
    });
    if (waiter.settled) release(connection, true);
    else settle(waiter, () => waiter.resolve(connection));
  };

  const settle = (waiter: Waiter, outcome: () => void) => {
    waiter.settled = true;
    clearTimeout(waiter.deadline);
    outcome();
  };

  /** Hands idle connections, or room for new ones, to waiters in order; one that cannot be served yet keeps its place. */
  const serve = () => {
    for (let index = 0; index < waiters.length; ) {
      const waiter = waiters[index] as Waiter;
      const databaseId = waiter.credentials.databaseId;
      const reused = takeIdle(databaseId);
      if (reused) {
        waiters.splice(index, 1);
        settle(waiter, () => waiter.resolve(reused));
      } else if (makeRoom(databaseId)) {
        waiters.splice(index, 1);
        void connect(waiter);
      } else {
        index += 1;
      }
    }
  };

  const release = (connection: SqlConnection, reusable: boolean) => {
    if (ended.has(connection)) {
      count(connection.databaseId, -1);
    } else if (!reusable || closed || Date.now() - connection.openedAt > maxLifetimeMs) {
      end(connection);
    } else {
      const timer = setTimeout(() => {
        if (removeIdle(connection)) end(connection);
        serve();
      }, idleMs);
      timer.unref();
      idle.push({ connection, timer });
    }
    serve();
  };

  return {
    acquire(credentials) {
      if (closed) return Promise.reject(new Error('the SQL connections are closed'));
      return new Promise<SqlConnection>((resolve, reject) => {
        const waiter: Waiter = {
          credentials,
          resolve,
          reject,
          settled: false,
          deadline: setTimeout(() => {
            const index = waiters.indexOf(waiter);
            if (index >= 0) waiters.splice(index, 1);
            settle(waiter, () => reject(new SqlConnectionsBusy()));
          }, options.acquireTimeoutMs),
        };
        waiters.push(waiter);
        serve();
      });
    },

    release,

    async close() {
      closed = true;
      for (const waiter of waiters.splice(0))
        settle(waiter, () => waiter.reject(new Error('the SQL connections are closed')));
      const ending = idle.splice(0).map((entry) => {
        clearTimeout(entry.timer);
        count(entry.connection.databaseId, -1);
        return entry.connection.client.end().catch(() => {});
      });
      await Promise.all(ending);
    },
  };
}
