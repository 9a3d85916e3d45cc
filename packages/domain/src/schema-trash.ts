import type { Principal } from '@recordbase/contracts/api-keys';
import { recordAuthor } from '@recordbase/contracts/api-keys';
import { type InputPath, invalid, notFound } from '@recordbase/contracts/domain-errors';
import type { Field as FieldDto, FieldTemplate, FieldType } from '@recordbase/contracts/fields';
import type { RestoredSchema, RestoreSchemaTrashRequest, SchemaTrash } from '@recordbase/contracts/history';
import { MAX_FIELDS_PER_TABLE } from '@recordbase/contracts/schema';
import { Prisma, type PrismaClient, type Tx } from '@recordbase/db';
import {
  fieldTypeModule,
  fillLinkedValuesSql,
  type KeptLinkedValues,
  keptLinkedValues,
} from '@recordbase/db/field-types';
import {
  advanceWriteVersion,
  type PhysicalTable,
  qualifiedTable,
  quoteIdent,
  restoreTrashedField,
} from '@recordbase/db/physical';
import { type DatabaseRef, findAccessibleDatabase, nameKey } from './access';
import type { TransactionEvents } from './events';
import { resolveTemplateFields, toPhysicalField } from './field-definitions';
import { keepFormula, type TableField } from './formula-fields';
import { databaseFields, isLinkedValues, keepLinkedValues } from './linked-fields';
import { databaseForChange, inSchemaTransaction, runDdl, type SchemaDb } from './schema-tx';
import { fieldNames, toFieldDto, toTableDto } from './serialize';
import type { ViewRow } from './views';

/**
 * The database trash: a deleted table or field's metadata in `schema_trash`, its data left where
 * it was (db physical/ddl.ts, trashField), until a restore brings both back or the retention
 * sweep purges them (db schema-trash.ts). A restore is all or nothing: every id asked for is in
 * the trash and can come back as it was, or nothing changes.
 */

/** A metadata row as kept in an entry: Prisma's row as JSON (dates as ISO text). */
interface KeptField {
  id: string;
  tableId: string;
  name: string;
  nameKey: string;
  type: string;
  template: unknown;
  position: number;
  createdAt: string;
  updatedAt: string;
}
interface KeptTable {
  id: string;
  databaseId: string;
  name: string;
  nameKey: string;
  primaryFieldId: string | null;
  createdAt: string;
  updatedAt: string;
}
type FieldEntry = { field: KeptField };
/** A view of a deleted table, as kept with it (entries from before views have none). */
type KeptView = Omit<ViewRow, 'createdAt' | 'updatedAt'> & { createdAt: string; updatedAt: string };
/** A table, its fields, other tables' link fields to it and its views, deleted with it. */
type TableEntry = { table: KeptTable; fields: KeptField[]; inboundLinks: KeptField[]; views?: KeptView[] };

type FieldRow = Omit<KeptField, 'createdAt' | 'updatedAt'> & { createdAt: Date; updatedAt: Date };

const kept = <T>(row: T): T => JSON.parse(JSON.stringify(row)) as T;
const fieldRow = (field: KeptField, updatedAt?: Date): FieldRow => ({
  ...field,
  createdAt: new Date(field.createdAt),
  updatedAt: updatedAt ?? new Date(field.updatedAt),
});
const deletedBy = (principal: Principal) => {
  const { id, name } = recordAuthor(principal.keyId, principal.keyName);
  return { id, name };
};

/** Called by a field's deletion, after its data was set aside (trashField) and its row deleted. */
export async function trashDeletedField(
  tx: Tx,
  principal: Principal,
  databaseId: string,
  field: object & { id: string; tableId: string },
): Promise<void> {
  await tx.schemaTrash.create({
    data: {
      id: field.id,
      databaseId,
      kind: 'field',
      tableId: field.tableId,
      deletedBy: deletedBy(principal),
      entry: { field: kept(field) } as never,
    },
  });
}

/** Called by a table's deletion, with its last metadata and the link fields deleted with it. */
export async function trashDeletedTable(
  tx: Tx,
  principal: Principal,
  databaseId: string,
  table: object & { id: string; fields: readonly object[] },
  inboundLinks: readonly object[],
  /** Its saved views, which come back with it. */
  views: readonly object[],
): Promise<void> {
  const { fields, ...row } = table;
  await tx.schemaTrash.create({
    data: {
      id: table.id,
      databaseId,
      kind: 'table',
      tableId: table.id,
      deletedBy: deletedBy(principal),
      entry: {
        table: kept(row),
        fields: kept(fields),
        inboundLinks: kept(inboundLinks),
        views: kept(views),
      } as never,
    },
  });
}

/** The most recent entries listed per kind: a listing stays a bounded answer. */
export const MAX_LISTED_TRASHED_TABLES = 100;
export const MAX_LISTED_TRASHED_FIELDS = 1000;

/** `GET /bases/{databaseId}/trash`: newest first. */
export async function listSchemaTrash(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
): Promise<SchemaTrash> {
  const database = await findAccessibleDatabase(prisma, principal, databaseId);
  const [tables, fields] = await Promise.all(
    (['table', 'field'] as const).map((kind) =>
      prisma.schemaTrash.findMany({
        where: { databaseId: database.id, kind },
        orderBy: [{ deletedAt: 'desc' }, { id: 'asc' }],
        take: kind === 'table' ? MAX_LISTED_TRASHED_TABLES : MAX_LISTED_TRASHED_FIELDS,
      }),
    ),
  );
  // A formula shows the names of the fields it reads: those of its table as it is now.
  const liveNames = new Map(
    (
      await prisma.field.findMany({
        where: { tableId: { in: [...new Set(fields!.map((entry) => entry.tableId))] } },
        select: { id: true, name: true },
      })
    ).map((field) => [field.id, field.name]),
  );
  const when = (entry: { deletedAt: Date; deletedBy: unknown }) => ({
    deletedAt: entry.deletedAt.toISOString(),
    deletedBy: (entry.deletedBy as { id: string; name: string } | null) ?? null,
  });
  return {
    tables: tables!.map((entry) => {
      const { table, fields: tableFields } = entry.entry as unknown as TableEntry;
      return {
        ...toTableDto({
          ...table,
          createdAt: new Date(table.createdAt),
          updatedAt: new Date(table.updatedAt),
          fields: tableFields.map((field) => fieldRow(field)),
        } as never),
        ...when(entry),
      };
    }),
    fields: fields!.map((entry) => {
      const { field } = entry.entry as unknown as FieldEntry;
      const names = new Map(liveNames);
      names.set(field.id, field.name);
      return { ...toFieldDto(fieldRow(field) as never, names), tableId: field.tableId, ...when(entry) };
    }),
  };
}

interface Restoring {
  tx: Tx;
  events: TransactionEvents;
  database: DatabaseRef;
  /** Tables live by the end of the restore: those there, and those this restore brings back. */
  restoredTableIds: ReadonlySet<string>;
}

/** `POST /bases/{databaseId}/trash/restore`: every table, then every field, all or nothing. */
export async function restoreFromSchemaTrash(
  schema: SchemaDb,
  principal: Principal,
  databaseId: string,
  body: RestoreSchemaTrashRequest,
): Promise<RestoredSchema> {
  const tableIds = [...new Set(body.tableIds ?? [])];
  const fieldIds = [...new Set(body.fieldIds ?? [])];
  return inSchemaTransaction(schema, async (tx, events) => {
    const database = await databaseForChange(tx, principal, databaseId);
    // Locked: a purge (which skips locked entries) cannot drop what is being restored.
    const entries = await tx.$queryRawUnsafe<{ id: string; kind: string; entry: unknown }[]>(
      `SELECT id, kind, entry FROM schema_trash
        WHERE database_id = $1::uuid AND id = ANY($2::text[])
        ORDER BY id FOR UPDATE`,
      database.id,
      [...tableIds, ...fieldIds],
    );
    const byId = new Map(entries.map((entry) => [entry.id, entry]));
    const missing = [
      ...tableIds.filter((id) => byId.get(id)?.kind !== 'table').map((id) => `table ${id}`),
      ...fieldIds.filter((id) => byId.get(id)?.kind !== 'field').map((id) => `field ${id}`),
    ];
    if (missing.length > 0) {
      throw notFound(
        `The ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not in the trash of this database; nothing was restored`,
      );
    }
    const restoring: Restoring = { tx, events, database, restoredTableIds: new Set(tableIds) };
    const tableEntries = tableIds.map((id) => byId.get(id)!.entry as TableEntry);
    for (const [index, entry] of tableEntries.entries()) {
      await restoreTableRows(restoring, entry, ['tableIds', index]);
    }
    // With every table's rows back, what they link to and look up can be checked and computed.
    for (const [index, entry] of tableEntries.entries()) {
      await refillLinkedValues(restoring, entry, ['tableIds', index]);
    }
    // Announced before the fields of other tables that link to them.
    const tables = [];
    for (const id of tableIds) {
      const table = toTableDto(
        await tx.table.findUniqueOrThrow({
          where: { id },
          include: { fields: { orderBy: { position: 'asc' } } },
        }),
      );
      await events.table(database.id, 'table.created', table);
      tables.push(table);
    }
    const restoredFields: FieldDto[] = [];
    for (const [index, entry] of tableEntries.entries()) {
      for (const link of entry.inboundLinks) {
        restoredFields.push(await restoreField(restoring, link, ['tableIds', index], entry.table.name));
      }
    }
    // What a field reads comes back before it: written fields and links, then what derives from
    // them (formulas, lookups), each kind in the order of its table's fields.
    const fields = fieldIds.map((id, index) => ({ index, field: (byId.get(id)!.entry as FieldEntry).field }));
    const derivedLast = (field: KeptField) => (fieldTypeModule(field.type as FieldType).derived ? 1 : 0);
    fields.sort((a, b) => derivedLast(a.field) - derivedLast(b.field) || a.field.position - b.field.position);
    for (const { index, field } of fields) {
      restoredFields.push(await restoreField(restoring, field, ['fieldIds', index]));
    }
    await tx.schemaTrash.deleteMany({ where: { id: { in: [...tableIds, ...fieldIds] } } });
    return { tables, fields: restoredFields };
  });
}

/** A table's metadata rows back, once its name is free and every table it links to is live. */
async function restoreTableRows(restoring: Restoring, entry: TableEntry, where: InputPath) {
  const { tx, database } = restoring;
  const { table, fields } = entry;
  const clash = await tx.table.findUnique({
    where: { databaseId_nameKey: { databaseId: database.id, nameKey: table.nameKey } },
  });
  if (clash) {
    throw invalid(
      where,
      `a table named ${JSON.stringify(clash.name)} exists in the database; rename it to restore table ${JSON.stringify(table.name)}`,
    );
  }
  for (const field of fields) {
    if (field.type === 'linked_record') {
      await assertLinkedTableLive(restoring, field, where);
    }
  }
  await tx.table.create({
    data: {
      id: table.id,
      databaseId: database.id,
      name: table.name,
      nameKey: table.nameKey,
      primaryFieldId: table.primaryFieldId,
      createdAt: new Date(table.createdAt),
      updatedAt: new Date(),
    },
  });
  await tx.field.createMany({
    data: fields.map((field) => ({
      ...fieldRow(field),
      template: field.template as FieldTemplate,
    })),
  });
  if (entry.views && entry.views.length > 0) {
    await tx.view.createMany({
      data: entry.views.map((view) => ({
        ...view,
        filter: (view.filter as Prisma.InputJsonValue | null) ?? Prisma.DbNull,
        sort: view.sort as Prisma.InputJsonValue,
        createdAt: new Date(view.createdAt),
        updatedAt: new Date(view.updatedAt),
      })),
    });
  }
  await runDdl(tx, [advanceWriteVersion(table)]);
}

/**
 * A restored table's counts, lookups and rollups read records that changed while it was in the
 * trash (nothing kept them current, as nothing named them): compiled again against what they
 * read now, refused if that no longer gives a value of the same type, and filled again.
 */
async function refillLinkedValues(restoring: Restoring, entry: TableEntry, where: InputPath) {
  const { tx, database } = restoring;
  const all = await databaseFields(tx, database.id);
  const own = all.filter((field) => field.tableId === entry.table.id);
  for (const field of own.filter(isLinkedValues)) {
    const previous = keptLinkedValues(field);
    const recompiled = await compileLinkedValues(restoring, field, previous, own, all, where);
    await runDdl(
      tx,
      fillLinkedValuesSql(
        recompiled,
        database.schemaName,
        qualifiedTable(database.schemaName, entry.table.id),
        quoteIdent(field.id),
      ),
    );
    await tx.field.update({ where: { id: field.id }, data: { template: recompiled as never } });
  }
}

async function compileLinkedValues(
  restoring: Restoring,
  field: { id: string; name: string; type: string; tableId: string },
  previous: KeptLinkedValues,
  siblings: readonly TableField[],
  all: Awaited<ReturnType<typeof databaseFields>> | undefined,
  where: InputPath,
): Promise<KeptLinkedValues> {
  const { tx, database } = restoring;
  let recompiled: KeptLinkedValues | undefined;
  try {
    recompiled = await keepLinkedValues(
      tx,
      field as never,
      {
        linkFieldId: previous.linkFieldId,
        ...(previous.fieldId ? { fieldId: previous.fieldId } : {}),
        ...(previous.function ? { function: previous.function } : {}),
      },
      { id: field.tableId, databaseId: database.id, schemaName: database.schemaName },
      siblings,
      [],
      all,
    );
  } catch {
    // What it reads is gone or no longer fits: refused below as a value of another type would be.
  }
  if (!recompiled || recompiled.resultType !== previous.resultType) {
    throw invalid(
      where,
      `field ${JSON.stringify(field.name)} can no longer be computed as it was: the field it reads was deleted or changed type since`,
    );
  }
  return recompiled;
}

async function assertLinkedTableLive(restoring: Restoring, field: KeptField, where: InputPath) {
  const linkedTableId = (field.template as FieldTemplate<'linked_record'>).tableId;
  if (restoring.restoredTableIds.has(linkedTableId)) return;
  const live = await restoring.tx.table.findFirst({
    where: { id: linkedTableId, databaseId: restoring.database.id },
  });
  if (!live) {
    throw invalid(
      where,
      `link field ${JSON.stringify(field.name)} links to table ${linkedTableId}, which is in the trash or gone; restore that table with it`,
    );
  }
}

/**
 * One field back into its live table: its name still free, the table under its field limit,
 * what it reads still there (compiled again against it), then its data named again or computed.
 * `withTable` names the restored table a link field came back with.
 */
async function restoreField(
  restoring: Restoring,
  field: KeptField,
  where: InputPath,
  withTable?: string,
): Promise<FieldDto> {
  const { tx, events, database } = restoring;
  const table = await tx.table.findFirst({ where: { id: field.tableId, databaseId: database.id } });
  const what = withTable
    ? `link field ${JSON.stringify(field.name)} to table ${JSON.stringify(withTable)}`
    : `field ${JSON.stringify(field.name)}`;
  if (!table) {
    throw invalid(
      where,
      `${what} belongs to table ${field.tableId}, which is in the trash or gone; restore that table first or with it`,
    );
  }
  const siblings = (await tx.field.findMany({ where: { tableId: table.id } })) as TableField[];
  const clash = siblings.find((sibling) => nameKey(sibling.name) === nameKey(field.name));
  if (clash) {
    throw invalid(
      where,
      `a field named ${JSON.stringify(clash.name)} exists in table ${JSON.stringify(table.name)}; rename it to restore ${what}`,
    );
  }
  if (siblings.length >= MAX_FIELDS_PER_TABLE) {
    throw invalid(
      where,
      `table ${JSON.stringify(table.name)} holds ${MAX_FIELDS_PER_TABLE} fields, its most`,
    );
  }
  if (field.type === 'linked_record') await assertLinkedTableLive(restoring, field, where);
  let template = field.template as FieldTemplate;
  try {
    template = resolveTemplateFields(field.type as never, template, siblings, []);
  } catch {
    throw invalid(where, `${what} watches a field that was deleted since; it cannot be restored as it was`);
  }
  if (field.type === 'formula') {
    const { expression } = template as unknown as { expression: string };
    try {
      template = keepFormula(field, expression, siblings, database.schemaName, []) as never;
    } catch {
      throw invalid(
        where,
        `${what} reads a field that was deleted or changed since; it cannot be restored as it was`,
      );
    }
  }
  if (isLinkedValues(field)) {
    template = (await compileLinkedValues(
      restoring,
      field,
      keptLinkedValues(field),
      siblings,
      undefined,
      where,
    )) as never;
  }
  const created = await tx.field.create({
    data: { ...fieldRow(field, new Date()), template },
  });
  const physical: PhysicalTable = { schemaName: database.schemaName, id: table.id, name: table.name };
  await runDdl(tx, restoreTrashedField(physical, toPhysicalField(created)));
  await tx.table.update({ where: { id: table.id }, data: { updatedAt: new Date() } });
  const dto = toFieldDto(created, fieldNames([...siblings, created]));
  await events.field(database.id, table.id, 'field.created', dto);
  return dto;
}
