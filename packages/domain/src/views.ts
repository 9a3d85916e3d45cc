import type { Principal } from '@recordbase/contracts/api-keys';
import { DomainError, type InputPath, invalid, notFound } from '@recordbase/contracts/domain-errors';
import type { FieldTemplate, FieldType } from '@recordbase/contracts/fields';
import { type Filter, isFilterGroup, readFilterCondition } from '@recordbase/contracts/records';
import type { Sort } from '@recordbase/contracts/sorts';
import {
  type CreateViewRequest,
  MAX_VIEWS_PER_TABLE,
  type UpdateViewRequest,
  VIEW_ID_PATTERN,
  type View,
} from '@recordbase/contracts/views';
import { databaseErrorOf, isUniqueViolation, Prisma, type Tx } from '@recordbase/db';
import { randomBase62 } from '@recordbase/db/ids';
import { SqlParams } from '@recordbase/db/physical';
import { findAccessibleDatabase, findTableByRef, nameKey } from './access';
import { compileFilter, compileSort } from './records/query-compiler';
import { buildTableMeta, projectedFields, resolveFieldOrSystem, type TableMeta } from './records/table-meta';
import { announceMetadataChange, type SchemaDb } from './schema-tx';

/**
 * Saved views of a table (api-contract "Views"). A view's filter, sort and projection are checked
 * against the table as a list request's are, then kept with every field reference by id (system
 * fields by name), so a rename changes nothing stored; a field a view uses cannot be deleted
 * (viewsUsing). View changes update the database's row as schema changes do (schema-tx.ts): the
 * two see each other's commits, never half of one.
 */

/** A view's metadata row, as Prisma reads it. */
export type ViewRow = {
  id: string;
  tableId: string;
  name: string;
  nameKey: string;
  filter: unknown;
  sort: unknown;
  fieldIds: string[];
  search: string | null;
  createdAt: Date;
  updatedAt: Date;
};

const VIEW_TX_OPTIONS = { maxWait: 10_000, timeout: 30_000 } as const;
const newViewId = () => `viw${randomBase62(14)}`;

export function toViewDto(row: ViewRow): View {
  return {
    id: row.id,
    name: row.name,
    filter: row.filter ?? null,
    sort: row.sort as View['sort'],
    fields: row.fieldIds.length > 0 ? row.fieldIds : null,
    search: row.search,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

type FieldRow = { id: string; name: string; type: string; template: unknown };

/** The table's metadata as the list path checks a filter against it, from its Prisma rows. */
async function tableMetaOf(
  tx: Pick<Tx, 'field'>,
  database: { id: string; schemaName: string },
  table: { id: string; name: string; primaryFieldId: string | null },
): Promise<TableMeta> {
  const fields = await tx.field.findMany({ where: { tableId: table.id }, orderBy: { position: 'asc' } });
  return metaOfRows(database, table, fields);
}

function metaOfRows(
  database: { id: string; schemaName: string },
  table: { id: string; name: string; primaryFieldId: string | null },
  fields: readonly FieldRow[],
): TableMeta {
  return buildTableMeta({
    databaseId: database.id,
    schemaName: database.schemaName,
    id: table.id,
    name: table.name,
    primaryFieldId: table.primaryFieldId ?? fields[0]?.id ?? '',
    fields: fields.map((field) => ({
      id: field.id,
      name: field.name,
      type: field.type as FieldType,
      template: field.template as FieldTemplate,
    })),
  });
}

/** A field reference as kept: the field's id, or a system field's name. */
function keptReference(table: TableMeta, ref: string): string {
  const target = resolveFieldOrSystem(table, ref);
  // The compilers ran first and refused unknown references.
  if (!target) throw new Error(`views: unresolved field reference ${ref}`);
  return target.kind === 'field' ? target.field.id : target.name;
}

function keptFilter(table: TableMeta, filter: Filter): Filter {
  if (isFilterGroup(filter)) {
    return 'and' in filter
      ? { and: filter.and.map((member) => keptFilter(table, member)) }
      : { or: filter.or.map((member) => keptFilter(table, member)) };
  }
  const { field, operator, operand } = readFilterCondition(filter);
  return { field: keptReference(table, field), [operator]: operand } as Filter;
}

interface ViewParts {
  filter: Filter | null;
  sort: Sort[];
  fieldIds: string[];
  search: string | null;
}

/** The parts checked as a list body's are (the same 400s, at the same paths) and kept by id. */
function keptParts(table: TableMeta, parts: ViewParts): ViewParts {
  if (parts.filter !== null) compileFilter(parts.filter, table, new SqlParams(), ['filter']);
  if (parts.sort.length > 0) compileSort(parts.sort, table);
  const projection =
    parts.fieldIds.length > 0 ? projectedFields(table, parts.fieldIds, ['fields']) : undefined;
  return {
    filter: parts.filter === null ? null : keptFilter(table, parts.filter),
    sort: parts.sort.map((sort) => ({ field: keptReference(table, sort.field), direction: sort.direction })),
    // Each once, in the order given (a read renders them in the table's order either way).
    fieldIds: projection ? [...new Set(parts.fieldIds.map((ref) => keptReference(table, ref)))] : [],
    search: parts.search,
  };
}

/** Where views are kept; `afterChange` as for schema changes (this process's table cache). */
export type ViewsDb = Pick<SchemaDb, 'prisma' | 'afterChange'>;

async function inViewTransaction<T>(views: ViewsDb, work: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    const result = await views.prisma.$transaction(work, VIEW_TX_OPTIONS);
    views.afterChange?.();
    return result;
  } catch (error) {
    if (error instanceof DomainError) throw error;
    if (isUniqueViolation(error) && databaseErrorOf(error)?.constraint === 'views_table_id_name_key_key') {
      throw invalid(['name'], 'a view with this name already exists in the table');
    }
    throw error;
  }
}

/**
 * The database and table a view change works on. The change is announced as a schema change is
 * (schema-tx.ts): reads take views from the table metadata every process keeps (table-loader.ts),
 * which must not apply a view as it was before the change; and the database's row is held against
 * schema changes until commit.
 */
async function locateForChange(tx: Tx, principal: Principal, databaseId: string, tableRef: string) {
  const database = await findAccessibleDatabase(tx, principal, databaseId);
  await announceMetadataChange(tx, database.id);
  return { database, table: await findTableByRef(tx, database.id, tableRef) };
}

/** Views are addressed by id or by name (case-insensitive); an id wins over a name. */
async function findViewByRef(tx: Pick<Tx, 'view'>, tableId: string, viewRef: string): Promise<ViewRow> {
  const byId = VIEW_ID_PATTERN.test(viewRef)
    ? await tx.view.findFirst({ where: { id: viewRef, tableId } })
    : null;
  const view =
    byId ??
    (await tx.view.findUnique({ where: { tableId_nameKey: { tableId, nameKey: nameKey(viewRef) } } }));
  if (!view) throw notFound(`View ${JSON.stringify(viewRef)} not found`);
  return view;
}

async function assertViewNameFree(tx: Tx, tableId: string, name: string, exceptViewId?: string) {
  const clash = await tx.view.findUnique({ where: { tableId_nameKey: { tableId, nameKey: nameKey(name) } } });
  if (clash && clash.id !== exceptViewId) {
    throw invalid(['name'], `a view named ${JSON.stringify(clash.name)} already exists in this table`);
  }
}

export async function createView(
  views: ViewsDb,
  principal: Principal,
  databaseId: string,
  tableRef: string,
  body: CreateViewRequest,
): Promise<View> {
  return inViewTransaction(views, async (tx) => {
    const { database, table } = await locateForChange(tx, principal, databaseId, tableRef);
    const meta = await tableMetaOf(tx, database, table);
    await tx.$queryRawUnsafe('SELECT 1 FROM tables WHERE id = $1 FOR NO KEY UPDATE', table.id);
    if ((await tx.view.count({ where: { tableId: table.id } })) >= MAX_VIEWS_PER_TABLE) {
      throw invalid(null, `a table holds at most ${MAX_VIEWS_PER_TABLE} views`);
    }
    await assertViewNameFree(tx, table.id, body.name);
    const parts = keptParts(meta, {
      filter: body.filter ?? null,
      sort: body.sort ?? [],
      fieldIds: body.fields ?? [],
      search: body.search ?? null,
    });
    const created = await tx.view.create({
      data: {
        id: newViewId(),
        tableId: table.id,
        name: body.name,
        nameKey: nameKey(body.name),
        filter: (parts.filter as Prisma.InputJsonValue | null) ?? Prisma.DbNull,
        sort: parts.sort as Prisma.InputJsonValue,
        fieldIds: parts.fieldIds,
        search: parts.search,
      },
    });
    return toViewDto(created);
  });
}

export async function listViews(
  views: ViewsDb,
  principal: Principal,
  databaseId: string,
  tableRef: string,
): Promise<View[]> {
  const { prisma } = views;
  const database = await findAccessibleDatabase(prisma, principal, databaseId);
  const table = await findTableByRef(prisma, database.id, tableRef);
  const rows = await prisma.view.findMany({
    where: { tableId: table.id },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return rows.map(toViewDto);
}

export async function getView(
  views: ViewsDb,
  principal: Principal,
  databaseId: string,
  tableRef: string,
  viewRef: string,
): Promise<View> {
  const { prisma } = views;
  const database = await findAccessibleDatabase(prisma, principal, databaseId);
  const table = await findTableByRef(prisma, database.id, tableRef);
  return toViewDto(await findViewByRef(prisma, table.id, viewRef));
}

export async function updateView(
  views: ViewsDb,
  principal: Principal,
  databaseId: string,
  tableRef: string,
  viewRef: string,
  body: UpdateViewRequest,
): Promise<View> {
  return inViewTransaction(views, async (tx) => {
    const { database, table } = await locateForChange(tx, principal, databaseId, tableRef);
    const meta = await tableMetaOf(tx, database, table);
    const view = await findViewByRef(tx, table.id, viewRef);
    if (body.name !== undefined) await assertViewNameFree(tx, table.id, body.name, view.id);
    // Parts left out stay as they are; each is checked again against the table as it is now.
    const parts = keptParts(meta, {
      filter: body.filter === undefined ? ((view.filter as Filter | null) ?? null) : body.filter,
      sort: body.sort === undefined ? (view.sort as Sort[]) : (body.sort ?? []),
      fieldIds: body.fields === undefined ? view.fieldIds : (body.fields ?? []),
      search: body.search === undefined ? view.search : body.search,
    });
    const updated = await tx.view.update({
      where: { id: view.id },
      data: {
        ...(body.name !== undefined ? { name: body.name, nameKey: nameKey(body.name) } : {}),
        // Prisma writes SQL NULL into a Json? column only as Prisma.DbNull.
        filter: (parts.filter as Prisma.InputJsonValue | null) ?? Prisma.DbNull,
        sort: parts.sort as Prisma.InputJsonValue,
        fieldIds: parts.fieldIds,
        search: parts.search,
        updatedAt: new Date(),
      },
    });
    return toViewDto(updated);
  });
}

export async function deleteView(
  views: ViewsDb,
  principal: Principal,
  databaseId: string,
  tableRef: string,
  viewRef: string,
): Promise<void> {
  await inViewTransaction(views, async (tx) => {
    const { table } = await locateForChange(tx, principal, databaseId, tableRef);
    const view = await findViewByRef(tx, table.id, viewRef);
    // A webhook filtering through it would be left hearing nothing, or everything.
    const webhooks = await tx.webhook.findMany({ where: { viewId: view.id }, select: { id: true } });
    if (webhooks.length > 0) {
      const ids = webhooks.map((webhook) => webhook.id).join(', ');
      throw invalid(
        null,
        `view ${JSON.stringify(view.name)} is the viewId of webhook${webhooks.length === 1 ? '' : 's'} ${ids}: change or delete those webhooks first`,
      );
    }
    await tx.view.delete({ where: { id: view.id } });
  });
}

/** The field ids a view reads: its filter's, its sort's and its projection's. */
export function fieldIdsOfView(view: Pick<ViewRow, 'filter' | 'sort' | 'fieldIds'>): Set<string> {
  const ids = new Set<string>(view.fieldIds);
  const visit = (filter: Filter) => {
    if (isFilterGroup(filter)) {
      for (const member of 'and' in filter ? filter.and : filter.or) visit(member);
    } else {
      ids.add(filter.field);
    }
  };
  if (view.filter) visit(view.filter as Filter);
  for (const sort of view.sort as Sort[]) ids.add(sort.field);
  return ids;
}

/** The views of table `tableId` that read field `fieldId`. */
export async function viewsUsing(tx: Pick<Tx, 'view'>, tableId: string, fieldId: string): Promise<ViewRow[]> {
  const views = await tx.view.findMany({ where: { tableId }, orderBy: { createdAt: 'asc' } });
  return views.filter((view) => fieldIdsOfView(view).has(fieldId));
}

/**
 * Before field `fieldId` of a table becomes what `fields` (the table's rows as they will be) say
 * it is: a 400 naming the views reading it whose filter or sort would no longer hold (an operator
 * its new type does not take, an operand of the wrong shape).
 */
export async function assertViewsHold(
  tx: Pick<Tx, 'view'>,
  database: { id: string; schemaName: string },
  table: { id: string; name: string; primaryFieldId: string | null },
  fields: readonly FieldRow[],
  fieldId: string,
  where: InputPath,
): Promise<void> {
  const readers = await viewsUsing(tx, table.id, fieldId);
  if (readers.length === 0) return;
  const meta = metaOfRows(database, table, fields);
  const broken = readers.filter((view) => {
    try {
      keptParts(meta, {
        filter: (view.filter as Filter | null) ?? null,
        sort: view.sort as Sort[],
        fieldIds: view.fieldIds,
        search: view.search,
      });
      return false;
    } catch (error) {
      if (error instanceof DomainError) return true;
      throw error;
    }
  });
  const field = meta.fieldsById.get(fieldId);
  if (broken.length > 0 && field) {
    throw usedByViews(
      field,
      broken,
      `their filter or sort would no longer hold for a ${field.type} field`,
      where,
    );
  }
}

/** The 400 for a change that would take from views a field they read. */
export function usedByViews(
  field: { name: string },
  views: readonly { name: string }[],
  change: string,
  where: InputPath | null,
): DomainError {
  const names = views.map((view) => JSON.stringify(view.name)).join(', ');
  return invalid(
    where,
    `field ${JSON.stringify(field.name)} is used by the view${views.length === 1 ? '' : 's'} ${names}: ${change}`,
  );
}
