import type { FieldType } from '@recordbase/contracts/fields';
import { type ImportRun, newRecordId, type Tx } from '@recordbase/db';
import { importCell, inferredCell } from '@recordbase/db/field-types';
import { copyLine } from '@recordbase/db/physical';
import { findTableByRef } from '@recordbase/domain/access';
import { publishingEvents } from '@recordbase/domain/events';
import { SCHEMA_CHANGE_TIMEOUT_MS } from '@recordbase/domain/schema-tx';
import { matchColumns, type TargetField } from './columns';
import type { CellErrors } from './errors';
import { finish, moveRows } from './final-move';
import { ImportFileError } from './readers';
import {
  type ImportContext,
  LINES_PER_CHUNK,
  type OpenRows,
  type PlannedColumn,
  progressReporter,
} from './run-context';
import { copyIntoStaging, createStaging } from './staging';

/**
 * An import into an existing table: the file's columns matched to its fields, the rows that fit
 * copied to staging (copyRows, also a new table's second read), then moved in while every matched
 * field still has the type it was read as.
 */

export async function intoExistingTable(
  ctx: ImportContext,
  run: ImportRun,
  open: OpenRows,
  errors: CellErrors,
): Promise<void> {
  const progress = progressReporter(ctx, run);
  const table = await findTableByRef(ctx.db.prisma, run.databaseId, run.tableId as string);
  const fields: TargetField[] = (
    await ctx.db.prisma.field.findMany({ where: { tableId: table.id }, orderBy: { position: 'asc' } })
  ).map((field) => ({
    id: field.id,
    name: field.name,
    type: field.type as FieldType,
    template: field.template,
  }));
  // The header decides the columns; without one, the widest row (read as the copy goes) cannot be
  // known beforehand, so every field is offered a column.
  let header: string[] | null = null;
  if (run.firstRowIsHeader) {
    for await (const row of await open()) {
      header = row.cells;
      break;
    }
  }
  const width = header ? header.length : fields.length;
  const match = matchColumns(header, width, fields);
  const columns: PlannedColumn[] = [];
  match.fields.forEach((field, index) => {
    if (field) {
      const label = header ? (header[index] ?? '').trim() : `Column ${index + 1}`;
      columns.push({ index, label, type: field.type, template: field.template, fieldId: field.id });
    }
  });
  const imported = await copyRows(ctx, run, open, columns, errors, progress, null);
  const rowsTotal = imported + errors.rowsSkipped;
  await publishingEvents(
    ctx.events,
    (work: (tx: Tx) => Promise<void>) =>
      ctx.db.prisma.$transaction(work, { maxWait: 10_000, timeout: SCHEMA_CHANGE_TIMEOUT_MS }),
    async (tx: Tx, events) => {
      await tx.$executeRawUnsafe(`SET LOCAL statement_timeout = ${SCHEMA_CHANGE_TIMEOUT_MS}`);
      const database = await tx.database.findUnique({ where: { id: run.databaseId } });
      const current = await tx.field.findMany({
        where: { tableId: table.id },
        select: { id: true, type: true, template: true },
      });
      const typeOf = new Map(current.map((field) => [field.id, field.type]));
      const changed = columns.find((column) => typeOf.get(column.fieldId as string) !== column.type);
      if (!database || changed) {
        throw new ImportFileError(
          changed
            ? `the field ${JSON.stringify(changed.label)} was deleted or changed type during the import`
            : 'the database was deleted during the import',
          null,
        );
      }
      const target = {
        databaseId: database.id,
        id: table.id,
        schemaName: database.schemaName,
        fields: current.map((field) => ({ ...field, type: field.type as FieldType })),
      };
      await moveRows(tx, events, run, target, columns);
      await finish(tx, run, {
        tableId: table.id,
        rowsImported: imported,
        rowsTotal,
        errors,
        skipped: match.skipped,
      });
    },
  );
}

/**
 * A read that checks each row's cells as written values and copies the rows that fit to staging:
 * an existing table's one read, and a new table's second when its first staging did not stand.
 */
export async function copyRows(
  ctx: ImportContext,
  run: ImportRun,
  open: OpenRows,
  columns: readonly PlannedColumn[],
  errors: CellErrors,
  progress: ReturnType<typeof progressReporter>,
  rowsTotal: number | null,
): Promise<number> {
  await createStaging(ctx.db.pool, run.attempt, columns.length);
  let imported = 0;
  let read = 0;
  const rows = await open();
  async function* lines(): AsyncGenerator<string> {
    let chunk = '';
    let inChunk = 0;
    let first = true;
    const values: unknown[] = new Array(columns.length + 1);
    for await (const row of rows) {
      if (first && run.firstRowIsHeader) {
        first = false;
        continue;
      }
      first = false;
      read += 1;
      values[0] = newRecordId();
      let fits = true;
      for (let index = 0; index < columns.length; index += 1) {
        const column = columns[index] as PlannedColumn;
        const text = row.cells[column.index] ?? '';
        const outcome = column.inferred
          ? inferredCell(column.type, column.template, text)
          : importCell(column.type, column.template, text);
        if (outcome.ok) values[index + 1] = outcome.value;
        else {
          fits = false;
          errors.add(row.row, column.label, outcome.message);
        }
      }
      if (!fits) {
        errors.skipRow();
      } else {
        chunk += copyLine(values);
        imported += 1;
        inChunk += 1;
        if (inChunk >= LINES_PER_CHUNK) {
          yield chunk;
          chunk = '';
          inChunk = 0;
        }
      }
      await progress.every(read, imported, rowsTotal);
    }
    if (chunk.length > 0) yield chunk;
  }
  await copyIntoStaging(ctx.db.pool, run.attempt, columns.length, lines());
  await progress.report(imported, rowsTotal ?? read);
  return imported;
}
