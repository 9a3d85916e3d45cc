import type { FieldType } from '@recordbase/contracts/fields';
import type { PrismaClient, Tx } from '@recordbase/db';
import { dropSqlViews, grantSqlViewsDdl, sqlViewSchemaName, sqlViewsDdl } from '@recordbase/db/physical';
import type { DatabaseRef } from '../access';

/**
 * Keeps each database's views for read-only SQL (packages/db sql-views.ts) in step with its
 * tables and fields: a schema change notes the databases it changes before its DDL, and their
 * views are rebuilt before its transaction commits, so no query sees views of another state.
 */

const changed = new WeakMap<Tx, Map<string, Pick<DatabaseRef, 'id' | 'schemaName'>>>();

/** A lock on `key` held by the transaction until it ends (PostgreSQL's advisory locks). */
export async function lockUntilCommit(tx: Tx, key: string): Promise<void> {
  await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', key);
}

/**
 * One rebuilder of a database's views at a time: changes, first reads (ensureSqlViews) and the
 * first query's role (roles.ts). PostgreSQL's advisory locks are re-entrant, so a transaction that
 * took it to look may take it again to change.
 */
export async function lockSqlViews(tx: Tx, databaseId: string): Promise<void> {
  await lockUntilCommit(tx, `sql-views:${databaseId}`);
}

// A scan of the catalog, not to_regnamespace: that reads the backend's catalog cache, which a
// transaction that waited for the lock has not yet told of the schema another one created.
const viewsPresent = async (prisma: PrismaClient | Tx, databaseId: string) => {
  const rows = await prisma.$queryRawUnsafe<{ present: boolean }[]>(
    'SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = $1) AS present',
    sqlViewSchemaName(databaseId),
  );
  return rows[0]?.present === true;
};

/**
 * Called before the change's DDL: the views go at once, since PostgreSQL refuses to drop or
 * convert a column a view reads, and come back at the end of the transaction.
 */
export async function noteDatabaseChange(
  tx: Tx,
  database: Pick<DatabaseRef, 'id' | 'schemaName'>,
): Promise<void> {
  const databases = changed.get(tx) ?? new Map();
  changed.set(tx, databases);
  if (databases.has(database.id)) return;
  databases.set(database.id, database);
  await lockSqlViews(tx, database.id);
  for (const statement of dropSqlViews(database.id)) await tx.$executeRawUnsafe(statement);
}

/**
 * Builds the views of a database that has none: one created before they existed. Changes keep
 * them in step from then on.
 */
export async function ensureSqlViews(
  prisma: PrismaClient,
  database: Pick<DatabaseRef, 'id' | 'schemaName'>,
): Promise<void> {
  if (await viewsPresent(prisma, database.id)) return;
  await prisma.$transaction(async (tx) => {
    // Another request may have built them while this one waited for the lock: once is enough.
    await lockSqlViews(tx, database.id);
    if (await viewsPresent(tx, database.id)) return;
    await noteDatabaseChange(tx, database);
    await rebuildChangedSqlViews(tx);
  });
}

export async function rebuildChangedSqlViews(tx: Tx): Promise<void> {
  for (const database of changed.get(tx)?.values() ?? []) {
    const exists = await tx.database.findUnique({ where: { id: database.id }, select: { id: true } });
    const statements = exists
      ? sqlViewsDdl(database.id, database.schemaName, await viewTables(tx, database.id))
      : dropSqlViews(database.id);
    for (const statement of statements) await tx.$executeRawUnsafe(statement);
    // Dropping the views' schema dropped what the database's query role was granted on them.
    const role = exists && (await tx.databaseSqlRole.findUnique({ where: { databaseId: database.id } }));
    if (role) for (const statement of grantSqlViewsDdl(database.id)) await tx.$executeRawUnsafe(statement);
  }
  changed.delete(tx);
}

async function viewTables(tx: Tx, databaseId: string) {
  const tables = await tx.table.findMany({
    where: { databaseId },
    orderBy: { createdAt: 'asc' },
    select: {
      id: true,
      name: true,
      fields: { orderBy: { position: 'asc' }, select: { id: true, name: true, type: true, template: true } },
    },
  });
  return tables.map((table) => ({
    ...table,
    fields: table.fields.map((field) => ({ ...field, type: field.type as FieldType })),
  }));
}
