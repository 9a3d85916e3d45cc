import { DomainError } from '@recordbase/contracts/domain-errors';
import { claimImport, type Db, databaseErrorOf, failImport, type ImportRun } from '@recordbase/db';
import { importFormat } from '@recordbase/domain/imports';
import { StorageNotFoundError } from '@recordbase/storage';
import { CellErrors } from './errors';
import { intoExistingTable } from './existing-table';
import { intoNewTable } from './new-table';
import { DEFAULT_READER_LIMITS, ImportFileError, type ImportRow, readCsv, readXlsx } from './readers';
import { type ImportContext, NotOurs } from './run-context';
import { dropStaging } from './staging';

/**
 * One import, start to end. The file is read once as it streams from storage: for a new table,
 * each column's type is inferred from every value while the rows are staged as the types look so
 * far (read again only when a column's type changed its values on the way); for an existing
 * table, the rows are checked against its fields. Rows go by COPY into a staging table of the run; one transaction then creates the table (or
 * checks the existing one), moves the rows in, appends the events and marks the import
 * succeeded, and only while this run still holds the import: a cancel or a newer run means
 * nothing is written.
 */

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
  const database = databaseErrorOf(error);
  if (database && /^(22|23|54)/.test(database.code)) {
    return { row: null, message: `The database refused the rows: ${database.message}` };
  }
  return null;
}
