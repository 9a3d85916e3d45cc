export * from './cancellation';
export {
  createDb,
  type Db,
  type DbOptions,
  DEFAULT_ACQUIRE_TIMEOUT_MS,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  Prisma,
  PrismaClient,
  type Tx,
} from './client';
export * from './deliveries';
export * from './errors';
export * from './ids';
export * from './import-runs';
export * from './key-shares';
export * from './listener';
export * from './long-statements';
export { boundMessages, DEFAULT_MAX_MESSAGE_BYTES, MessageTooLarge } from './message-bound';
export * from './notified-cache';
export * from './outbox';
export * from './prepared';
export * from './record-trash';
export * from './schema-changes';
export * from './schema-trash';
export * from './secrets';
export * from './transaction';
