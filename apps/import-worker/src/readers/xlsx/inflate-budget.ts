import { count, ImportFileError } from '../import-file-error';

/**
 * The uncompressed bytes a workbook may take to read, across all the parts read: what bounds a
 * zip bomb's CPU time, and with the parsers' own limits, its memory.
 */
export class InflateBudget {
  private used = 0;

  constructor(private readonly limit: number) {}

  /** Before inflating a part: refuses one whose declared size alone would not fit. */
  admit(declaredBytes: number): void {
    if (this.used + declaredBytes > this.limit) throw this.exceeded();
  }

  /** Counts bytes as they come out of the inflater; the declared size may lie. */
  spend(bytes: number): void {
    this.used += bytes;
    if (this.used > this.limit) throw this.exceeded();
  }

  private exceeded(): ImportFileError {
    return new ImportFileError(`the workbook unpacks to more than ${count(this.limit)} bytes`, null);
  }
}
