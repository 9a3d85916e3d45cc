/**
 * Values in the text format of `COPY … FROM STDIN`: one line per row, columns separated by tabs,
 * NULL as \N, and backslash, tab, newline and carriage return escaped. Values are what the field
 * types' `coerce` returns: text, numbers, booleans, arrays of text, JSON objects.
 */

const NEEDS_ESCAPE = /[\\\t\n\r]/;
const ESCAPED = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function escapeCopy(text: string): string {
  return NEEDS_ESCAPE.test(text) ? text.replace(ESCAPED, (character) => ESCAPES[character] as string) : text;
}

/** An array of text as PostgreSQL's array input reads it: every element quoted. */
function arrayLiteral(items: readonly unknown[]): string {
  return `{${items.map((item) => (item === null ? 'NULL' : `"${String(item).replace(/["\\]/g, '\\$&')}"`)).join(',')}}`;
}

export function copyValue(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'string') return escapeCopy(value);
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (Array.isArray(value)) return escapeCopy(arrayLiteral(value));
  return escapeCopy(JSON.stringify(value));
}

/** One row of `COPY … FROM STDIN` (text format), its newline included. */
export function copyLine(values: readonly unknown[]): string {
  let line = '';
  for (let index = 0; index < values.length; index += 1) {
    if (index > 0) line += '\t';
    line += copyValue(values[index]);
  }
  return `${line}\n`;
}
