/** One row of an imported file. */
export interface ImportRow {
  /** 1-based row number as a spreadsheet shows it (header = row 1). */
  row: number;
  /** The cells read, left to right; a short row is not padded. */
  cells: string[];
}

/**
 * A bound that grows with the file: `perFileByte` for each byte of it, and never less than
 * `atLeast`. A small file can expand hugely (a zip of a few kilobytes unpacks to a gigabyte, one
 * long shared string fills millions of cells); what it may expand to is tied to what was uploaded.
 */
export interface FileBudget {
  perFileByte: number;
  atLeast: number;
}

/** What a reader refuses to hold, so a hostile file fails instead of exhausting memory. */
export interface ReaderLimits {
  /** The widest row accepted: a table has at most this many fields. */
  maxColumns: number;
  /** The longest cell value accepted, in UTF-16 code units (a JavaScript string's length). */
  maxCellLength: number;
  /** xlsx: total uncompressed bytes read from the zip, so a zip bomb stops early. */
  maxInflatedBytes: number;
  /** The cells a reader hands out, a gap before a cell included (what staging and the table get). */
  emittedCells: FileBudget;
  /** The characters of those cells. */
  emittedCharacters: FileBudget;
  /** xlsx: the shared strings held for the whole read (12 bytes each however short). */
  sharedStrings: FileBudget;
  /** xlsx: the characters of the shared strings held. */
  sharedStringCharacters: FileBudget;
}

const Mi = 1024 * 1024;

export const DEFAULT_READER_LIMITS: ReaderLimits = Object.freeze({
  maxColumns: 500,
  maxCellLength: 100_000,
  maxInflatedBytes: 1024 * Mi,
  // A CSV hands out at most one character and one cell per byte (plus one), and the floors are
  // above the largest CSV upload (50 MB): a CSV never meets them, nor a workbook holding what such
  // a CSV could. Honest workbooks measured 0.1-2.3 cells and 0.5-4 characters per byte of the
  // zip; rows widened by a cell in column 500 (40 cells) or one long text repeated in every row
  // (50 characters) pass while under the floors.
  emittedCells: Object.freeze({ perFileByte: 16, atLeast: 64 * Mi }),
  emittedCharacters: Object.freeze({ perFileByte: 16, atLeast: 64 * Mi }),
  // Held in memory all along (12 bytes a string, besides its text). Measured: 0.02-0.09 strings
  // and 0.3-0.9 characters per byte from writers that keep each text once, 0.2 strings per byte
  // from one that does not; the floors cost at most 12 MiB and some 48 MiB.
  sharedStrings: Object.freeze({ perFileByte: 0.25, atLeast: Mi }),
  sharedStringCharacters: Object.freeze({ perFileByte: 8, atLeast: 16 * Mi }),
});
