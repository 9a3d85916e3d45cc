import type { Principal } from '@recordbase/contracts/api-keys';
import { type InputPath, invalid } from '@recordbase/contracts/domain-errors';
import type { FieldTemplate } from '@recordbase/contracts/fields';
import {
  MAX_TABLES_PER_DATABASE,
  type Table,
  type TableInput,
  type UpdateTableRequest,
} from '@recordbase/contracts/schema';
import { newTableId, type PrismaClient, type Tx } from '@recordbase/db';
import {
  addField,
  commentOnTable,
  createTableIndexes,
  createTableWithoutIndexes,
  trashField,
} from '@recordbase/db/physical';
import { type DatabaseRef, findAccessibleDatabase, findTableByRef, nameKey } from './access';
import {
  assertPrimaryCapable,
  assertUniqueNames,
  defineField,
  type FieldDefinition,
  resolveTemplateFields,
  toPhysicalField,
  watchersOf,
} from './field-definitions';
import { formulasReading, keepNewTableFormulas, type TableField, usedByFormulas } from './formula-fields';
import { type DatabaseField, isLinkedValues, linkedReadersOf } from './linked-fields';
import { trashDeletedTable } from './schema-trash';
import { databaseForChange, inSchemaTransaction, runDdl, type SchemaDb } from './schema-tx';
import { tableWithFields, toFieldDto, toTableDto } from './serialize';
import { usedByViews, viewsUsing } from './views';

async function assertTableNameFree(tx: Tx, databaseId: string, name: string, exceptTableId?: string) {
  const clash = await tx.table.findUnique({
    where: { databaseId_nameKey: { databaseId, nameKey: nameKey(name) } },
  });
  if (clash && clash.id !== exceptTableId) {
    throw invalid(['name'], `a table named ${JSON.stringify(clash.name)} already exists in this database`);
  }
}

/**
 * Creates tables with their physical storage. Link fields may point at any table of the batch
 * (by name), so every table's own columns are created first and the link tables after. `fill`,
 * when given, writes rows into the new tables before their indexes are built (an import).
 */
export async function createTablesInTx(
  tx: Tx,
  database: DatabaseRef,
  inputs: readonly TableInput[],
  where: (index: number) => InputPath,
  fill?: (tableIds: readonly string[]) => Promise<void>,
): Promise<string[]> {
  const count = await tx.table.count({ where: { databaseId: database.id } });
  if (count + inputs.length > MAX_TABLES_PER_DATABASE) {
    throw invalid(null, `a database holds at most ${MAX_TABLES_PER_DATABASE} tables`);
  }
  const pending = new Map<string, string>();
  const ids = inputs.map((input, index) => {
    if (pending.has(nameKey(input.name))) {
      throw invalid([...where(index), 'name'], `duplicate table name ${JSON.stringify(input.name)}`);
    }
    const id = newTableId();
    pending.set(nameKey(input.name), id);
    return id;
  });
  const definitions: FieldDefinition[][] = [];
  for (const [index, input] of inputs.entries()) {
    await assertTableNameFree(tx, database.id, input.name);
    assertUniqueNames(input.fields, [...where(index), 'fields']);
    const fields: FieldDefinition[] = [];
    for (const [fieldIndex, fieldInput] of input.fields.entries()) {
      if (isLinkedValues(fieldInput)) {
        // They read records of tables that, in this body, do not exist yet.
        throw invalid(
          [...where(index), 'fields', fieldIndex, 'type'],
          `a ${fieldInput.type} field reads the records of a linked table: add it once the tables exist (POST .../fields)`,
        );
      }
      fields.push(
        await defineField(tx, database.id, fieldInput, [...where(index), 'fields', fieldIndex], pending),
      );
    }
    assertPrimaryCapable(fields[0]!.type, [...where(index), 'fields', 0]);
    // Templates may name the table's other fields, all known once every one is defined.
    for (const [fieldIndex, field] of fields.entries()) {
      field.template = resolveTemplateFields(field.type, field.template, fields, [
        ...where(index),
        'fields',
        fieldIndex,
      ]);
    }
    // Formulas may read any field of the body, formulas too: compiled once all are defined.
    const withFormulas = keepNewTableFormulas(fields, database.schemaName, (fieldIndex) => [
      ...where(index),
      'fields',
      fieldIndex,
    ]);
    withFormulas.forEach((field, fieldIndex) => {
      fields[fieldIndex]!.template = field.template as FieldTemplate;
    });
    definitions.push(fields);
  }
  for (const [index, input] of inputs.entries()) {
    const id = ids[index]!;
    const fields = definitions[index]!;
    await tx.table.create({
      data: {
        id,
        databaseId: database.id,
        name: input.name,
        nameKey: nameKey(input.name),
        primaryFieldId: fields[0]!.id,
        fields: {
          create: fields.map((field, position) => ({
            id: field.id,
            name: field.name,
            nameKey: field.nameKey,
            type: field.type,
            template: field.template,
            position,
          })),
        },
      },
    });
    const physicalTable = { schemaName: database.schemaName, id, name: input.name };
    await runDdl(tx, createTableWithoutIndexes(physicalTable, fields.map(toPhysicalField)));
  }
  if (fill) await fill(ids);
  const physicalTables = inputs.map((input, index) => ({
    schemaName: database.schemaName,
    id: ids[index]!,
    name: input.name,
  }));
  // Link tables reference the tables' primary keys: every table's indexes first.
  for (const physicalTable of physicalTables) await runDdl(tx, createTableIndexes(physicalTable));
  for (const [index, physicalTable] of physicalTables.entries()) {
    for (const field of definitions[index]!.filter((f) => f.type === 'linked_record')) {
      await runDdl(tx, addField(physicalTable, toPhysicalField(field)));
    }
  }
  return ids;
}

export async function createTable(
  schema: SchemaDb,
  principal: Principal,
  databaseId: string,
  input: TableInput,
): Promise<Table> {
  return inSchemaTransaction(schema, async (tx, events) => {
    const database = await databaseForChange(tx, principal, databaseId);
    const [id] = await createTablesInTx(tx, database, [input], () => []);
    const table = toTableDto(
      await tx.table.findUniqueOrThrow({ where: { id: id! }, include: tableWithFields }),
    );
    await events.table(database.id, 'table.created', table);
    return table;
  });
}

export async function listTables(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
): Promise<Table[]> {
  const database = await findAccessibleDatabase(prisma, principal, databaseId);
  const tables = await prisma.table.findMany({
    where: { databaseId: database.id },
    include: tableWithFields,
    orderBy: { createdAt: 'asc' },
  });
  return tables.map(toTableDto);
}

export async function getTable(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
  tableRef: string,
): Promise<Table> {
  const database = await findAccessibleDatabase(prisma, principal, databaseId);
  const table = await findTableByRef(prisma, database.id, tableRef);
  return toTableDto(
    await prisma.table.findUniqueOrThrow({ where: { id: table.id }, include: tableWithFields }),
  );
}

export async function updateTable(
  schema: SchemaDb,
  principal: Principal,
  databaseId: string,
  tableRef: string,
  patch: UpdateTableRequest,
): Promise<Table> {
  return inSchemaTransaction(schema, async (tx, events) => {
    const database = await databaseForChange(tx, principal, databaseId);
    const table = await findTableByRef(tx, database.id, tableRef);
    if (patch.primaryFieldId !== undefined) {
      const field = await tx.field.findFirst({ where: { id: patch.primaryFieldId, tableId: table.id } });
      if (!field) throw invalid(['primaryFieldId'], `no field ${patch.primaryFieldId} in this table`);
      assertPrimaryCapable(field.type as never, ['primaryFieldId']);
    }
    if (patch.name !== undefined) {
      await assertTableNameFree(tx, database.id, patch.name, table.id);
      await runDdl(tx, commentOnTable({ schemaName: database.schemaName, id: table.id, name: patch.name }));
    }
    await tx.table.update({
      where: { id: table.id },
      data: {
        ...(patch.name !== undefined ? { name: patch.name, nameKey: nameKey(patch.name) } : {}),
        ...(patch.primaryFieldId !== undefined ? { primaryFieldId: patch.primaryFieldId } : {}),
        updatedAt: new Date(),
      },
    });
    const updated = toTableDto(
      await tx.table.findUniqueOrThrow({ where: { id: table.id }, include: tableWithFields }),
    );
    await events.table(database.id, 'table.updated', updated);
    return updated;
  });
}

/** Link fields elsewhere in the database that point at this table. */
async function inboundLinkFields(tx: Tx, databaseId: string, tableId: string) {
  const links = await tx.field.findMany({
    where: { type: 'linked_record', table: { databaseId }, NOT: { tableId } },
    include: { table: true },
  });
  return links.filter((field) => (field.template as FieldTemplate<'linked_record'>).tableId === tableId);
}

/** Deletes a table, its records, its link tables, and link fields of other tables that point at it. */
export async function deleteTable(
  schema: SchemaDb,
  principal: Principal,
  databaseId: string,
  tableRef: string,
): Promise<void> {
  await inSchemaTransaction(schema, async (tx, events) => {
    const database = await databaseForChange(tx, principal, databaseId);
    const table = await findTableByRef(tx, database.id, tableRef);
    const inbound = await inboundLinkFields(tx, database.id, table.id);
    // Their link fields go with the table: refused, as their own deletion is, while a computed field
    // of their table reads one.
    for (const link of inbound) {
      const ownerFields = (await tx.field.findMany({ where: { tableId: link.tableId } })) as TableField[];
      const readers = [
        ...formulasReading(ownerFields, link.id),
        ...(watchersOf(ownerFields, link.id) as TableField[]),
        ...linkedReadersOf(ownerFields as DatabaseField[], link.id),
      ];
      if (readers.length > 0) {
        throw usedByFormulas(
          link,
          readers,
          `deleting table ${JSON.stringify(table.name)} would delete it; change or delete those fields first`,
          null,
        );
      }
      const views = await viewsUsing(tx, link.tableId, link.id);
      if (views.length > 0) {
        throw usedByViews(
          link,
          views,
          `deleting table ${JSON.stringify(table.name)} would delete it; change or delete those views first`,
          null,
        );
      }
    }
    // Their link tables, and the table itself, stay restorable until the purge (schema-trash.ts).
    for (const link of inbound) {
      await runDdl(
        tx,
        trashField(
          { schemaName: database.schemaName, id: link.tableId, name: link.table.name },
          toPhysicalField(link),
        ),
      );
      await tx.field.delete({ where: { id: link.id } });
      await events.field(database.id, link.tableId, 'field.deleted', toFieldDto(link));
    }
    const deleted = await tx.table.findUniqueOrThrow({ where: { id: table.id }, include: tableWithFields });
    const lastState = toTableDto(deleted);
    const views = await tx.view.findMany({ where: { tableId: table.id } });
    await tx.table.delete({ where: { id: table.id } });
    await trashDeletedTable(
      tx,
      principal,
      database.id,
      deleted,
      inbound.map(({ table: _owner, ...link }) => link),
      views,
    );
    await events.table(database.id, 'table.deleted', lastState);
  });
}
