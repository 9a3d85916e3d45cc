/**
 * Dates and date-times as operands and oracle values, shared by the date and datetime types,
 * the system fields createdAt and updatedAt, and cursor keys.
 */

const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
/** The date-time form record values take: seconds required, fraction optional, Z or ±HH:MM. */
const DATE_TIME_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:(Z)|([+-])(\d{2}):(\d{2}))$/;

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** A calendar date PostgreSQL can hold and a user can mean: years 1 to 9999. */
function isValidDay(year: number, month: number, day: number): boolean {
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

const pad = (value: number, width: number) => String(value).padStart(width, '0');

export type DateTimeOperand = { kind: 'day'; day: string } | { kind: 'instant'; utc: string };

/**
 * 'YYYY-MM-DD' as a day, or an ISO 8601 date-time with offset as an instant, written back as a
 * canonical UTC string with microseconds (PostgreSQL's precision; further digits are dropped).
 * Null when the text is neither or names no real date.
 */
export function parseDateTimeOperand(text: string): DateTimeOperand | null {
  const dayMatch = DAY_PATTERN.exec(text);
  if (dayMatch) {
    const [year, month, day] = dayMatch.slice(1, 4).map(Number) as [number, number, number];
    return isValidDay(year, month, day) ? { kind: 'day', day: text } : null;
  }
  const match = DATE_TIME_PATTERN.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as number[] as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = (match[7] ?? '').padEnd(6, '0').slice(0, 6);
  const zulu = match[8] !== undefined;
  const offsetHours = zulu ? 0 : Number(match[10]);
  const offsetMinutes = zulu ? 0 : Number(match[11]);
  if (!isValidDay(year, month, day) || hour > 23 || minute > 59 || second > 59) return null;
  if (offsetHours > 23 || offsetMinutes > 59) return null;

  // setUTCFullYear, unlike Date.UTC, does not read years 0 to 99 as 1900 to 1999.
  const instant = new Date(0);
  instant.setUTCFullYear(year, month - 1, day);
  instant.setUTCHours(hour, minute, second, Number(fraction.slice(0, 3)));
  const offsetSign = match[9] === '-' ? -1 : 1;
  instant.setTime(instant.getTime() - offsetSign * (offsetHours * 60 + offsetMinutes) * 60_000);
  const utcYear = instant.getUTCFullYear();
  if (utcYear < 1 || utcYear > 9999) return null;
  const utc =
    `${pad(utcYear, 4)}-${pad(instant.getUTCMonth() + 1, 2)}-${pad(instant.getUTCDate(), 2)}` +
    `T${pad(instant.getUTCHours(), 2)}:${pad(instant.getUTCMinutes(), 2)}:${pad(instant.getUTCSeconds(), 2)}` +
    `.${fraction}Z`;
  return { kind: 'instant', utc };
}

/**
 * An ISO 8601 date-time with Z or ±HH:MM as microseconds since the epoch (the oracle's instants).
 * Date.parse reads the whole seconds and the offset; the fraction is added digit by digit
 * (beyond six it is dropped).
 */
export function epochMicros(isoDateTime: string): bigint {
  const parts = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(isoDateTime);
  if (parts === null) throw new Error(`not an ISO 8601 date-time: ${isoDateTime}`);
  const wholeSecondsMillis = Date.parse(`${parts[1]}${parts[3]}`);
  if (Number.isNaN(wholeSecondsMillis)) throw new Error(`not a valid date-time: ${isoDateTime}`);
  const fractionMicros = (parts[2] ?? '').padEnd(6, '0').slice(0, 6);
  return BigInt(wholeSecondsMillis) * 1000n + BigInt(fractionMicros);
}
