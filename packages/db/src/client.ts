import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/prisma/client';
import { createLongStatements, LONG_STATEMENT_CPU_MS, type LongStatements } from './long-statements';
import { survivesLostConnections } from './pool-errors';
// Every connection of every pg client in the process gets its messages bounded.
import './message-bound';

export { Prisma } from './generated/prisma/client';
export { PrismaClient };

/** A transaction handle from `prisma.$transaction(async (tx) => ...)`. */
export type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0] & {};

export interface Db {
  prisma: PrismaClient;
  /** The same connections Prisma uses, for the hand-written SQL of the physical tables. */
  pool: pg.Pool;
  /** What moves the pool's long statements back in the CPU queue, for other connections to share. */
  longStatements?: LongStatements;
  /** Work to end before the connections close (a listener holding one of them). */
  beforeClose(hook: () => Promise<void>): void;
  close(): Promise<void>;
}

export interface DbOptions {
  maxConnections?: number;
  applicationName?: string;
  /**
   * Longest any statement may run, set on every connection (work that needs longer, such as schema
   * changes, raises it for its own transaction). Every query has a timeout.
   */
  statementTimeoutMs?: number;
  /** Longest a caller waits for a free connection before failing (answered 503, not queued forever). */
  acquireTimeoutMs?: number;
  /**
   * `false` lets commits return before their WAL reaches disk: a crash of PostgreSQL may lose the
   * last few hundred milliseconds of commits. Only for writers to whom a lost commit means work
   * done again (the dispatcher's bookkeeping: at worst a delivery is sent twice), never lost.
   */
  synchronousCommit?: boolean;
  /**
   * Statements running past this many milliseconds, or spending LONG_STATEMENT_CPU_MS of CPU
   * (whichever is less) yield the CPU to short ones until they end (long-statements.ts). Absent or
   * 0: they never do.
   */
  longStatementYieldMs?: number;
  /** Told once, when this process cannot make long statements yield (see long-statements.ts). */
  onLongStatementsUnavailable?: (reason: string) => void;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;
export const DEFAULT_ACQUIRE_TIMEOUT_MS = 5_000;

export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.maxConnections ?? 10,
    application_name: options.applicationName ?? 'recordbase',
    statement_timeout: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    connectionTimeoutMillis: options.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS,
    ...(options.synchronousCommit === false ? { options: '-c synchronous_commit=off' } : {}),
  });
  const longStatements = options.longStatementYieldMs
    ? createLongStatements({
        afterMs: options.longStatementYieldMs,
        afterCpuMs: Math.min(LONG_STATEMENT_CPU_MS, options.longStatementYieldMs),
        onUnavailable: options.onLongStatementsUnavailable,
      })
    : undefined;
  // Prisma's connections included (it uses this pool).
  survivesLostConnections(pool);
  // Every connection of the pool is watched.
  if (longStatements) pool.on('connect', (client) => longStatements.watch(client));
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  let closed = false;
  const hooks: (() => Promise<void>)[] = [];
  return {
    prisma,
    pool,
    longStatements,
    beforeClose(hook) {
      hooks.push(hook);
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(hooks.map((hook) => hook()));
      longStatements?.close();
      await prisma.$disconnect();
      await pool.end();
    },
  };
}
