import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/prisma/client';

export type { Prisma } from './generated/prisma/client';
export { PrismaClient };

/** A transaction handle from `prisma.$transaction(async (tx) => ...)`. */
export type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0] & {};

export interface Db {
  prisma: PrismaClient;
  /** The same connections Prisma uses, for the hand-written SQL of the physical tables. */
  pool: pg.Pool;
  close(): Promise<void>;
}

export interface DbOptions {
  maxConnections?: number;
  applicationName?: string;
}

export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.maxConnections ?? 10,
    application_name: options.applicationName ?? 'recordbase',
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  let closed = false;
  return {
    prisma,
    pool,
    async close() {
      if (closed) return;
      closed = true;
      await prisma.$disconnect();
      await pool.end();
    },
  };
}
