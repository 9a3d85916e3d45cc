import type { Principal } from '@recordbase/contracts/api-keys';
import { DomainError, type InputPath, invalid } from '@recordbase/contracts/domain-errors';
import {
  databaseErrorOf,
  isDataException,
  isUniqueViolation,
  type PrismaClient,
  type Tx,
} from '@recordbase/db';
import { type DatabaseRef, findAccessibleDatabase } from './access';
import { type EventPublisher, publishingEvents, type TransactionEvents } from './events';
import { indexBuilderName } from './records/background-indexes';
import { notifySchemaChange } from './records/table-cache';
import { noteDatabaseChange, rebuildChangedSqlViews } from './sql/views';

/** Where schema changes run, and where the events they append go once committed. */
export interface SchemaDb {
  prisma: PrismaClient;
  events: EventPublisher;
  /** Called once a change has committed, before its answer (this process's table cache). */
  afterChange?: () => void;
}

/**
 * Schema changes rewrite tables; give them room, but not forever. The statement timeout matches
 * the transaction's, so PostgreSQL itself stops a statement Prisma has given up on.
 */
export const SCHEMA_CHANGE_TIMEOUT_MS = 120_000;
const SCHEMA_TX_OPTIONS = { maxWait: 10_000, timeout: SCHEMA_CHANGE_TIMEOUT_MS } as const;

const duplicateNameMessages: Record<string, string> = {
  tables_database_id_name_key_key: 'a table with this name already exists in the database',
  fields_table_id_name_key_key: 'a field with this name already exists in the table',
};

/**
 * Runs metadata changes and their DDL in one transaction, so both commit or neither does, and
 * turns the database's refusals into refusals that say what was wrong.
 */
export async function inSchemaTransaction<T>(
  schema: SchemaDb,
  work: (tx: Tx, events: TransactionEvents) => Promise<T>,
): Promise<T> {
  try {
    const result = await publishingEvents(
      schema.events,
      (inTx: (tx: Tx) => Promise<T>) =>
        schema.prisma.$transaction(async (tx) => {
          await tx.$executeRawUnsafe(`SET LOCAL statement_timeout = ${SCHEMA_CHANGE_TIMEOUT_MS}`);
          // Delivered on commit only: every process drops the table metadata it keeps.
          await tx.$executeRawUnsafe(notifySchemaChange);
          const result = await inTx(tx);
          await rebuildChangedSqlViews(tx);
          return result;
        }, SCHEMA_TX_OPTIONS),
      work,
    );
    // This process's own cache, before the answer leaves: its NOTIFY may arrive after the next request.
    schema.afterChange?.();
    return result;
  } catch (error) {
    if (error instanceof DomainError) throw error;
    const info = databaseErrorOf(error);
    const duplicateName = info?.constraint && duplicateNameMessages[info.constraint];
    if (duplicateName && isUniqueViolation(error)) throw invalid(['name'], duplicateName);
    throw error;
  }
}

/**
 * The database a schema change works on, once the key may change it; its views for read-only SQL
 * are rebuilt before the change commits (sql-views.ts). The background index builds
 * of its schema (background-indexes.ts) are cancelled before the change takes its tables' locks,
 * so neither waits for the other; a build is asked for again by a later request.
 */
export async function databaseForChange(
  tx: Tx,
  principal: Principal,
  databaseId: string,
): Promise<DatabaseRef> {
  const database = await findAccessibleDatabase(tx, principal, databaseId);
  await tx.$queryRawUnsafe(
    'SELECT count(pg_cancel_backend(pid))::int AS cancelled FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
    indexBuilderName(database.schemaName),
  );
  // Dropping the views is the change's first DDL: after the builds are gone.
  await noteDatabaseChange(tx, database);
  // Table metadata kept by any process is older than this change from its commit on.
  await stepSchemaVersion(tx, database.id);
  return database;
}

/**
 * Takes the database's schema version a step in `tx`: from its commit on, a listing or write
 * holding the table metadata of before finds it stale in its own snapshot (table-meta.ts) and
 * reads it again. It also holds the database's row until then, so changes of metadata queue.
 */
export async function stepSchemaVersion(tx: Tx, databaseId: string): Promise<void> {
  await tx.$executeRawUnsafe(
    'UPDATE databases SET schema_version = schema_version + 1 WHERE id = $1::uuid',
    databaseId,
  );
}

/**
 * Announces, in `tx`, a change of what the table metadata every process keeps holds besides the
 * schema (a view, or which views webhooks watch): the schema version's step, and the NOTIFY that
 * has each process drop what it keeps once `tx` commits.
 */
export async function announceMetadataChange(tx: Tx, databaseId: string): Promise<void> {
  await stepSchemaVersion(tx, databaseId);
  await tx.$executeRawUnsafe(notifySchemaChange);
}

export async function runDdl(tx: Tx, statements: readonly string[]): Promise<void> {
  for (const statement of statements) await tx.$executeRawUnsafe(statement);
}

/**
 * Runs conversion DDL; a value the new type cannot hold is refused at `where`, `what` and the
 * database's words naming the field and value.
 */
export async function runConversion(
  tx: Tx,
  statements: readonly string[],
  where: InputPath,
  what: string,
): Promise<void> {
  try {
    await runDdl(tx, statements);
  } catch (error) {
    if (isDataException(error)) throw invalid(where, `${what}: ${databaseErrorOf(error)?.message}`);
    throw error;
  }
}
