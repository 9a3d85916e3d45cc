import type { ReaderLimits } from './types';

/**
 * A file that cannot be imported. The message says why, in words for the import's status; `row`
 * is the spreadsheet row it is about, or null for the file as a whole.
 */
export class ImportFileError extends Error {
  override readonly name = 'ImportFileError';

  constructor(
    message: string,
    readonly row: number | null,
  ) {
    super(message);
  }
}

/** 1234567 → '1,234,567': numbers in messages read as a person writes them. */
export function count(value: number): string {
  return value.toLocaleString('en-US');
}

export function tooManyColumns(row: number, columns: number, limits: ReaderLimits): ImportFileError {
  return new ImportFileError(
    `row ${row} has ${count(columns)} columns; a table holds at most ${count(limits.maxColumns)}`,
    row,
  );
}

export function valueTooLong(
  row: number,
  column: number,
  length: number,
  limits: ReaderLimits,
): ImportFileError {
  return new ImportFileError(
    `row ${row}, column ${column}: a value of ${count(length)} characters; at most ${count(limits.maxCellLength)}`,
    row,
  );
}
