import type { ReaderLimits } from '../types';

const MS_PER_DAY = 86_400_000;
/** Serial day 25569 of Excel's 1900 date system is 1970-01-01. */
const UNIX_EPOCH_SERIAL = 25_569;
/** The 1904 date system counts from 1904-01-01, 1462 days after the 1900 system's day 0. */
const DATE_1904_OFFSET = 1_462;
/** toISOString writes years 0 to 9999 as four digits; others do not fit YYYY-MM-DD. */
const FIRST_DATE_MS = Date.parse('0000-01-01T00:00:00.000Z');
const LAST_DATE_MS = Date.parse('9999-12-31T23:59:59.999Z');
/** An _xHHHH_ escape stands for one character, so raw text may be up to 7 times a value's length. */
const ESCAPE_LENGTH = 7;
/** OOXML writes characters XML cannot hold (CR, other controls) as _xHHHH_; _x005F_ is the underscore. */
const ESCAPE = /_x([0-9A-Fa-f]{4})_/g;
const HAS_ZONE = /(?:Z|[+-]\d\d:?\d\d)$/i;

/** How much raw text of one value is worth keeping: past this it is over maxCellLength even unescaped. */
export function rawTextLimit(limits: ReaderLimits): number {
  return limits.maxCellLength * ESCAPE_LENGTH;
}

export function decodeEscapes(text: string): string {
  return text.includes('_x')
    ? text.replace(ESCAPE, (_escape, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    : text;
}

/**
 * A number as JavaScript writes it, rounded to the 15 significant digits Excel shows: its files
 * hold 17, so =0.1+0.2 is stored as 0.30000000000000004 and shown (and read here) as 0.3.
 */
export function numberText(raw: string): string {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value)) return raw.trim();
  // Up to 15 characters hold at most 15 digits: nothing to round (toPrecision is slow).
  return raw.length <= 15 ? String(value) : String(Number(value.toPrecision(15)));
}

/**
 * A date-formatted cell's serial day number as YYYY-MM-DD, or an ISO UTC timestamp if it has a
 * time or its format shows one (`withTime`: midnight in a date-time column is a date-time).
 */
export function serialDateText(raw: string, date1904: boolean, withTime = false): string {
  const serial = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(serial) || serial < 0) return numberText(raw);
  // The 1900 system counts a 1900-02-29 that never was (day 60), so days 1 to 59 are one day
  // later than the arithmetic; time-only values (below 1) keep the usual 1899-12-30 origin.
  const days = date1904 ? serial + DATE_1904_OFFSET : serial >= 1 && serial < 60 ? serial + 1 : serial;
  return dateText(Math.round((days - UNIX_EPOCH_SERIAL) * MS_PER_DAY), withTime) ?? numberText(raw);
}

/** A cell of type "d", which holds an ISO 8601 date; one without a zone is taken as UTC. */
export function isoDateText(raw: string): string {
  const text = raw.trim();
  const zoned = !text.includes('T') || HAS_ZONE.test(text) ? text : `${text}Z`;
  return dateText(Date.parse(zoned)) ?? text;
}

export function booleanText(raw: string): string {
  const text = raw.trim();
  return text === '1' || text.toLowerCase() === 'true' ? 'true' : 'false';
}

function dateText(ms: number, withTime = false): string | null {
  if (!Number.isFinite(ms) || ms < FIRST_DATE_MS || ms > LAST_DATE_MS) return null;
  return isoText(ms, withTime);
}

const pad = (value: number, width: number) => String(value).padStart(width, '0');

/**
 * `new Date(ms).toISOString()` for whole milliseconds in years 0 to 9999, the day alone when the
 * time is midnight unless `withTime`: arithmetic on the proleptic Gregorian calendar (days to civil date, after
 * Howard Hinnant's algorithm), a few times faster than a Date per cell of a big sheet.
 */
export function isoText(ms: number, withTime = false): string {
  const days = Math.floor(ms / MS_PER_DAY);
  const time = ms - days * MS_PER_DAY;
  // Days since 0000-03-01, counted in 400-year eras of 146,097 days.
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const date = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
  if (time === 0 && !withTime) return date;
  const seconds = Math.floor(time / 1000);
  return `${date}T${pad(Math.floor(seconds / 3600), 2)}:${pad(Math.floor(seconds / 60) % 60, 2)}:${pad(seconds % 60, 2)}.${pad(time % 1000, 3)}Z`;
}
