/** Built-in number formats that show a date or time (ECMA-376 §18.8.30, with the East Asian ones). */
const BUILT_IN_DATE_FORMATS = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54,
  55, 56, 57, 58,
]);

/** The built-in date formats that show a time of day (or an elapsed time). */
const BUILT_IN_TIME_FORMATS = new Set([18, 19, 20, 21, 22, 32, 33, 34, 35, 45, 46, 47, 55, 56]);

/**
 * What number format `id` (with its code, for a format the workbook defines) shows: a date alone,
 * a date with a time (so a cell at midnight still reads as a date-time), or no date (null).
 */
export function dateFormatOf(id: number, code: string | undefined): 'date' | 'datetime' | null {
  if (code === undefined) {
    if (!BUILT_IN_DATE_FORMATS.has(id)) return null;
    return BUILT_IN_TIME_FORMATS.has(id) ? 'datetime' : 'date';
  }
  if (!codeShows(code, 'dmyhsDMYHS')) return null;
  // m alone is a month; a time has hours or seconds.
  return codeShows(code, 'hsHS') ? 'datetime' : 'date';
}

/**
 * Whether a format code has one of `letters` (date and time parts) outside quoted text, escaped
 * characters and [colour]/[$-locale] brackets, or an elapsed-time bracket such as [h].
 */
function codeShows(code: string, letters: string): boolean {
  for (let i = 0; i < code.length; i += 1) {
    const c = code[i] as string;
    if (c === '"') {
      const end = code.indexOf('"', i + 1);
      if (end === -1) return false;
      i = end;
    } else if (c === '\\' || c === '_' || c === '*') {
      i += 1; // an escaped character, a space the width of the next one, or a fill character
    } else if (c === '[') {
      const end = code.indexOf(']', i + 1);
      if (end === -1) return false;
      if (isElapsedTime(code.slice(i + 1, end))) return true;
      i = end;
    } else if (letters.includes(c)) {
      return true;
    }
  }
  return false;
}

/** [h], [mm], [ss]: one of h, m, s repeated. */
function isElapsedTime(inside: string): boolean {
  const first = inside[0]?.toLowerCase();
  if (first !== 'h' && first !== 'm' && first !== 's') return false;
  for (const c of inside) if (c.toLowerCase() !== first) return false;
  return true;
}
