import type { Principal } from '@recordbase/contracts/api-keys';
import { TABLE_ID_PATTERN } from '@recordbase/contracts/common';
import { type DomainError, notFound } from '@recordbase/contracts/domain-errors';
import type { Tx } from '@recordbase/db';
import { didYouMean } from '@recordbase/db/field-types';
import { accessibleDatabaseId, databaseNotFound } from './access-policy';

type Client = Pick<Tx, 'database' | 'table' | 'field'>;

export interface DatabaseRef {
  id: string;
  name: string;
  schemaName: string;
}

/** The databases a key reaches, as a Prisma `where`: every one for a key of no particular databases. */
export const reachableDatabases = (principal: Principal) =>
  principal.databaseIds === null ? {} : { id: { in: [...principal.databaseIds] } };

/** The database if it exists and the key may see it (access-policy.ts's accessibleDatabaseId). */
export async function findAccessibleDatabase(
  client: Client,
  principal: Principal,
  databaseId: string,
): Promise<DatabaseRef> {
  const database = await client.database.findUnique({
    where: { id: accessibleDatabaseId(principal, databaseId) },
    select: { id: true, name: true, schemaName: true },
  });
  if (!database) throw databaseNotFound(databaseId);
  return database;
}

/** Tables are addressed by id or by name (case-insensitive); an id wins over a name. */
export async function findTableByRef(client: Client, databaseId: string, tableRef: string) {
  const byId = TABLE_ID_PATTERN.test(tableRef)
    ? await client.table.findFirst({ where: { id: tableRef, databaseId } })
    : null;
  const table =
    byId ??
    (await client.table.findUnique({
      where: { databaseId_nameKey: { databaseId, nameKey: nameKey(tableRef) } },
    }));
  if (!table) {
    const names = await client.table.findMany({
      where: { databaseId },
      select: { name: true },
      orderBy: { createdAt: 'asc' },
    });
    throw tableNotFound(
      tableRef,
      names.map((row) => row.name),
    );
  }
  return table;
}

/**
 * The refusal of a table reference that names no table of the database: `tableNames` are that
 * database's only (the key may see them all), and the nearest of them is suggested.
 */
export function tableNotFound(tableRef: string, tableNames: readonly string[]): DomainError {
  return notFound(`Table ${JSON.stringify(tableRef)} not found${didYouMean(tableRef, tableNames)}`);
}

/** Names compare case-insensitively and ignoring surrounding spaces. */
export function nameKey(name: string): string {
  return name.trim().toLowerCase();
}
