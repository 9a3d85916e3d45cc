import type { FieldType } from '@recordbase/contracts/fields';
import { type Db, type ImportRun, reportImportProgress } from '@recordbase/db';
import type { EventPublisher } from '@recordbase/queues';
import type { Logger } from '@recordbase/server-kit/logger';
import type { ObjectStorage } from '@recordbase/storage';
import type { ImportRow, ReaderLimits } from './readers';

/**
 * What the steps of an import run share: the run's context, the columns it plans, the file's rows
 * opened afresh for each read, the progress reports that learn whether the import is still the
 * run's (NotOurs when not), and how many rows go between two reports and into one COPY chunk.
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
export class NotOurs extends Error {}

/** A column of the file that goes into the table: which cell, into what, under what label. */
export interface PlannedColumn {
  index: number;
  label: string;
  type: FieldType;
  template: unknown;
  fieldId?: string;
  /** A new table's column, whose type its inference gave: its cells are read with inferredCell. */
  inferred?: boolean;
}

const PROGRESS_EVERY_ROWS = 5000;
export const LINES_PER_CHUNK = 500;

export type OpenRows = () => Promise<AsyncIterable<ImportRow>>;

/**
 * Reports progress every so many rows, and learns there whether the import is still this run's.
 * A report is written while the read goes on: the next one (or `flush`) waits for it first, so a
 * run that is no longer ours stops at most one report later, and the reports land in order.
 */
export function progressReporter(ctx: ImportContext, run: ImportRun) {
  const every = ctx.progressEveryRows ?? PROGRESS_EVERY_ROWS;
  let last = 0;
  let pending: Promise<void> | undefined;
  const write = async (rowsImported: number, rowsTotal: number | null) => {
    if (!(await reportImportProgress(ctx.db.pool, run, rowsImported, rowsTotal))) throw new NotOurs();
  };
  const flush = async () => {
    const written = pending;
    pending = undefined;
    await written;
  };
  return {
    flush,
    async report(rowsImported: number, rowsTotal: number | null) {
      await flush();
      await write(rowsImported, rowsTotal);
    },
    async every(rowsRead: number, rowsImported: number, rowsTotal: number | null = null) {
      if (rowsRead - last < every) return;
      last = rowsRead;
      await flush();
      const written = write(rowsImported, rowsTotal);
      // Its failure is thrown by the flush that waits for it, not left unhandled meanwhile.
      written.catch(() => {});
      pending = written;
    },
  };
}
