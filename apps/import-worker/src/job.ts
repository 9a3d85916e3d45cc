import { DomainError } from '@recordbase/contracts/domain-errors';
import type { FieldType } from '@recordbase/contracts/fields';
import type { TableInput } from '@recordbase/contracts/schema';
import {
  appendSelectedEventsSql,
  claimImport,
  type Db,
  databaseErrorOf,
  failImport,
  type ImportRun,
  newRecordId,
  reportImportProgress,
  succeedImport,
  type Tx,
} from '@recordbase/db';
import {
  ColumnInference,
  fieldTypeModule,
  type InferredType,
  importCell,
  inferredCell,
  sameImportedValue,
} from '@recordbase/db/field-types';
import {
  copyLine,
  copyValue,
  qualifiedTable,
  quoteIdent,
  quoteLiteral,
  systemColumns,
} from '@recordbase/db/physical';
import { findTableByRef } from '@recordbase/domain/access';
import { serviceOn } from '@recordbase/domain/access-policy';
import { publishingEvents, type TransactionEvents } from '@recordbase/domain/events';
import { importFormat } from '@recordbase/domain/imports';
import {
  databaseForChange,
  inSchemaTransaction,
  SCHEMA_CHANGE_TIMEOUT_MS,
} from '@recordbase/domain/schema-tx';
import { tableWithFields, toTableDto } from '@recordbase/domain/serialize';
import { createTablesInTx } from '@recordbase/domain/tables';
import type { EventPublisher } from '@recordbase/queues';
import { AppError } from '@recordbase/server-kit/errors';
import type { Logger } from '@recordbase/server-kit/logger';
import { type ObjectStorage, StorageNotFoundError } from '@recordbase/storage';
import { matchColumns, newFieldNames, type TargetField, unique } from './columns';
import { CellErrors } from './errors';
import {
  DEFAULT_READER_LIMITS,
  ImportFileError,
  type ImportRow,
  type ReaderLimits,
  readCsv,
  readXlsx,
} from './readers';
import { copyIntoStaging, createStaging, dropStaging, stagingColumns, stagingTable } from './staging';

/**
 * One import, start to end. The file is read once as it streams from storage: for a new table,
 * each column's type is inferred from every value while the rows are staged as the types look so
 * far (read again only when a column's type changed its values on the way); for an existing
 * table, the rows are checked against its fields. Rows go by COPY into a staging table of the run; one transaction then creates the table (or
 * checks the existing one), moves the rows in, appends the events and marks the import
 * succeeded, and only while this run still holds the import: a cancel or a newer run means
 * nothing is written.
 */

export interface ImportContext {
  db: Db;
  storage: Pick<ObjectStorage, 'get'>;
  events: EventPublisher;
  logger: Logger;
  limits?: ReaderLimits;
  /** Rows between two progress reports (and cancel checks). */
  progressEveryRows?: number;
}

/** The import is no longer this run's: cancelled, or taken over by a newer run. */
class NotOurs extends Error {}

/** A column of the file that goes into the table: which cell, into what, under what label. */
interface PlannedColumn {
  index: number;
  label: string;
  type: FieldType;
  template: unknown;
  fieldId?: string;
  /** A new table's column, whose type its inference gave: its cells are read with inferredCell. */
  inferred?: boolean;
}

const PROGRESS_EVERY_ROWS = 5000;
const LINES_PER_CHUNK = 500;
const EVENT_BATCH = 1000;
/**
 * The runs an import may take. A run ends its import one way or the other unless its worker dies
 * (out of memory, killed), and then BullMQ or the sweep starts another: a file that kills every
 * worker reading it would go round forever, taking a worker down each time.
 */
export const MAX_IMPORT_RUNS = 3;

export type ImportOutcome = 'succeeded' | 'failed' | 'not-ours';

export interface RunHooks {
  /** Told of the run's claim, so a worker shutting down can hand the import back (`releaseImport`). */
  claimed?(attempt: string): void;
}

export async function runImport(
  ctx: ImportContext,
  importId: string,
  hooks: RunHooks = {},
): Promise<ImportOutcome> {
  const run = await claimImport(ctx.db.pool, importId, MAX_IMPORT_RUNS, USED_UP_MESSAGE);
  if (run === 'used-up') return 'failed';
  if (!run) return 'not-ours';
  hooks.claimed?.(run.attempt);
  const errors = new CellErrors();
  try {
    const upload = await ctx.db.prisma.uploadedFile.findUnique({ where: { key: run.s3Key } });
    if (!upload) throw new ImportFileError('the uploaded file is gone', null);
    const open = () => openRows(ctx, run, importFormat(upload));
    if (run.tableId === null) await intoNewTable(ctx, run, open, errors);
    else await intoExistingTable(ctx, run, open, errors);
    return 'succeeded';
  } catch (error) {
    if (error instanceof NotOurs) return 'not-ours';
    const failure = failureOf(error);
    if (failure === null) ctx.logger.error({ err: error, importId }, 'import failed');
    await fail(
      ctx.db,
      run,
      errors,
      failure ?? { row: null, message: 'The import failed on our side; try again later' },
    );
    return 'failed';
  } finally {
    await dropStaging(ctx.db.pool, run.attempt).catch(() => {});
  }
}

const USED_UP_MESSAGE = `the import stopped the worker ${MAX_IMPORT_RUNS} times (it ran out of memory or was killed); it is not tried again: split the file into smaller ones`;

async function openRows(
  ctx: ImportContext,
  run: ImportRun,
  kind: 'csv' | 'xlsx',
): Promise<AsyncIterable<ImportRow>> {
  const source = await ctx.storage.get(run.s3Key).catch((error: unknown) => {
    if (error instanceof StorageNotFoundError) throw new ImportFileError('the uploaded file is gone', null);
    throw error;
  });
  const limits = ctx.limits ?? DEFAULT_READER_LIMITS;
  return kind === 'xlsx'
    ? readXlsx(source, run.sheet ? { sheet: run.sheet } : {}, limits)
    : readCsv(source, limits);
}

type OpenRows = () => Promise<AsyncIterable<ImportRow>>;

/** Reports progress every so many rows, and learns there whether the import is still this run's. */
function progressReporter(ctx: ImportContext, run: ImportRun) {
  const every = ctx.progressEveryRows ?? PROGRESS_EVERY_ROWS;
  let last = 0;
  const report = async (rowsImported: number, rowsTotal: number | null) => {
    if (!(await reportImportProgress(ctx.db.pool, run, rowsImported, rowsTotal))) throw new NotOurs();
  };
  return {
    report,
    async every(rowsRead: number, rowsImported: number, rowsTotal: number | null = null) {
      if (rowsRead - last < every) return;
      last = rowsRead;
      await report(rowsImported, rowsTotal);
    },
  };
}

async function intoNewTable(
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

async function intoExistingTable(
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
        select: { id: true, type: true },
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
      const target = { databaseId: database.id, id: table.id, schemaName: database.schemaName };
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
async function copyRows(
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

interface Target {
  databaseId: string;
  id: string;
  schemaName: string;
}

/**
 * The staged columns as the target's values: each column's COPY text read as its type, an empty
 * cell staged before the column's type was known given the type's empty value (false for a
 * checkbox).
 */
function stagedValues(columns: readonly PlannedColumn[]): string[] {
  return columns.map((column, index) => {
    const sqlType = fieldTypeModule(column.type).column?.sqlType ?? 'text';
    const value = `${stagingColumns(columns.length)[index]}::${sqlType}`;
    const empty = importCell(column.type, column.template, '');
    return empty.ok && empty.value !== null
      ? `COALESCE(${value}, ${quoteLiteral(copyValue(empty.value))}::${sqlType})`
      : value;
  });
}

/** The staged rows into an existing table, in the file's order, and their events. */
async function moveRows(
  tx: Tx,
  events: TransactionEvents,
  run: ImportRun,
  target: Target,
  columns: readonly PlannedColumn[],
): Promise<void> {
  const into = ['id', ...columns.map((column) => quoteIdent(column.fieldId as string))].join(', ');
  const from = ['id', ...stagedValues(columns)].join(', ');
  await tx.$executeRawUnsafe(
    `INSERT INTO ${qualifiedTable(target.schemaName, target.id)} (${into}) SELECT ${from} FROM ${stagingTable(run.attempt)} ORDER BY ord`,
  );
  await appendRecordEvents(tx, events, run, target);
}

/**
 * The staged rows into a table made by this import, its insertion order (`seq`) the file's: the
 * staging table's own numbering, so no sort is needed; the table's sequence then follows on.
 */
async function insertIntoNewTable(tx: Tx, run: ImportRun, target: Target, columns: readonly PlannedColumn[]) {
  const table = qualifiedTable(target.schemaName, target.id);
  const into = [
    systemColumns.id,
    systemColumns.seq,
    ...columns.map((column) => quoteIdent(column.fieldId as string)),
  ].join(', ');
  const from = ['id', 'ord', ...stagedValues(columns)].join(', ');
  await tx.$executeRawUnsafe(
    `INSERT INTO ${table} (${into}) OVERRIDING SYSTEM VALUE SELECT ${from} FROM ${stagingTable(run.attempt)}`,
  );
  await tx.$queryRawUnsafe(
    `SELECT setval(pg_get_serial_sequence($1, '${systemColumns.seq}'), max(${systemColumns.seq})) FROM ${table}`,
    table,
  );
}

/** One record.created per batch of ids, appended in SQL: the ids never come through the worker. */
async function appendRecordEvents(
  tx: Tx,
  events: TransactionEvents,
  run: ImportRun,
  target: Target,
): Promise<void> {
  const appended = await tx.$queryRawUnsafe<{ id: string }[]>(
    appendSelectedEventsSql(
      `SELECT gen_random_uuid(), $1::uuid, $2, 'record.created', 'import',
            json_build_object('tableId', $2::text, 'recordIds', json_agg(id ORDER BY ord))
       FROM ${stagingTable(run.attempt)} GROUP BY (ord - 1) / ${EVENT_BATCH} ORDER BY min(ord)`,
      'id::text',
    ),
    target.databaseId,
    target.id,
  );
  events.appended(appended.map((event) => event.id));
}

interface Outcome {
  tableId: string;
  rowsImported: number;
  rowsTotal: number;
  errors: CellErrors;
  skipped: string[];
}

/** Marks the import succeeded in the transaction that writes its rows, if it is still this run's. */
async function finish(tx: Tx, run: ImportRun, outcome: Outcome): Promise<void> {
  const ours = await succeedImport(tx, run, {
    tableId: outcome.tableId,
    rowsImported: outcome.rowsImported,
    rowsTotal: outcome.rowsTotal,
    errors: outcome.errors.list(),
    skippedColumns: outcome.skipped,
  });
  if (!ours) throw new NotOurs();
}

interface Failure {
  row: number | null;
  message: string;
}

/** The file's failure first, then the cell errors met before it. */
async function fail(db: Db, run: ImportRun, errors: CellErrors, failure: Failure): Promise<void> {
  await failImport(db.pool, run, [{ ...failure, column: null }, ...errors.list()]);
}

/** What the import's status says of a failure; null when it is ours to fix (logged). */
function failureOf(error: unknown): Failure | null {
  if (error instanceof ImportFileError) return { row: error.row, message: error.message };
  // Named from the import: a table it creates is the input (`import.fields[2].name`).
  if (error instanceof DomainError && error.kind !== 'busy')
    return { row: null, message: error.words('import') };
  if (error instanceof AppError && error.status < 500) return { row: null, message: error.message };
  const database = databaseErrorOf(error);
  if (database && /^(22|23|54)/.test(database.code)) {
    return { row: null, message: `The database refused the rows: ${database.message}` };
  }
  return null;
}
