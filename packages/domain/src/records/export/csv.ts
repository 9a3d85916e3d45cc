/**
 * The CSV of an export: UTF-8, RFC 4180's quoting (a field quoted when it holds a quote, comma or
 * line break), lines ending in LF. PostgreSQL's COPY writes the rows from the cells of cells.ts;
 * the header, the field names, is written here by the same rules, a semicolon quoted too: readers
 * that tell the delimiter from the header (the import's) would take a one-column file named "a;b"
 * for two columns.
 */

/** Text a spreadsheet would run as a formula when a cell starts with it. */
const FORMULA_START = /^[-=+@\t\r]/;
const NEEDS_QUOTES = /[",;\r\n]/;

/** A text cell as a CSV field, a leading formula character guarded with `'` (as cells.ts does in SQL). */
export function csvText(text: string): string {
  const guarded = FORMULA_START.test(text);
  if (!guarded && !NEEDS_QUOTES.test(text)) return text;
  return `"${guarded ? "'" : ''}${text.replaceAll('"', '""')}"`;
}

/** The header line: the field names, in the order of the cells. */
export function csvHeader(fields: readonly { name: string }[]): string {
  return `${fields.map((field) => csvText(field.name)).join(',')}\n`;
}
