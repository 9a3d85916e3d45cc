import { count, ImportFileError } from './import-file-error';
import type { FileBudget, ReaderLimits } from './types';

/** What `budget` allows a file of `bytes`. */
export function allowance(budget: FileBudget, bytes: number): number {
  return Math.max(budget.atLeast, Math.floor(budget.perFileByte * bytes));
}

/** '(16 per byte of the file, and never fewer than 67,108,864)': how an allowance was reached. */
function rule(budget: FileBudget): string {
  const rate =
    budget.perFileByte < 1 && Number.isInteger(1 / budget.perFileByte)
      ? `one per ${1 / budget.perFileByte} bytes`
      : `${budget.perFileByte} per byte`;
  return `(${rate} of the file, and never fewer than ${count(budget.atLeast)})`;
}

/**
 * What a reader hands out, counted against budgets that grow with the bytes of the file read so
 * far: the cells and their characters. A row passes its cells here as it is built, so a file that
 * expands past them fails there, with memory and the work done bounded by the budget. The inflate
 * budget bounds what a workbook unpacks to; this bounds what it becomes (one long shared string
 * referenced by millions of cells is a small zip and terabytes of rows).
 */
export class EmittedBudget {
  private bytes = 0;
  private cells = 0;
  private characters = 0;
  private maxCells: number;
  private maxCharacters: number;

  constructor(private readonly limits: Pick<ReaderLimits, 'emittedCells' | 'emittedCharacters'>) {
    this.maxCells = allowance(limits.emittedCells, 0);
    this.maxCharacters = allowance(limits.emittedCharacters, 0);
  }

  /** More of the file was read: the budgets grow with it. */
  read(bytes: number): void {
    this.bytes += bytes;
    this.maxCells = allowance(this.limits.emittedCells, this.bytes);
    this.maxCharacters = allowance(this.limits.emittedCharacters, this.bytes);
  }

  /** Counts `cells` cells of `characters` characters in all, handed out in `row`. */
  emit(row: number, cells: number, characters: number): void {
    this.cells += cells;
    this.characters += characters;
    if (this.characters > this.maxCharacters) {
      throw new ImportFileError(
        `row ${row}: the file's cells hold more than ${count(this.maxCharacters)} characters, the most a file of ${count(this.bytes)} bytes may hold ${rule(this.limits.emittedCharacters)}; split it into smaller files`,
        row,
      );
    }
    if (this.cells > this.maxCells) {
      throw new ImportFileError(
        `row ${row}: the file holds more than ${count(this.maxCells)} cells, the most a file of ${count(this.bytes)} bytes may hold ${rule(this.limits.emittedCells)}; split it into smaller files, or delete the empty columns that widen its rows`,
        row,
      );
    }
  }
}

/** The shared strings of a workbook of `bytes` bytes, counted as they are added. */
export class SharedStringsBudget {
  private count = 0;
  private characters = 0;
  readonly maxCount: number;
  private readonly maxCharacters: number;

  constructor(
    private readonly limits: Pick<ReaderLimits, 'sharedStrings' | 'sharedStringCharacters'>,
    private readonly bytes: number,
  ) {
    this.maxCount = allowance(limits.sharedStrings, bytes);
    this.maxCharacters = allowance(limits.sharedStringCharacters, bytes);
  }

  /** Before a string of `characters` characters is held (0 for one that is not kept). */
  add(characters: number): void {
    this.count += 1;
    this.characters += characters;
    if (this.count > this.maxCount) {
      throw new ImportFileError(
        `the workbook has more than ${count(this.maxCount)} shared strings, the most a file of ${count(this.bytes)} bytes may have ${rule(this.limits.sharedStrings)}; save it again in Excel, which keeps each distinct text once, or split it into smaller files`,
        null,
      );
    }
    if (this.characters > this.maxCharacters) {
      throw new ImportFileError(
        `the workbook's shared strings hold more than ${count(this.maxCharacters)} characters, the most a file of ${count(this.bytes)} bytes may hold ${rule(this.limits.sharedStringCharacters)}; split it into smaller files`,
        null,
      );
    }
  }
}
