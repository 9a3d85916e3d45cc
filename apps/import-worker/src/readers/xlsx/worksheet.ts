import type { EmittedBudget } from '../file-budget';
import { ImportFileError, tooManyColumns, valueTooLong } from '../import-file-error';
import type { ImportRow, ReaderLimits } from '../types';
import { columnOfReference } from './cell-reference';
import {
  booleanText,
  decodeEscapes,
  isoDateText,
  numberText,
  rawTextLimit,
  serialDateText,
} from './cell-text';
import { damaged, shown } from './errors';
import { type SharedStrings, TooLongString } from './shared-strings';
import type { XmlHandler } from './xml-part';

export interface WorksheetContext {
  sharedStrings: SharedStrings;
  /** Per cell style index: whether it shows a date. */
  /** Per cell style: whether its format shows a date, or a date and time. */
  dateStyles: readonly ('date' | 'datetime' | null)[];
  date1904: boolean;
  limits: ReaderLimits;
  /** Counts every cell as it is made, so a shared string used a million times stops early. */
  emitted: EmittedBudget;
}

/**
 * Gathers a worksheet's rows from its XML elements: <row r> holds <c r t s> cells whose <v> is a
 * number, a shared string index, a boolean, an error or a formula's cached result, or whose <is>
 * holds an inline (rich) string. Cells without a value (styled empty cells, which may run far to
 * the right) are skipped; gaps are filled with '' so cells[i] is column i + 1. A row with no value
 * is skipped, but one whose values are all empty text is a row: an export writes an empty
 * record so. A value past maxColumns is never stored: the row's width is counted on and the row
 * fails when it ends.
 */
export class WorksheetRows implements XmlHandler {
  /** Rows completed since the caller last took them. */
  rows: ImportRow[] = [];
  private rowNumber = 0;
  private cells: string[] = [];
  /** The last column with a value past maxColumns in this row; 0 while the row fits. */
  private overflowColumn = 0;
  private column = 0;
  private type = '';
  private style = 0;
  private inCell = false;
  private hasValue = false;
  /** Whether a cell of the row has a value, empty text included. */
  private rowHasValue = false;
  private inInlineString = false;
  private inPhonetic = false;
  private capturing = false;
  private value = '';
  private valueLength = 0;
  private readonly rawLimit: number;

  constructor(private readonly context: WorksheetContext) {
    this.rawLimit = rawTextLimit(context.limits);
  }

  /** The rows gathered so far, handed over once. */
  take(): ImportRow[] {
    const rows = this.rows;
    this.rows = [];
    return rows;
  }

  open(name: string, attributes: Readonly<Record<string, string>>): void {
    switch (name) {
      case 'row':
        // The r attribute is optional: without it a row follows the one before.
        this.rowNumber = positiveInteger(attributes.r) ?? this.rowNumber + 1;
        this.cells = [];
        this.rowHasValue = false;
        this.overflowColumn = 0;
        this.column = 0;
        break;
      case 'c':
        this.column = attributes.r === undefined ? this.column + 1 : this.referencedColumn(attributes.r);
        this.type = attributes.t ?? 'n';
        this.style = positiveInteger(attributes.s) ?? 0;
        this.inCell = true;
        this.hasValue = false;
        this.value = '';
        this.valueLength = 0;
        break;
      case 'v':
        this.capturing = this.inCell;
        this.hasValue ||= this.inCell;
        break;
      case 'is':
        this.inInlineString = this.inCell;
        this.hasValue ||= this.inCell;
        break;
      case 't':
        this.capturing = this.inInlineString && !this.inPhonetic;
        break;
      case 'rPh':
        this.inPhonetic = true;
        break;
    }
  }

  text(text: string): void {
    if (!this.capturing) return;
    this.valueLength += text.length;
    if (this.valueLength <= this.rawLimit) this.value += text;
  }

  close(name: string): void {
    switch (name) {
      case 'v':
      case 't':
        this.capturing = false;
        break;
      case 'rPh':
        this.inPhonetic = false;
        break;
      case 'is':
        this.inInlineString = false;
        break;
      case 'c':
        this.endCell();
        break;
      case 'row':
        this.endRow();
        break;
    }
  }

  private endCell(): void {
    this.inCell = false;
    this.capturing = false;
    if (!this.hasValue) return;
    const { limits } = this.context;
    const column = this.column;
    if (column > limits.maxColumns) {
      if (this.valueLength > 0) this.overflowColumn = Math.max(this.overflowColumn, column);
      return;
    }
    if (this.valueLength > this.rawLimit)
      throw valueTooLong(this.rowNumber, column, this.valueLength, limits);
    const text = this.cellText(column);
    this.rowHasValue = true;
    if (text === '') return;
    if (text.length > limits.maxCellLength) throw valueTooLong(this.rowNumber, column, text.length, limits);
    // The gap before the cell counts (a cell in column 500 makes 500), and so does a cell that
    // overwrites one of the same column: its text was made all the same.
    this.context.emitted.emit(this.rowNumber, Math.max(1, column - this.cells.length), text.length);
    while (this.cells.length < column - 1) this.cells.push('');
    this.cells[column - 1] = text;
  }

  private cellText(column: number): string {
    const value = this.value;
    switch (this.type) {
      case 's':
        return this.sharedString(value, column);
      case 'inlineStr':
      case 'str':
        return decodeEscapes(value);
      case 'b':
        return booleanText(value);
      case 'e':
        return '';
      case 'd':
        return isoDateText(value);
      default:
        return this.context.dateStyles[this.style] != null
          ? serialDateText(value, this.context.date1904, this.context.dateStyles[this.style] === 'datetime')
          : numberText(value);
    }
  }

  private sharedString(value: string, column: number): string {
    const index = Number(value);
    const shared = value.trim() === '' ? undefined : this.context.sharedStrings.get(index);
    if (shared === undefined) {
      throw new ImportFileError(
        `the Excel workbook is damaged: row ${this.rowNumber}, column ${column} refers to a shared string it lacks`,
        this.rowNumber,
      );
    }
    if (shared instanceof TooLongString) {
      throw valueTooLong(this.rowNumber, column, shared.length, this.context.limits);
    }
    return shared;
  }

  private endRow(): void {
    if (this.overflowColumn > 0)
      throw tooManyColumns(this.rowNumber, this.overflowColumn, this.context.limits);
    if (this.cells.length > 0) this.rows.push({ row: this.rowNumber, cells: this.cells });
    else if (this.rowHasValue) {
      // Counted as one cell, so rows of empty values expand no further than any other cells.
      this.context.emitted.emit(this.rowNumber, 1, 0);
      this.rows.push({ row: this.rowNumber, cells: [''] });
    }
    this.cells = [];
  }

  private referencedColumn(reference: string): number {
    const column = columnOfReference(reference);
    if (column === null)
      throw damaged(`row ${this.rowNumber} has a cell reference ${JSON.stringify(shown(reference, 20))}`);
    return column;
  }
}

/** The value of a non-negative integer attribute (0 counts as absent for row numbers). */
function positiveInteger(text: string | undefined): number | null {
  if (text === undefined || text === '') return null;
  const value = Number(text);
  return Number.isSafeInteger(value) && value > 0 ? value : null;
}
