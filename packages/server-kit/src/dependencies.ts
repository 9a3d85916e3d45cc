import type { DbOptions } from '@recordbase/db';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { CommonEnv } from './env';
import type { Logger } from './logger';

/**
 * Start-up checks with messages a person can act on: which dependency, the address tried, and how
 * to start it.
 */

function describeAddress(url: string, fallbackPort: number): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || fallbackPort}`;
  } catch {
    return 'an unparseable address';
  }
}

export async function checkPostgres(databaseUrl: string, adminDatabase = 'postgres'): Promise<void> {
  const url = new URL(databaseUrl);
  url.pathname = `/${adminDatabase}`;
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 3000 });
  // A connection ended between the two calls (PostgreSQL restarting) emits 'error' outside a
  // query: unhandled, it would crash the start-up rather than fail the query below with a message.
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw new Error(
      `Cannot reach PostgreSQL at ${describeAddress(databaseUrl, 5432)} (${(error as Error).message}). ` +
        'Start it (for example `pg_ctlcluster 15 main start`, or `docker compose up postgres`) or set DATABASE_URL.',
    );
  } finally {
    await client.end().catch(() => {});
  }
}

export async function checkRedis(redisUrl: string): Promise<void> {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 3000,
    retryStrategy: () => null,
  });
  // The connection error itself arrives as an event; the rejected promise only says "closed".
  let connectionError: Error | undefined;
  redis.on('error', (error: Error) => {
    connectionError ??= error;
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(
      `Cannot reach Redis at ${describeAddress(redisUrl, 6379)} (${(connectionError ?? (error as Error)).message}). ` +
        'Start it (for example `redis-server --daemonize yes`, or `docker compose up redis`) or set REDIS_URL.',
    );
  } finally {
    redis.disconnect();
  }
}

/** The database settings every service takes from the common variables (env.ts). */
export function serviceDbOptions(
  config: Pick<CommonEnv, 'STATEMENT_TIMEOUT_MS' | 'DB_ACQUIRE_TIMEOUT_MS' | 'LONG_STATEMENT_YIELD_MS'>,
  logger: Logger,
): DbOptions {
  return {
    statementTimeoutMs: config.STATEMENT_TIMEOUT_MS,
    acquireTimeoutMs: config.DB_ACQUIRE_TIMEOUT_MS,
    longStatementYieldMs: config.LONG_STATEMENT_YIELD_MS,
    onLongStatementsUnavailable: (reason) =>
      logger.info(
        { reason },
        'long statements run at full priority: this process cannot lower the priority of PostgreSQL backends (LONG_STATEMENT_YIELD_MS)',
      ),
  };
}
