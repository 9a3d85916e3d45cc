/** One row of an imported file. */
export interface ImportRow {
  /** 1-based row number as a spreadsheet shows it (header = row 1). */
  row: number;
  /** The cells read, left to right; a short row is not padded. */
  cells: string[];
}

/** What a reader refuses to hold, so a hostile file fails instead of exhausting memory. */
export interface ReaderLimits {
  /** The widest row accepted: a table has at most this many fields. */
  maxColumns: number;
  /** The longest cell value accepted, in UTF-16 code units (a JavaScript string's length). */
  maxCellLength: number;
  /** xlsx: total uncompressed bytes read from the zip, so a zip bomb stops early. */
  maxInflatedBytes: number;
}

export const DEFAULT_READER_LIMITS: ReaderLimits = Object.freeze({
  maxColumns: 500,
  maxCellLength: 100_000,
  maxInflatedBytes: 1024 * 1024 * 1024,
});
