import type { Principal } from '@recordbase/contracts/api-keys';
import type { FieldType } from '@recordbase/contracts/fields';
import type { SqlSchemaResponse } from '@recordbase/contracts/sql';
import type { PrismaClient } from '@recordbase/db';
import { sqlName, sqlViewSchemaName } from '@recordbase/db/physical';
import { findAccessibleDatabase } from '../access';
import { ensureSqlViews } from './views';

/**
 * What read-only SQL sees of a database: each table under the name queries use, its columns with
 * their fields and PostgreSQL types, read from the views themselves (sql-views.ts), so it cannot
 * say other than what a query meets.
 */
export async function describeSqlSchema(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
): Promise<SqlSchemaResponse> {
  const database = await findAccessibleDatabase(prisma, principal, databaseId);
  await ensureSqlViews(prisma, database);
  const [tables, viewColumns] = await Promise.all([
    prisma.table.findMany({
      where: { databaseId: database.id },
      orderBy: { createdAt: 'asc' },
      select: {
        id: true,
        name: true,
        fields: { orderBy: { position: 'asc' }, select: { id: true, name: true, type: true } },
      },
    }),
    prisma.$queryRawUnsafe<{ view: string; name: string; type: string }[]>(
      `SELECT c.relname AS view, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
         FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE n.nspname = $1 AND c.relkind = 'v'`,
      sqlViewSchemaName(database.id),
    ),
  ]);
  const typeOf = new Map(viewColumns.map((column) => [`${column.view}\u0000${column.name}`, column.type]));
  return {
    tables: tables.map((table) => {
      const view = sqlName(table.name);
      const column = (name: string, field: { id: string; type: string } | null) => ({
        name,
        fieldId: field?.id ?? null,
        fieldType: (field?.type as FieldType | undefined) ?? null,
        sqlType: typeOf.get(`${view}\u0000${name}`) ?? 'unknown',
      });
      return {
        name: view,
        tableId: table.id,
        columns: [
          column('id', null),
          column('createdAt', null),
          column('updatedAt', null),
          ...table.fields.map((field) => column(sqlName(field.name), field)),
        ],
      };
    }),
  };
}
