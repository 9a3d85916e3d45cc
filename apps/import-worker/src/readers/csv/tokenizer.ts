import type { EmittedBudget } from '../file-budget';
import { ImportFileError, tooManyColumns, valueTooLong } from '../import-file-error';
import type { ImportRow, ReaderLimits } from '../types';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

// Where the tokenizer stands, kept between pieces of text.
/** Before the first character of a field. */
const FIELD_START = 0;
/** Inside a field without quotes. */
const UNQUOTED = 1;
/** Inside quotes. */
const QUOTED = 2;
/** The last piece ended on a quote inside quotes: a doubled quote or the closing one. */
const QUOTE_AT_END = 3;
/** After a closing quote: a delimiter or a line break must follow. */
const CLOSED = 4;

/**
 * RFC 4180 CSV, fed text in pieces of any size. Fields are split by the delimiter and records by
 * LF, CRLF or CR; a field in double quotes may hold delimiters, line breaks and doubled quotes.
 * Quoting is strict, as csv-parse's defaults are: a quote inside an unquoted field, text after a
 * closing quote, or a quote never closed fail with the line. The limits are checked as the text
 * goes by: past them a cell's text or a row's extra fields are counted for the message but never
 * held, so a 10 MB cell or a million-column row costs no memory.
 *
 * Written by hand rather than with csv-parse: csv-parse walks byte by byte through several calls
 * each and parses about 20 MB/s, slower than PostgreSQL's COPY of the same file; this scans with
 * tight loops and slices each cell out of the decoded text once.
 */
export class CsvTokenizer {
  /** The physical line (1-based) at the read position, for messages. Line breaks inside quotes count as LF only. */
  line = 1;
  private row = 1;
  private cells: string[] = [];
  /** Fields of the current record so far, including those past maxColumns. */
  private columns = 0;
  /** The characters of the current record's cells. */
  private characters = 0;
  private state = FIELD_START;
  /** The current field's text from earlier pieces (empty once it is known to be too long). */
  private partial = '';
  /** Its length, counted on past the limit for the message. */
  private partialLength = 0;
  private quoteLine = 0;
  /** The last piece ended with CR: an LF starting the next one belongs to the same line break. */
  private pendingLf = false;
  private readonly maxColumns: number;
  private readonly maxCellLength: number;

  constructor(
    private readonly delimiter: number,
    private readonly limits: ReaderLimits,
    private readonly budget: EmittedBudget,
  ) {
    this.maxColumns = limits.maxColumns;
    this.maxCellLength = limits.maxCellLength;
  }

  /** Reads `text`, appending each record it completes to `out`. */
  push(text: string, out: ImportRow[]): void {
    const length = text.length;
    const delimiter = this.delimiter;
    let i = 0;
    if (this.pendingLf && length > 0) {
      this.pendingLf = false;
      if (text.charCodeAt(0) === LF) i = 1;
    }
    while (i < length) {
      const state = this.state;
      if (state === FIELD_START || state === UNQUOTED) {
        if (state === FIELD_START && text.charCodeAt(i) === QUOTE) {
          this.state = QUOTED;
          this.quoteLine = this.line;
          i += 1;
          continue;
        }
        const from = i;
        for (; i < length; i += 1) {
          const c = text.charCodeAt(i);
          // Most characters are above the quote; of those only the delimiter (',' or ';') stops.
          if (c > QUOTE) {
            if (c === delimiter) break;
          } else if (c === delimiter || c === LF || c === CR || c === QUOTE) break;
        }
        if (i === length) {
          this.keep(text, from, length);
          this.state = UNQUOTED;
          return;
        }
        const stop = text.charCodeAt(i);
        if (stop === QUOTE) {
          throw this.error('a quote inside an unquoted value; quote the whole value and double its quotes');
        }
        this.endField(text, from, i);
        this.state = FIELD_START;
        i = stop === delimiter ? i + 1 : this.endLine(text, i, out);
      } else if (state === QUOTED) {
        let from = i;
        let lines = 0;
        for (;;) {
          for (; i < length; i += 1) {
            const c = text.charCodeAt(i);
            if (c === QUOTE) break;
            if (c === LF) lines += 1;
          }
          if (i === length) {
            this.keep(text, from, length);
            this.line += lines;
            return;
          }
          this.keep(text, from, i);
          if (i + 1 === length) {
            this.state = QUOTE_AT_END;
            this.line += lines;
            return;
          }
          if (text.charCodeAt(i + 1) !== QUOTE) break;
          // A doubled quote: the second one starts the next run of the value.
          from = i + 1;
          i += 2;
        }
        this.line += lines;
        this.state = CLOSED;
        i += 1;
      } else if (state === QUOTE_AT_END) {
        if (text.charCodeAt(i) === QUOTE) {
          this.keep(text, i, i + 1);
          this.state = QUOTED;
          i += 1;
        } else this.state = CLOSED;
      } else {
        const c = text.charCodeAt(i);
        if (c !== delimiter && c !== LF && c !== CR) throw this.error('text after a closing quote');
        this.endField(text, i, i);
        this.state = FIELD_START;
        i = c === delimiter ? i + 1 : this.endLine(text, i, out);
      }
    }
  }

  /** The end of the text: completes the last record, if any. */
  end(out: ImportRow[]): void {
    if (this.state === QUOTED) {
      throw new ImportFileError(`Line ${this.quoteLine}: unclosed quote`, this.row);
    }
    // At the start of a field with no field before it, the text ended with a line break (or is empty).
    if (this.state === FIELD_START && this.columns === 0) return;
    this.endField('', 0, 0);
    this.endRecord(out);
  }

  /** Adds text of the current field; past a limit it is only counted. */
  private keep(text: string, from: number, to: number): void {
    if (from === to) return;
    this.partialLength += to - from;
    if (this.columns >= this.maxColumns || this.partialLength > this.maxCellLength) this.partial = '';
    else this.partial += text.slice(from, to);
  }

  /** Ends the current field with the text from `from` to `to`. */
  private endField(text: string, from: number, to: number): void {
    this.columns += 1;
    const column = this.columns;
    if (column <= this.maxColumns) {
      const length = this.partialLength + (to - from);
      if (length > this.maxCellLength) throw valueTooLong(this.row, column, length, this.limits);
      this.characters += length;
      this.cells.push(this.partialLength === 0 ? text.slice(from, to) : this.partial + text.slice(from, to));
    }
    this.partial = '';
    this.partialLength = 0;
  }

  private endRecord(out: ImportRow[]): void {
    if (this.columns > this.maxColumns) throw tooManyColumns(this.row, this.columns, this.limits);
    this.budget.emit(this.row, this.cells.length, this.characters);
    out.push({ row: this.row, cells: this.cells });
    this.row += 1;
    this.cells = [];
    this.columns = 0;
    this.characters = 0;
  }

  /** Ends the record at the line break at `i`; returns the index after the break. */
  private endLine(text: string, i: number, out: ImportRow[]): number {
    this.endRecord(out);
    this.line += 1;
    if (text.charCodeAt(i) !== CR) return i + 1;
    if (i + 1 === text.length) {
      this.pendingLf = true;
      return i + 1;
    }
    return text.charCodeAt(i + 1) === LF ? i + 2 : i + 1;
  }

  private error(problem: string): ImportFileError {
    return new ImportFileError(`Line ${this.line}: ${problem}`, this.row);
  }
}
