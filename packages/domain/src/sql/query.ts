import type { Principal } from '@recordbase/contracts/api-keys';
import { busy, clip, invalid } from '@recordbase/contracts/domain-errors';
import type { SqlQueryRequest, SqlQueryResponse } from '@recordbase/contracts/sql';
import { MessageTooLarge, type PrismaClient, sendCancelRequest } from '@recordbase/db';
import type pg from 'pg';
import { findAccessibleDatabase } from '../access';
import { type SqlConnections, SqlConnectionsBusy } from './connections';
import { CopyRefused, type PortalResult, SqlPortal } from './portal';
import type { SqlCredentials, SqlRoles } from './roles';
import { columnTypes } from './values';

/**
 * Read-only SQL. What keeps a query to reading its own database is PostgreSQL: the
 * query runs on a connection logged in as the database's role (roles.ts), which may read that
 * database's views and nothing else, inside a read-only transaction that is always rolled back,
 * under a statement timeout, one statement per request (the extended protocol takes no more).
 */

export const SQL_DEFAULTS = {
  statementTimeoutMs: 5000,
  /** Per process, across databases. */
  maxConnections: 8,
  /** Per database, across processes: its role's connection limit. */
  connectionsPerBase: 4,
  /**
   * Per database, and per key, across processes: twice its connections, so a burst waits for a
   * connection rather than being refused; past it, too many.
   */
  inFlightPerBase: 8,
  maxResultBytes: 10 * 1024 * 1024,
} as const;

/**
 * A row larger than the whole result may be is never returned, so a connection takes no message
 * larger than that (and its protocol overhead): a row or an error quoting a value of up to 1 GB
 * ends the connection at its first bytes rather than filling the process's memory.
 */
export const sqlMaxMessageBytes = (maxResultBytes: number) => maxResultBytes + 64 * 1024;

export interface SqlQueryContext {
  prisma: PrismaClient;
  roles: SqlRoles;
  connections: SqlConnections;
  statementTimeoutMs: number;
  maxResultBytes: number;
  /**
   * Ends a query's backend from one of the service's own connections (pg_terminate_backend): the
   * one end nothing inside a query can catch. Only a backend of `role` is touched, so a process
   * id reused by then can never be another tenant's or the service's.
   */
  terminateBackend(pid: number, role: string): Promise<void>;
  /**
   * Takes a place among the SQL queries in flight of the database and of the key, or refuses
   * (RATE_LIMITED) when either is full; resolves to the place's release.
   */
  admit(databaseId: string, keyId: string): Promise<() => void>;
  /** A place of the key's share of database connections (db key-shares.ts), waited for. */
  keyShare(keyId: string, signal?: AbortSignal): Promise<() => void>;
}

/** Past the statement timeout, how long PostgreSQL gets to stop on its own before we cancel. */
const CANCEL_GRACE_MS = 1000;
/** Past the cancel, how long before the backend is terminated, its socket dropped and the request answered. */
const TERMINATE_GRACE_MS = 1000;

class QueryStopped extends Error {}

/** pg keeps the backend's process id on the client, though its types do not say so. */
interface BackendIdentity {
  processID: number | null;
}

export async function runSqlQuery(
  context: SqlQueryContext,
  principal: Principal,
  databaseId: string,
  request: SqlQueryRequest,
  signal?: AbortSignal,
): Promise<SqlQueryResponse> {
  const database = await findAccessibleDatabase(context.prisma, principal, databaseId);
  const credentials = await context.roles.credentials(database);
  const keyId = principal.keyId ?? 'root';
  const leave = await context.admit(database.id, keyId);
  try {
    const unshare = await context.keyShare(keyId, signal);
    try {
      return await runAdmitted(context, credentials, request, signal);
    } finally {
      unshare();
    }
  } finally {
    leave();
  }
}

async function runAdmitted(
  context: SqlQueryContext,
  credentials: SqlCredentials,
  request: SqlQueryRequest,
  signal: AbortSignal | undefined,
): Promise<SqlQueryResponse> {
  let connection: Awaited<ReturnType<SqlConnections['acquire']>>;
  try {
    connection = await context.connections.acquire(credentials);
  } catch (error) {
    if (error instanceof SqlConnectionsBusy) {
      throw busy('Every connection for SQL queries is in use; retry shortly', 1);
    }
    throw error;
  }
  const { client } = connection;
  // A connection sent a cancel is never reused: a late cancel must not reach another query.
  let reusable = true;
  const cancel = () => {
    if (!reusable) return;
    reusable = false;
    sendCancelRequest(client as unknown as pg.PoolClient);
  };
  // The hard end: whatever the query does with the cancel, its backend is terminated, its socket
  // dropped, and the request answered, so no query holds a connection slot past its deadline.
  let stop!: (error: Error) => void;
  const stopped = new Promise<never>((_, reject) => {
    stop = reject;
  });
  const terminate = (reason: Error) => {
    reusable = false;
    const pid = (client as unknown as BackendIdentity).processID;
    if (pid !== null) void context.terminateBackend(pid, credentials.user).catch(() => {});
    (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    stop(reason);
  };
  const timers: NodeJS.Timeout[] = [
    setTimeout(cancel, context.statementTimeoutMs + CANCEL_GRACE_MS),
    setTimeout(
      () => terminate(new QueryStopped()),
      context.statementTimeoutMs + CANCEL_GRACE_MS + TERMINATE_GRACE_MS,
    ),
  ];
  const abandon = () => {
    cancel();
    timers.push(setTimeout(() => terminate(new QueryStopped()), TERMINATE_GRACE_MS));
  };
  signal?.addEventListener('abort', abandon, { once: true });
  const run = async (): Promise<SqlQueryResponse> => {
    await client.query(
      `BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = ${Math.trunc(context.statementTimeoutMs)}`,
    );
    const portal = new SqlPortal(
      request.query,
      request.params,
      { maxRows: request.limit, maxBytes: context.maxResultBytes },
      cancel,
    );
    client.query(portal as unknown as pg.Submittable);
    let result: PortalResult;
    try {
      result = await portal.result;
    } catch (error) {
      throw queryError(error);
    }
    const types = await columnTypes(client, result.fields);
    await client.query('ROLLBACK');
    // Whatever the statement left in the session outside the transaction (a PREPARE, say) goes.
    if (result.command !== 'SELECT') await client.query('DISCARD ALL');
    return {
      columns: result.fields.map((field, index) => ({
        name: field.name,
        type: types[index]?.name ?? 'unknown',
      })),
      rows: result.rows.map((row) =>
        row.map((value, index) => (value === null ? null : (types[index]?.convert(value) ?? value))),
      ),
      rowCount: result.rows.length,
      truncated: result.truncated,
    };
  };
  const running = run();
  // Once stopped, the abandoned run fails on its dropped connection: nobody is waiting for it.
  running.catch(() => {});
  try {
    return await Promise.race([running, stopped]);
  } catch (error) {
    // The transaction may be open, failed, or the connection gone: none of it is kept.
    reusable = false;
    if (error instanceof QueryStopped) throw queryError({ code: QUERY_CANCELED });
    throw error;
  } finally {
    for (const timer of timers) clearTimeout(timer);
    signal?.removeEventListener('abort', abandon);
    context.connections.release(connection, reusable);
  }
}

const QUERY_CANCELED = '57014';

const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

/** PostgreSQL's messages quote values whole; a caller gets enough to see which. */
const MAX_MESSAGE_CHARS = 1000;

interface PostgresError {
  code?: unknown;
  message?: unknown;
  position?: unknown;
  hint?: unknown;
}

/**
 * Refusals that are the database's state rather than the query's fault. Narrower than
 * classifyDatabaseError's: in a caller's own SQL, the rest of class 53 (its temp_file_limit, the
 * memory it asked for) is the query's doing, refused as invalid.
 */
const BUSY_STATES = new Set(['53300', '57P01', '57P02', '57P03', '40001', '40P01']);

/** PostgreSQL's refusal of a query, worded for its author: invalid, with its message and position. */
function queryError(error: unknown): Error {
  if (error instanceof CopyRefused) return invalid(null, error.message);
  if (error instanceof MessageTooLarge) {
    return invalid(
      null,
      error.kind === 'a row'
        ? `A row of the result is ${megabytes(error.bytes)}, more than the whole result may be (SQL_MAX_RESULT_BYTES); select fewer or shorter values`
        : `The query failed with ${error.kind} of ${megabytes(error.bytes)}, too long to be read (it quotes a value that large); the query was stopped`,
    );
  }
  const pgError = error as PostgresError;
  if (typeof pgError.code !== 'string' || !/^[0-9A-Z]{5}$/.test(pgError.code)) {
    return error instanceof Error ? error : new Error(String(error));
  }
  const code = pgError.code;
  if (code.startsWith('08') || BUSY_STATES.has(code)) {
    return busy('The database cannot run SQL queries now; retry shortly', 1);
  }
  const where = typeof pgError.position === 'string' ? `, at character ${pgError.position}` : '';
  const hint = typeof pgError.hint === 'string' ? ` Hint: ${clip(pgError.hint, MAX_MESSAGE_CHARS)}` : '';
  const message =
    code === QUERY_CANCELED
      ? 'The query ran past its time limit and was stopped'
      : `The query failed: ${clip(String(pgError.message), MAX_MESSAGE_CHARS)}`;
  return invalid(null, `${message} (SQLSTATE ${code}${where}).${hint}`);
}
