import type { FieldType } from '@recordbase/contracts/fields';
import type { TableInput } from '@recordbase/contracts/schema';
import { type ImportRun, newRecordId } from '@recordbase/db';
import {
  ColumnInference,
  fieldTypeModule,
  type InferredType,
  sameImportedValue,
} from '@recordbase/db/field-types';
import { copyLine } from '@recordbase/db/physical';
import { serviceOn } from '@recordbase/domain/access-policy';
import { databaseForChange, inSchemaTransaction } from '@recordbase/domain/schema-tx';
import { tableWithFields, toTableDto } from '@recordbase/domain/serialize';
import { createTablesInTx } from '@recordbase/domain/tables';
import { newFieldNames, unique } from './columns';
import type { CellErrors } from './errors';
import { copyRows } from './existing-table';
import { appendRecordEvents, finish, insertIntoNewTable } from './final-move';
import { ImportFileError, type ImportRow } from './readers';
import {
  type ImportContext,
  LINES_PER_CHUNK,
  type OpenRows,
  type PlannedColumn,
  progressReporter,
} from './run-context';
import { copyIntoStaging, createStaging, dropStaging } from './staging';

/**
 * An import into a new table: one read infers each column's type from every value while staging
 * the rows as the types look so far (StagedTypes), a second read only when a final type changed
 * the values; then the table is created, the rows moved in and its events appended in one
 * transaction.
 */

export async function intoNewTable(
  ctx: ImportContext,
  run: ImportRun,
  open: OpenRows,
  errors: CellErrors,
): Promise<void> {
  const first = await readAndStage(ctx, run, open, errors);
  const { rowsTotal, width, header } = first;
  if (width === 0) throw new ImportFileError('the file has no columns', null);
  const names = newFieldNames(header, width);
  const columns: PlannedColumn[] = names.map((label, index) => {
    const inferred = (first.inferences[index] ?? new ColumnInference()).result();
    return { index, label, type: inferred.type, template: inferred.template, inferred: true };
  });
  // The first field names each record: a type that cannot keep its values as text.
  const primary = columns[0] as PlannedColumn;
  if (fieldTypeModule(primary.type).primary === false) {
    primary.type = 'long_text';
    primary.template = {};
  }
  let imported = first.staged;
  // The rows were staged as each column's type looked then: when one turned out otherwise, they
  // are read again as the final types.
  if (!first.staging.fits(columns)) {
    await dropStaging(ctx.db.pool, run.attempt);
    errors.clear();
    await progressReporter(ctx, run).report(0, rowsTotal);
    imported = await copyRows(ctx, run, open, columns, errors, progressReporter(ctx, run), rowsTotal);
  } else {
    await progressReporter(ctx, run).report(imported, rowsTotal);
  }

  const input: TableInput = {
    name: run.tableName ?? 'Imported',
    fields: columns.map((column) => ({
      name: column.label,
      type: column.type,
      template: column.template,
    })) as TableInput['fields'],
  };
  await inSchemaTransaction({ prisma: ctx.db.prisma, events: ctx.events }, async (tx, events) => {
    const database = await databaseForChange(tx, serviceOn(run.databaseId), run.databaseId);
    const taken = new Set(
      (await tx.table.findMany({ where: { databaseId: database.id }, select: { nameKey: true } })).map(
        (table) => table.nameKey,
      ),
    );
    // The rows go in before the table's indexes are built: one build rather than one per row.
    const [tableId] = await createTablesInTx(
      tx,
      database,
      [{ ...input, name: unique(input.name, taken) }],
      () => [],
      async ([id]) => {
        const fields = await tx.field.findMany({
          where: { tableId: id as string },
          orderBy: { position: 'asc' },
          select: { id: true },
        });
        const target = { databaseId: database.id, id: id as string, schemaName: database.schemaName };
        await insertIntoNewTable(
          tx,
          run,
          target,
          columns.map((column, index) => ({ ...column, fieldId: fields[index]?.id as string })),
        );
      },
    );
    const table = toTableDto(
      await tx.table.findUniqueOrThrow({ where: { id: tableId as string }, include: tableWithFields }),
    );
    // table.created before the records' events, as the table comes before its rows.
    await events.table(database.id, 'table.created', table);
    await appendRecordEvents(tx, events, run, {
      databaseId: database.id,
      id: table.id,
      schemaName: database.schemaName,
    });
    await finish(tx, run, { tableId: table.id, rowsImported: imported, rowsTotal, errors, skipped: [] });
  });
}

/**
 * What a new table's rows were staged as, column by column: each cell converted for the type its
 * column's inference held when the cell was read. The staged rows stand when every column's final
 * type gives its cells the same values; a row wider than the first stops the staging.
 */
class StagedTypes {
  private readonly converted: (FieldType | null)[];
  private stopped = false;

  constructor(readonly width: number) {
    this.converted = new Array(width).fill(null);
  }

  get active(): boolean {
    return !this.stopped;
  }

  stop(): void {
    this.stopped = true;
  }

  /** Notes that column `index` converts as `type` now; false (and stops) when it converted otherwise before. */
  convertAs(index: number, type: FieldType): boolean {
    const before = this.converted[index];
    if (before === null || before === undefined) this.converted[index] = type;
    else if (!sameImportedValue(before, type)) this.stop();
    return !this.stopped;
  }

  fits(columns: readonly PlannedColumn[]): boolean {
    if (this.stopped || columns.length !== this.width) return false;
    return columns.every((column, index) => {
      const converted = this.converted[index];
      return converted === null || converted === undefined || sameImportedValue(converted, column.type);
    });
  }
}

interface FirstPass {
  header: string[] | null;
  width: number;
  rowsTotal: number;
  inferences: ColumnInference[];
  staging: StagedTypes;
  staged: number;
}

/**
 * The one read of a file into a new table: each column's type from every value, and the rows
 * staged meanwhile as the types look so far, which is what they stay for most files.
 */
async function readAndStage(
  ctx: ImportContext,
  run: ImportRun,
  open: OpenRows,
  errors: CellErrors,
): Promise<FirstPass> {
  const reporter = progressReporter(ctx, run);
  const rows = (await open())[Symbol.asyncIterator]();
  const firstRow = await rows.next();
  const pass: FirstPass = {
    header: null,
    width: 0,
    rowsTotal: 0,
    inferences: [],
    staging: new StagedTypes(0),
    staged: 0,
  };
  if (firstRow.done) {
    await rows.return?.();
    return pass;
  }
  pass.header = run.firstRowIsHeader ? firstRow.value.cells : null;
  pass.width = firstRow.value.cells.length;
  const staging = new StagedTypes(pass.width);
  pass.staging = staging;
  const labels = newFieldNames(pass.header, pass.width);
  const inferences = pass.inferences;
  const values: unknown[] = new Array(pass.width + 1);

  /** Infers from the row and, while the staging holds, returns its COPY line ('' when skipped). */
  const take = (row: ImportRow): string => {
    pass.rowsTotal += 1;
    const cells = row.cells;
    if (cells.length > pass.width) {
      pass.width = cells.length;
      staging.stop();
    }
    let fits = true;
    for (let index = 0; index < cells.length; index += 1) {
      const text = cells[index] as string;
      let inference = inferences[index];
      if (!inference) {
        inference = new ColumnInference();
        inferences[index] = inference;
      }
      if (!staging.active) {
        inference.observe(text);
        continue;
      }
      if (text === '') {
        values[index + 1] = null;
        continue;
      }
      // The value as the type the column has now, from the check that narrowed it.
      const outcome = inference.read(text);
      if (!staging.convertAs(index, inference.current() as InferredType)) continue;
      if (outcome.ok) values[index + 1] = outcome.value;
      else {
        fits = false;
        errors.add(row.row, labels[index] as string, outcome.message);
      }
    }
    if (!staging.active) return '';
    for (let index = cells.length; index < staging.width; index += 1) values[index + 1] = null;
    values[0] = newRecordId();
    if (!fits) {
      errors.skipRow();
      return '';
    }
    pass.staged += 1;
    return copyLine(values);
  };

  async function* lines(): AsyncGenerator<string> {
    let chunk = '';
    let inChunk = 0;
    if (!run.firstRowIsHeader) chunk += take(firstRow.value as ImportRow);
    for (;;) {
      const next = await rows.next();
      if (next.done) break;
      const line = take(next.value);
      if (line !== '') {
        chunk += line;
        inChunk += 1;
        if (inChunk >= LINES_PER_CHUNK) {
          yield chunk;
          chunk = '';
          inChunk = 0;
        }
      }
      await reporter.every(pass.rowsTotal, staging.active ? pass.staged : 0);
    }
    await reporter.flush();
    if (chunk.length > 0) yield chunk;
  }

  await createStaging(ctx.db.pool, run.attempt, pass.width);
  try {
    await copyIntoStaging(ctx.db.pool, run.attempt, pass.width, lines());
  } finally {
    await rows.return?.();
  }
  return pass;
}
