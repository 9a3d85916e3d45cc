import type { SqlQueryRequest, SqlQueryResponse } from '@recordbase/contracts/sql';
import { type PrismaClient, sendCancelRequest } from '@recordbase/db';
import type { Principal } from '@recordbase/server-kit/auth';
import { AppError, badRequest } from '@recordbase/server-kit/errors';
import type pg from 'pg';
import { findAccessibleDatabase } from '../access';
import { type SqlConnections, SqlConnectionsBusy } from './connections';
import { CopyRefused, type PortalResult, SqlPortal } from './portal';
import type { SqlRoles } from './roles';
import { columnTypes } from './values';

/**
 * Read-only SQL over HTTP. What keeps a query to reading its own database is PostgreSQL: the
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
  maxResultBytes: 10 * 1024 * 1024,
} as const;

export interface SqlQueryContext {
  prisma: PrismaClient;
  roles: SqlRoles;
  connections: SqlConnections;
  statementTimeoutMs: number;
  maxResultBytes: number;
}

/** Past the statement timeout, how long PostgreSQL gets to stop on its own before we cancel. */
const CANCEL_GRACE_MS = 1000;

export async function runSqlQuery(
  context: SqlQueryContext,
  principal: Principal,
  databaseId: string,
  request: SqlQueryRequest,
  signal?: AbortSignal,
): Promise<SqlQueryResponse> {
  const database = await findAccessibleDatabase(context.prisma, principal, databaseId);
  const credentials = await context.roles.credentials(database);
  let connection: Awaited<ReturnType<SqlConnections['acquire']>>;
  try {
    connection = await context.connections.acquire(credentials);
  } catch (error) {
    if (error instanceof SqlConnectionsBusy) {
      throw new AppError('SERVICE_UNAVAILABLE', 'Every connection for SQL queries is in use; retry shortly', {
        'Retry-After': '1',
      });
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
  const deadline = setTimeout(cancel, context.statementTimeoutMs + CANCEL_GRACE_MS);
  signal?.addEventListener('abort', cancel, { once: true });
  try {
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
  } catch (error) {
    // The transaction may be open, failed, or the connection gone: none of it is kept.
    reusable = false;
    throw error;
  } finally {
    clearTimeout(deadline);
    signal?.removeEventListener('abort', cancel);
    context.connections.release(connection, reusable);
  }
}

interface PostgresError {
  code?: unknown;
  message?: unknown;
  position?: unknown;
  hint?: unknown;
}

/**
 * Refusals that are the database's state rather than the query's fault. Narrower than
 * classifyDatabaseError's: in a caller's own SQL, the rest of class 53 (its temp_file_limit, the
 * memory it asked for) is the query's doing, answered 400.
 */
const BUSY_STATES = new Set(['53300', '57P01', '57P02', '57P03', '40001', '40P01']);

/** PostgreSQL's refusal of a query, worded for its author: 400, with its message and position. */
function queryError(error: unknown): Error {
  if (error instanceof CopyRefused) return badRequest(error.message);
  const pgError = error as PostgresError;
  if (typeof pgError.code !== 'string' || !/^[0-9A-Z]{5}$/.test(pgError.code)) {
    return error instanceof Error ? error : new Error(String(error));
  }
  const code = pgError.code;
  if (code.startsWith('08') || BUSY_STATES.has(code)) {
    return new AppError('SERVICE_UNAVAILABLE', 'The database cannot run SQL queries now; retry shortly', {
      'Retry-After': '1',
    });
  }
  const where = typeof pgError.position === 'string' ? `, at character ${pgError.position}` : '';
  const hint = typeof pgError.hint === 'string' ? ` Hint: ${pgError.hint}` : '';
  const message =
    code === '57014'
      ? 'The query ran past its time limit and was stopped'
      : `The query failed: ${String(pgError.message)}`;
  return badRequest(`${message} (SQLSTATE ${code}${where}).${hint}`);
}
