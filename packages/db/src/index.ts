export { createDb, type Db, type DbOptions, type Prisma, PrismaClient, type Tx } from './client';
export * from './errors';
export * from './ids';
export * from './outbox';
export * from './secrets';
export * from './transaction';
