import { connect as connectTcp, type Socket } from 'node:net';
import type pg from 'pg';
import type { requestShare } from './key-shares';

type RequestShare = ReturnType<typeof requestShare>;

/**
 * The part of a pool that a unit of work uses: one-off queries, and connections for transactions
 * (see withTransaction). A plain pg.Pool is one; so is the pool of one request (cancellablePool).
 */
export type Connections = Pick<pg.Pool, 'query' | 'connect'>;

/** What pg keeps about the server process behind a client, which a cancel request names. */
interface BackendIdentity {
  processID: number | null;
  secretKey: number | null;
  host: string;
  port: number;
}

/** The protocol's CancelRequest code (1234 in the high 16 bits, 5678 in the low 16 bits). */
const CANCEL_REQUEST_CODE = 80877102;
const CANCEL_CONNECT_TIMEOUT_MS = 5000;

/**
 * Asks PostgreSQL to cancel whatever the client's backend is running, over a separate short-lived
 * connection as the protocol prescribes: it needs no pool slot, so it works when the pool is full.
 */
export function sendCancelRequest(client: pg.PoolClient): void {
  const { processID, secretKey, host, port } = client as unknown as BackendIdentity;
  if (processID === null || secretKey === null) return;
  const message = Buffer.alloc(16);
  message.writeInt32BE(16, 0);
  message.writeInt32BE(CANCEL_REQUEST_CODE, 4);
  message.writeInt32BE(processID, 8);
  message.writeInt32BE(secretKey, 12);
  const socket: Socket = host.startsWith('/')
    ? connectTcp(`${host}/.s.PGSQL.${port}`)
    : connectTcp(port, host);
  socket.setTimeout(CANCEL_CONNECT_TIMEOUT_MS, () => socket.destroy());
  // Best effort: the statement timeout still bounds the query if the request is lost.
  socket.on('error', () => socket.destroy());
  socket.on('connect', () => socket.end(message));
}

/**
 * The pool as one request sees it: when `signal` aborts (the client went away), every statement
 * the request is running is cancelled instead of holding its connection to the end. A connection
 * that was sent a cancel is discarded on release rather than reused, so a late cancel can never
 * hit another request's statement.
 */
export function cancellablePool(
  pool: pg.Pool,
  signal: AbortSignal,
  /** The request's claim on its key's share of the connections (key-shares.ts), if bounded. */
  share?: RequestShare,
): Connections {
  const inUse = new Set<pg.PoolClient>();
  const cancelled = new WeakSet<pg.PoolClient>();
  const cancelAll = () => {
    for (const client of inUse) {
      cancelled.add(client);
      sendCancelRequest(client);
    }
  };
  signal.addEventListener('abort', cancelAll, { once: true });

  const connect = async (): Promise<pg.PoolClient> => {
    await share?.enter();
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      share?.leave();
      throw error;
    }
    if (signal.aborted) {
      client.release();
      share?.leave();
      throw signal.reason ?? new Error('the request was aborted');
    }
    inUse.add(client);
    const release = client.release.bind(client);
    client.release = (destroy?: boolean | Error) => {
      inUse.delete(client);
      client.release = release;
      release(destroy ?? cancelled.has(client));
      share?.leave();
    };
    return client;
  };

  const query = (async (...args: Parameters<pg.PoolClient['query']>) => {
    const client = await connect();
    try {
      return await (client.query as (...a: unknown[]) => Promise<unknown>)(...args);
    } finally {
      client.release();
    }
  }) as Connections['query'];

  return { connect: connect as Connections['connect'], query };
}
