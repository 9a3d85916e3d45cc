/**
 * Imported text read as the values field types are written with (each module's `fromText`). The
 * forms are the plain ones spreadsheets and databases export; anything else is refused, never
 * guessed, so that type inference keeps text that only looks like a number as text.
 */

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

export function numberFromText(text: string): number | undefined {
  const trimmed = text.trim();
  if (!NUMBER.test(trimmed)) return undefined;
  const number = Number(trimmed);
  return Number.isFinite(number) ? number : undefined;
}

const TRUE_WORDS = new Set(['true', 'yes', 'y', '1', 'x', 'checked', '✓', '✔']);
const FALSE_WORDS = new Set(['false', 'no', 'n', '0', 'unchecked']);

export function booleanFromText(text: string): boolean | undefined {
  const word = text.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return undefined;
}

const DATE = /^\d{4}-\d\d-\d\d$/;

export function dateFromText(text: string): string | undefined {
  const trimmed = text.trim();
  return DATE.test(trimmed) ? trimmed : undefined;
}

/** A date and a time, `T` or a space between; without a zone it is UTC, without seconds :00. */
const DATE_TIME = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d)(:\d\d(?:\.\d{1,9})?)?(Z|[+-]\d\d(?::?\d\d)?)?$/i;

export function dateTimeFromText(text: string): string | undefined {
  const match = DATE_TIME.exec(text.trim());
  if (!match) return undefined;
  const [, day, minutes, seconds, zone] = match;
  return `${day}T${minutes}${seconds ?? ':00'}${zone?.toUpperCase() ?? 'Z'}`;
}

/** `a, b` as the list [a, b]. */
export function listFromText(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}
