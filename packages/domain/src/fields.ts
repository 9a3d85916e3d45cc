import type { Principal } from '@recordbase/contracts/api-keys';
import { FIELD_ID_PATTERN } from '@recordbase/contracts/common';
import { invalid, notFound } from '@recordbase/contracts/domain-errors';
import {
  type Field,
  type FieldInput,
  type FieldTemplate,
  type FieldType,
  isComputedFieldType,
  MAX_SELECT_OPTIONS,
  type SelectOption,
  type UpdateFieldRequest,
} from '@recordbase/contracts/fields';
import { MAX_FIELDS_PER_TABLE } from '@recordbase/contracts/schema';
import type { PrismaClient, Tx } from '@recordbase/db';
import {
  type FieldTypeModule,
  fieldTypeModule,
  fieldTypeOfResult,
  fillLinkedValuesSql,
  type KeptFormula,
  type KeptLinkedValues,
  keptFormula,
  keptLinkedValues,
} from '@recordbase/db/field-types';
import {
  addField,
  changeFieldType,
  commentOnField,
  dropField,
  hasColumn,
  type PhysicalTable,
  qualifiedTable,
  quoteIdent,
  requireColumnSpec,
  trashField,
} from '@recordbase/db/physical';
import { findAccessibleDatabase, findTableByRef, nameKey } from './access';
import type { TransactionEvents } from './events';
import {
  defineField,
  resolveTemplateFields,
  toPhysicalField,
  validTemplate,
  watchersOf,
} from './field-definitions';
import {
  formulasReading,
  keepFormula,
  recompiledReaders,
  type TableField,
  usedByFormulas,
} from './formula-fields';
import {
  type DatabaseField,
  databaseFields,
  isLinkedValues,
  keepLinkedValues,
  linkedReadersOf,
  readsItself,
} from './linked-fields';
import { trashDeletedField } from './schema-trash';
import { databaseForChange, inSchemaTransaction, runConversion, runDdl, type SchemaDb } from './schema-tx';
import { fieldNames, toFieldDto } from './serialize';
import { assertViewsHold, usedByViews, viewsUsing } from './views';

async function locateTable(tx: Tx, principal: Principal, databaseId: string, tableRef: string) {
  const database = await databaseForChange(tx, principal, databaseId);
  const table = await findTableByRef(tx, database.id, tableRef);
  const physical: PhysicalTable = { schemaName: database.schemaName, id: table.id, name: table.name };
  return { database, table, physical };
}

/** Fields are addressed by id or by name (case-insensitive); an id wins over a name. */
async function findFieldByRef(tx: Pick<Tx, 'field'>, tableId: string, fieldRef: string) {
  const byId = FIELD_ID_PATTERN.test(fieldRef)
    ? await tx.field.findFirst({ where: { id: fieldRef, tableId } })
    : null;
  const field =
    byId ??
    (await tx.field.findUnique({ where: { tableId_nameKey: { tableId, nameKey: nameKey(fieldRef) } } }));
  if (!field) throw notFound(`Field ${fieldRef} not found`);
  return field;
}

async function assertFieldNameFree(tx: Tx, tableId: string, name: string, exceptFieldId?: string) {
  const clash = await tx.field.findUnique({
    where: { tableId_nameKey: { tableId, nameKey: nameKey(name) } },
  });
  if (clash && clash.id !== exceptFieldId) {
    throw invalid(['name'], `a field named ${JSON.stringify(clash.name)} already exists in this table`);
  }
}

export async function createField(
  schema: SchemaDb,
  principal: Principal,
  databaseId: string,
  tableRef: string,
  input: FieldInput,
): Promise<Field> {
  return inSchemaTransaction(schema, async (tx, events) => {
    const { database, table, physical } = await locateTable(tx, principal, databaseId, tableRef);
    await assertFieldNameFree(tx, table.id, input.name);
    const count = await tx.field.count({ where: { tableId: table.id } });
    if (count >= MAX_FIELDS_PER_TABLE)
      throw invalid(null, `a table holds at most ${MAX_FIELDS_PER_TABLE} fields`);
    const last = await tx.field.aggregate({ where: { tableId: table.id }, _max: { position: true } });
    const definition = await defineField(tx, database.id, input, []);
    const siblings = await tx.field.findMany({ where: { tableId: table.id } });
    definition.template = resolveTemplateFields(definition.type, definition.template, siblings, []);
    if (definition.type === 'formula') {
      const { expression } = definition.template as FieldTemplate<'formula'>;
      definition.template = keepFormula(
        definition,
        expression,
        siblings as TableField[],
        database.schemaName,
        [],
      ) as unknown as FieldTemplate;
    }
    if (isLinkedValues(definition)) {
      definition.template = (await keepLinkedValues(
        tx,
        definition,
        definition.template as Parameters<typeof keepLinkedValues>[2],
        { id: table.id, databaseId: database.id, schemaName: database.schemaName },
        siblings as TableField[],
        [],
      )) as unknown as FieldTemplate;
    }
    const created = await tx.field.create({
      data: {
        id: definition.id,
        tableId: table.id,
        name: definition.name,
        nameKey: definition.nameKey,
        type: definition.type,
        template: definition.template,
        position: (last._max.position ?? -1) + 1,
      },
    });
    await runDdl(tx, addField(physical, toPhysicalField(created)));
    await tx.table.update({ where: { id: table.id }, data: { updatedAt: new Date() } });
    const field = toFieldDto(created, fieldNames(siblings));
    await events.field(database.id, table.id, 'field.created', field);
    return field;
  });
}

export async function getField(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
  tableRef: string,
  fieldRef: string,
): Promise<Field> {
  const database = await findAccessibleDatabase(prisma, principal, databaseId);
  const table = await findTableByRef(prisma, database.id, tableRef);
  const field = await findFieldByRef(prisma, table.id, fieldRef);
  const names =
    field.type === 'formula'
      ? fieldNames(
          await prisma.field.findMany({ where: { tableId: table.id }, select: { id: true, name: true } }),
        )
      : undefined;
  return toFieldDto(field, names);
}

/** The template a field keeps across a type change when none is given: whatever still fits. */
function carriedTemplate(to: FieldType, previous: unknown): unknown {
  return validTemplateOrNull(to, previous) ?? {};
}
function validTemplateOrNull(type: FieldType, template: unknown): unknown {
  try {
    return validTemplate(type, template, []);
  } catch {
    return null;
  }
}

/** After converting to a type whose template lists its values (selects), every value present must be one. */
async function optionsIncludingValues(
  tx: Tx,
  physical: PhysicalTable,
  fieldId: string,
  storedValuesSql: NonNullable<FieldTypeModule['storedValuesSql']>,
  options: SelectOption[],
): Promise<SelectOption[]> {
  const values = await tx.$queryRawUnsafe<{ value: string }[]>(
    storedValuesSql(
      qualifiedTable(physical.schemaName, physical.id),
      quoteIdent(fieldId),
      MAX_SELECT_OPTIONS + 1,
    ),
  );
  const known = new Set(options.map((option) => option.name));
  const merged = [...options];
  for (const { value } of values) {
    if (!known.has(value)) {
      merged.push({ name: value });
      known.add(value);
    }
  }
  if (merged.length > MAX_SELECT_OPTIONS) {
    throw invalid(['type'], `the values would make more than ${MAX_SELECT_OPTIONS} options`);
  }
  return merged;
}

/** Values the template no longer allows are changed as the type says (cleared, capped, ...). */
async function applyTemplateToValues(
  tx: Tx,
  physical: PhysicalTable,
  fieldId: string,
  type: FieldType,
  template: FieldTemplate,
): Promise<void> {
  const { fitToTemplate } = fieldTypeModule(type);
  if (!fitToTemplate) return;
  const ref = qualifiedTable(physical.schemaName, physical.id);
  const statement = fitToTemplate(ref, quoteIdent(fieldId), template);
  await tx.$executeRawUnsafe(statement.text, ...statement.values);
}

export async function updateField(
  schema: SchemaDb,
  principal: Principal,
  databaseId: string,
  tableRef: string,
  fieldRef: string,
  patch: UpdateFieldRequest,
): Promise<Field> {
  return inSchemaTransaction(schema, async (tx, events) => {
    const { table, physical } = await locateTable(tx, principal, databaseId, tableRef);
    const found = await findFieldByRef(tx, table.id, fieldRef);
    const to = patch.type ?? (found.type as FieldType);
    const name = patch.name ?? found.name;
    if (patch.name !== undefined) await assertFieldNameFree(tx, table.id, patch.name, found.id);
    if (to !== found.type && table.primaryFieldId === found.id && fieldTypeModule(to).primary === false) {
      throw invalid(['type'], `the primary field cannot become ${to}`);
    }
    const tableFields = (await tx.field.findMany({ where: { tableId: table.id } })) as TableField[];
    if (found.type === 'formula' && to === 'formula') {
      return updateFormula(tx, events, table, physical, found as TableField, tableFields, name, patch);
    }
    if (isLinkedValues(found)) {
      if (to !== found.type) {
        throw invalid(
          ['type'],
          `a ${found.type} field cannot become ${to}; add a new ${to} field and delete this one`,
        );
      }
      return updateLinkedValues(tx, events, table, physical, found as TableField, tableFields, name, patch);
    }
    // A formula becoming a written type keeps the values it shows: from then on a field of its
    // result type, converted from there like any other.
    const wasFormula = found.type === 'formula' && !isComputedFieldType(to);
    const field = wasFormula ? await materializeFormula(tx, physical, found as TableField) : found;
    const from = field.type as FieldType;
    // Its values would be lost: a computed field starts from the records as they are.
    if (to !== from && isComputedFieldType(to)) {
      throw invalid(
        ['type'],
        `a ${from} field cannot become ${to}, whose values the service computes; add a new ${to} field instead`,
      );
    }
    let template = validTemplate(
      to,
      patch.template ?? (to === from ? field.template : carriedTemplate(to, field.template)),
      [],
    ) as FieldTemplate;
    const { updatedTemplate } = fieldTypeModule(to);
    if (patch.template !== undefined && updatedTemplate) {
      template = updatedTemplate(template, field.template) as FieldTemplate;
    }
    if (patch.template !== undefined) {
      const siblings = await tx.field.findMany({ where: { tableId: table.id, NOT: { id: field.id } } });
      template = resolveTemplateFields(to, template, siblings, []);
    }
    if (from === 'linked_record' && to === 'linked_record') {
      const before = (field.template as FieldTemplate<'linked_record'>).tableId;
      const asked = (template as FieldTemplate<'linked_record'>).tableId;
      if (asked !== before) {
        const target = await findTableByRef(tx, table.databaseId, asked).catch(() => null);
        if (target?.id !== before)
          throw invalid(['template', 'tableId'], 'the linked table of a field cannot change');
        template = { tableId: before };
      }
    }
    // Formulas reading the field are compiled for its new type, and must still give what they gave;
    // PostgreSQL converts no column a stored formula reads, so those are built again around it.
    const readers =
      to !== from || wasFormula
        ? recompiledReaders(
            tableFields.map((sibling) =>
              sibling.id === field.id ? { ...sibling, type: to, template } : sibling,
            ),
            field.id,
            physical.schemaName,
            ['type'],
          )
        : [];
    if (to !== from) {
      await assertViewsHold(
        tx,
        { id: table.databaseId, schemaName: physical.schemaName },
        table,
        tableFields.map((sibling) =>
          sibling.id === field.id ? { ...sibling, type: to, template } : sibling,
        ),
        field.id,
        ['type'],
      );
    }
    await dropFormulaColumns(tx, physical, readers);
    if (to !== from) {
      const statements = changeFieldType(physical, toPhysicalField(field), to, { template });
      if (!statements) throw invalid(['type'], `a ${from} field cannot be converted to ${to}`);
      await runConversion(
        tx,
        statements,
        ['type'],
        `cannot convert field ${JSON.stringify(field.name)} to ${to}`,
      );
      const { storedValuesSql } = fieldTypeModule(to);
      if (storedValuesSql) {
        const options = (template as FieldTemplate<'single_select'>).options;
        template = {
          options: await optionsIncludingValues(tx, physical, field.id, storedValuesSql, options),
        };
      }
    }
    await applyTemplateToValues(tx, physical, field.id, to, template);
    await keepRecompiledFormulas(tx, physical, readers);
    if (name !== field.name) {
      await runDdl(tx, commentOnField(physical, { ...toPhysicalField(field), type: to, name }));
    }
    const updated = await tx.field.update({
      where: { id: field.id },
      data: { name, nameKey: nameKey(name), type: to, template, updatedAt: new Date() },
    });
    // Counts, lookups and rollups reading it (or its formulas) are compiled for what it now is,
    // and read its values again (a select's removed options leave them too).
    if (to !== from || wasFormula || patch.template !== undefined) {
      const recompiled = readers.map(({ field: reader, kept }) => ({ ...reader, template: kept }));
      for (const changed of [updated as TableField, ...recompiled]) {
        await recompileLinkedReaders(tx, table, physical.schemaName, changed, ['type']);
      }
    }
    await tx.table.update({ where: { id: table.id }, data: { updatedAt: new Date() } });
    const dto = toFieldDto(updated, fieldNames(tableFields));
    await events.field(table.databaseId, table.id, 'field.updated', dto);
    return dto;
  });
}

/**
 * A formula field's values frozen into a plain column of its result type: a stored one's generated
 * column keeps its values as it stops being generated; one computed at read time gets a column
 * filled by its SQL, once. Returns the field as one of that type (its metadata follows with the
 * rest of the update), whose template a select's values complete.
 */
async function materializeFormula(tx: Tx, physical: PhysicalTable, field: TableField): Promise<TableField> {
  const kept = keptFormula(field);
  const type = fieldTypeOfResult(kept.resultType);
  const frozen = { ...field, type, template: {} };
  const ref = qualifiedTable(physical.schemaName, physical.id);
  const column = quoteIdent(field.id);
  const spec = requireColumnSpec(frozen);
  const statements =
    kept.columnSql !== undefined
      ? [`ALTER TABLE ${ref} ALTER COLUMN ${column} DROP EXPRESSION`]
      : [
          `ALTER TABLE ${ref} ADD COLUMN ${column} ${spec.sqlType}`,
          `UPDATE ${ref} AS r SET ${column} = ${kept.valueSql}`,
          ...commentOnField(physical, toPhysicalField(frozen)),
        ];
  if (spec.notNullDefault) {
    statements.push(
      `ALTER TABLE ${ref} ALTER COLUMN ${column} SET DEFAULT ${spec.notNullDefault}, ALTER COLUMN ${column} SET NOT NULL`,
    );
  }
  await runDdl(tx, statements);
  const { storedValuesSql } = fieldTypeModule(type);
  if (!storedValuesSql) return frozen;
  return {
    ...frozen,
    template: { options: await optionsIncludingValues(tx, physical, field.id, storedValuesSql, []) },
  };
}

/** The columns of stored formulas about to be compiled again (readers of a field being converted). */
async function dropFormulaColumns(
  tx: Tx,
  physical: PhysicalTable,
  recompiled: readonly { field: TableField }[],
): Promise<void> {
  for (const { field } of recompiled) {
    if (hasColumn(field)) await runDdl(tx, dropField(physical, toPhysicalField(field)));
  }
}

/**
 * Formulas compiled again kept: a stored one's column added back (PostgreSQL computes it for every
 * record), a read-time one's SQL in its template. Their columns must have been dropped first.
 */
async function keepRecompiledFormulas(
  tx: Tx,
  physical: PhysicalTable,
  recompiled: readonly { field: TableField; kept: KeptFormula }[],
): Promise<void> {
  for (const { field, kept } of recompiled) {
    const updated = { ...field, template: kept };
    if (hasColumn(updated)) await runDdl(tx, addField(physical, toPhysicalField(updated)));
    await tx.field.update({
      where: { id: field.id },
      data: { template: kept as unknown as FieldTemplate, updatedAt: new Date() },
    });
  }
}

/**
 * A formula field's update: its name, its expression, or both. A new expression is compiled
 * against the table, and so are the formulas that read this one, which must still give what they
 * gave; the stored columns of all of them are built again (PostgreSQL computes every record).
 */
/** The table a field update works on, as its views are checked against it. */
type ChangedTable = { id: string; databaseId: string; name: string; primaryFieldId: string | null };

async function updateFormula(
  tx: Tx,
  events: TransactionEvents,
  table: ChangedTable,
  physical: PhysicalTable,
  field: TableField,
  tableFields: readonly TableField[],
  name: string,
  patch: UpdateFieldRequest,
): Promise<Field> {
  let template = field.template as KeptFormula;
  if (patch.template !== undefined) {
    const { expression } = validTemplate('formula', patch.template, []);
    const kept = keepFormula({ id: field.id, name }, expression, tableFields, physical.schemaName, []);
    const changed = { ...field, template: kept };
    // A new expression may give another type, under which a view's filter or sort no longer holds.
    await assertViewsHold(
      tx,
      { id: table.databaseId, schemaName: physical.schemaName },
      table,
      tableFields.map((sibling) => (sibling.id === field.id ? changed : sibling)),
      field.id,
      ['template', 'expression'],
    );
    const readers = recompiledReaders(
      tableFields.map((sibling) => (sibling.id === field.id ? changed : sibling)),
      field.id,
      physical.schemaName,
      ['template', 'expression'],
    );
    await dropFormulaColumns(tx, physical, [{ field }, ...readers]);
    await keepRecompiledFormulas(tx, physical, [{ field, kept }, ...readers]);
    template = kept;
    // Within its table keepFormula saw to it; through a lookup or rollup of another table only the
    // database's fields can tell.
    if (readsItself(await databaseFields(tx, table.databaseId), field.id)) {
      throw invalid(
        ['template', 'expression'],
        'the formula reads itself through a lookup or rollup of a linked table',
      );
    }
    const recompiled = readers.map(({ field: reader, kept }) => ({ ...reader, template: kept }));
    for (const reader of [changed, ...recompiled]) {
      await recompileLinkedReaders(tx, table, physical.schemaName, reader, ['template', 'expression']);
    }
  }
  return savedFieldUpdate(tx, events, table, physical, field, tableFields, name, template);
}

/**
 * The last steps of a computed field's update that keeps its type: its name (the column's comment
 * too), its kept template, the table's updatedAt and the field.updated event.
 */
async function savedFieldUpdate(
  tx: Tx,
  events: TransactionEvents,
  table: { id: string; databaseId: string },
  physical: PhysicalTable,
  field: TableField,
  tableFields: readonly TableField[],
  name: string,
  template: unknown,
): Promise<Field> {
  if (name !== field.name) {
    await runDdl(tx, commentOnField(physical, { ...toPhysicalField({ ...field, template }), name }));
  }
  const updated = await tx.field.update({
    where: { id: field.id },
    data: {
      name,
      nameKey: nameKey(name),
      template: template as FieldTemplate,
      updatedAt: new Date(),
    },
  });
  await tx.table.update({ where: { id: table.id }, data: { updatedAt: new Date() } });
  const names = fieldNames(
    tableFields.map((sibling) => (sibling.id === field.id ? { ...sibling, name } : sibling)),
  );
  const dto = toFieldDto(updated, names);
  await events.field(table.databaseId, table.id, 'field.updated', dto);
  return dto;
}

export async function deleteField(
  schema: SchemaDb,
  principal: Principal,
  databaseId: string,
  tableRef: string,
  fieldRef: string,
): Promise<void> {
  await inSchemaTransaction(schema, async (tx, events) => {
    const { table, physical } = await locateTable(tx, principal, databaseId, tableRef);
    const field = await findFieldByRef(tx, table.id, fieldRef);
    if (table.primaryFieldId === field.id) {
      throw invalid(null, `Field ${JSON.stringify(field.name)} is the primary field and cannot be deleted`);
    }
    const tableFields = (await tx.field.findMany({ where: { tableId: table.id } })) as TableField[];
    const readers = formulasReading(tableFields, field.id);
    if (readers.length > 0) {
      throw usedByFormulas(field, readers, 'change or delete those formulas first', null);
    }
    const linkedReaders = linkedReadersOf(await databaseFields(tx, table.databaseId), field.id);
    if (linkedReaders.length > 0) {
      throw usedByFormulas(field, linkedReaders, 'change or delete those fields first', null);
    }
    const watchers = watchersOf(tableFields, field.id);
    if (watchers.length > 0) {
      throw invalid(
        null,
        `Field ${JSON.stringify(field.name)} is watched by ${watchers.map((watcher) => `last_modified_time field ${JSON.stringify(watcher.name)}`).join(', ')}; take it out of their fieldIds first`,
      );
    }
    const views = await viewsUsing(tx, table.id, field.id);
    if (views.length > 0) throw usedByViews(field, views, 'change or delete those views first', null);
    // Its data stays restorable until the purge; nothing reads it meanwhile (schema-trash.ts).
    await runDdl(tx, trashField(physical, toPhysicalField(field)));
    await tx.field.delete({ where: { id: field.id } });
    await trashDeletedField(tx, principal, table.databaseId, field);
    await tx.table.update({ where: { id: table.id }, data: { updatedAt: new Date() } });
    await events.field(
      table.databaseId,
      table.id,
      'field.deleted',
      toFieldDto(field, fieldNames(tableFields)),
    );
  });
}

/**
 * The count, lookup and rollup fields reading `changed` (just converted, or a formula given a new
 * expression) compiled again against it and filled again; a 400 naming those whose value would no
 * longer be of the same type, or whose link field it is (a link's type never changes under them).
 */
async function recompileLinkedReaders(
  tx: Tx,
  table: { id: string; databaseId: string },
  schemaName: string,
  changed: TableField,
  where: string[],
): Promise<void> {
  const all = await databaseFields(tx, table.databaseId);
  const readers = linkedReadersOf(all, changed.id);
  if (readers.length === 0) return;
  const broken: DatabaseField[] = [];
  for (const reader of readers) {
    const kept = keptLinkedValues(reader);
    if (kept.linkFieldId === changed.id) {
      broken.push(reader);
      continue;
    }
    const owner = all.filter((field) => field.tableId === reader.tableId);
    let recompiled: KeptLinkedValues;
    try {
      recompiled = await keepLinkedValues(
        tx,
        reader as TableField,
        {
          linkFieldId: kept.linkFieldId,
          fieldId: changed.id,
          ...(kept.function ? { function: kept.function } : {}),
        },
        { id: reader.tableId, databaseId: table.databaseId, schemaName },
        owner.map((field) => (field.id === changed.id ? { ...field, ...changed } : field)),
        [],
        all,
      );
    } catch {
      broken.push(reader);
      continue;
    }
    if (recompiled.resultType !== kept.resultType) {
      broken.push(reader);
      continue;
    }
    await runDdl(
      tx,
      fillLinkedValuesSql(
        recompiled,
        schemaName,
        qualifiedTable(schemaName, reader.tableId),
        quoteIdent(reader.id),
      ),
    );
    await tx.field.update({
      where: { id: reader.id },
      data: { template: recompiled as unknown as FieldTemplate, updatedAt: new Date() },
    });
  }
  if (broken.length > 0) {
    throw usedByFormulas(changed, broken, 'they would no longer compute a value of the same type', where);
  }
}

/**
 * A count, lookup or rollup field's update: its name, its template, or both. A new template is
 * checked and compiled as on creation, and the column filled again for every record.
 */
async function updateLinkedValues(
  tx: Tx,
  events: TransactionEvents,
  table: ChangedTable,
  physical: PhysicalTable,
  field: TableField,
  tableFields: readonly TableField[],
  name: string,
  patch: UpdateFieldRequest,
): Promise<Field> {
  let template = field.template as unknown as KeptLinkedValues;
  if (patch.template !== undefined) {
    const written = validTemplate(field.type, patch.template, []) as Parameters<typeof keepLinkedValues>[2];
    const kept = await keepLinkedValues(
      tx,
      { id: field.id, name, type: field.type },
      written,
      { id: table.id, databaseId: table.databaseId, schemaName: physical.schemaName },
      tableFields,
      [],
    );
    // Another function or field may give another type, under which a view no longer holds.
    await assertViewsHold(
      tx,
      { id: table.databaseId, schemaName: physical.schemaName },
      table,
      tableFields.map((sibling) => (sibling.id === field.id ? { ...sibling, template: kept } : sibling)),
      field.id,
      ['template'],
    );
    // Formulas reading it are compiled for its new value and must still give what they gave.
    const readers = recompiledReaders(
      tableFields.map((sibling) => (sibling.id === field.id ? { ...sibling, template: kept } : sibling)),
      field.id,
      physical.schemaName,
      ['template'],
    );
    // A column of another type, or one that now holds nulls (max after sum), is built again, the
    // stored formulas reading it around it.
    const before = requireColumnSpec(field);
    const after = requireColumnSpec({ ...field, template: kept });
    if (before.sqlType !== after.sqlType || before.notNullDefault !== after.notNullDefault) {
      await dropFormulaColumns(tx, physical, readers);
      await runDdl(tx, dropField(physical, toPhysicalField(field)));
      await runDdl(tx, addField(physical, toPhysicalField({ ...field, template: kept })));
      await keepRecompiledFormulas(tx, physical, readers);
    } else {
      // The same column: stored formulas reading it follow its new values by themselves.
      const ref = qualifiedTable(physical.schemaName, physical.id);
      await runDdl(tx, fillLinkedValuesSql(kept, physical.schemaName, ref, quoteIdent(field.id)));
    }
    template = kept;
  }
  const dto = await savedFieldUpdate(tx, events, table, physical, field, tableFields, name, template);
  // Lookups and rollups of other tables reading it read its new values (a 400 if they no longer hold).
  if (patch.template !== undefined) {
    await recompileLinkedReaders(tx, table, physical.schemaName, { ...field, template }, ['template']);
  }
  return dto;
}
