import { type ImportRowError, MAX_IMPORT_ERRORS_REPORTED } from '@recordbase/contracts/imports';

/** Cells that did not fit their fields: the first ones listed, the rest counted in a last entry. */
export class CellErrors {
  private readonly listed: ImportRowError[] = [];
  private unlisted = 0;
  /** Rows left out because a cell of theirs did not fit. */
  rowsSkipped = 0;

  add(row: number, column: string, message: string): void {
    if (this.listed.length < MAX_IMPORT_ERRORS_REPORTED) this.listed.push({ row, column, message });
    else this.unlisted += 1;
  }

  skipRow(): void {
    this.rowsSkipped += 1;
  }

  /** Forgets every error: the rows are read again. */
  clear(): void {
    this.listed.length = 0;
    this.unlisted = 0;
    this.rowsSkipped = 0;
  }

  list(): ImportRowError[] {
    if (this.unlisted === 0) return this.listed;
    const more = `${this.unlisted.toLocaleString('en-US')} more cells did not fit their fields`;
    return [...this.listed, { row: null, column: null, message: more }];
  }
}
