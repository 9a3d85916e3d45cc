import type { Principal } from '@recordbase/contracts/api-keys';
import { forbidden } from '@recordbase/contracts/domain-errors';
import type { CreateDatabaseRequest, Database, UpdateDatabaseRequest } from '@recordbase/contracts/schema';
import { newDatabaseId, type PrismaClient } from '@recordbase/db';
import {
  createDatabaseSchema,
  dropDatabaseSchema,
  dropSqlRoleDdl,
  schemaNameForDatabase,
} from '@recordbase/db/physical';
import { findAccessibleDatabase, reachableDatabases } from './access';
import { databaseForChange, inSchemaTransaction, runDdl, type SchemaDb } from './schema-tx';
import { tableWithFields, toDatabaseDto } from './serialize';
import { noteDatabaseChange } from './sql/views';
import { createTablesInTx } from './tables';

const databaseWithTables = { tables: { include: tableWithFields } } as const;

export async function createDatabase(
  schema: SchemaDb,
  principal: Principal,
  input: CreateDatabaseRequest,
): Promise<Database> {
  // A key limited to some databases could never reach one it created.
  if (principal.databaseIds !== null) {
    throw forbidden('This API key is limited to specific databases and cannot create new ones');
  }
  return inSchemaTransaction(schema, async (tx, events) => {
    const id = newDatabaseId();
    const database = await tx.database.create({
      data: { id, name: input.name, schemaName: schemaNameForDatabase(id) },
    });
    await runDdl(tx, createDatabaseSchema(id));
    await noteDatabaseChange(tx, database);
    if (input.tables && input.tables.length > 0) {
      await createTablesInTx(tx, database, input.tables, (index) => ['tables', index]);
    }
    const created = toDatabaseDto(
      await tx.database.findUniqueOrThrow({ where: { id }, include: databaseWithTables }),
    );
    for (const table of created.tables) await events.table(id, 'table.created', table);
    return created;
  });
}

export async function listDatabases(prisma: PrismaClient, principal: Principal): Promise<Database[]> {
  const rows = await prisma.database.findMany({
    where: reachableDatabases(principal),
    include: databaseWithTables,
    orderBy: { createdAt: 'asc' },
  });
  return rows.map(toDatabaseDto);
}

export async function getDatabase(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
): Promise<Database> {
  const { id } = await findAccessibleDatabase(prisma, principal, databaseId);
  return toDatabaseDto(
    await prisma.database.findUniqueOrThrow({ where: { id }, include: databaseWithTables }),
  );
}

export async function updateDatabase(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
  patch: UpdateDatabaseRequest,
): Promise<Database> {
  const { id } = await findAccessibleDatabase(prisma, principal, databaseId);
  const updated = await prisma.database.update({
    where: { id },
    data: { name: patch.name, updatedAt: new Date() },
    include: databaseWithTables,
  });
  return toDatabaseDto(updated);
}

/** Removes the database's schema (every table and record in it) with its metadata and query role. */
export async function deleteDatabase(
  schema: SchemaDb,
  principal: Principal,
  databaseId: string,
): Promise<void> {
  await inSchemaTransaction(schema, async (tx) => {
    const database = await databaseForChange(tx, principal, databaseId);
    const tables = await tx.table.findMany({ where: { databaseId: database.id }, select: { id: true } });
    await tx.tableRowCount.deleteMany({ where: { tableId: { in: tables.map((table) => table.id) } } });
    await runDdl(tx, dropDatabaseSchema(database.schemaName));
    // Roles belong to the whole PostgreSQL cluster: dropping the schemas leaves the query role.
    if (await tx.databaseSqlRole.findUnique({ where: { databaseId: database.id } })) {
      await runDdl(tx, dropSqlRoleDdl(database.id));
    }
    await tx.database.delete({ where: { id: database.id } });
  });
}
