import type { FilterOperator } from '@recordbase/contracts/filters';
import { finiteOrFail, rawKey } from './column-sql';
import { epochMicros } from './dates';
import { needDay } from './operands';
import { comparisonOperators, equalityOperators, isNotNull, isNull } from './operators';
import { asStringOrNull, notSupported } from './oracle';
import { dateFromText } from './text-cells';
import type { FieldTypeModule } from './types';

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** A real calendar date between years 1 and 9999 (PostgreSQL would refuse 2024-02-30 with a 500). */
function isRealDate(text: string): boolean {
  const match = DATE_PATTERN.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  // The proleptic Gregorian calendar, as PostgreSQL's: arithmetic, not a Date per value.
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const daysInMonth = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  return day <= daysInMonth;
}

/** The oracle's reading of an operand as a day: a date-time operand counts as its UTC day. */
function operandDay(operand: unknown): string {
  const text = operand as string;
  if (DAY_ONLY.test(text)) return text;
  return new Date(Number(epochMicros(text) / 1000n)).toISOString().slice(0, 10);
}

/** Dates in the oracle ('YYYY-MM-DD', which compare correctly as strings). */
function matchDate(day: string | null, operator: FilterOperator, operand: unknown): boolean {
  if (operator === 'is_empty') return day === null;
  if (operator === 'is_not_empty') return day !== null;
  if (operator === 'does_not_equal') return !matchDate(day, 'equals', operand);
  if (day === null) return false;
  const other = operandDay(operand);
  switch (operator) {
    case 'equals':
      return day === other;
    case 'greater_than':
      return day > other;
    case 'greater_than_or_equal_to':
      return day >= other;
    case 'less_than':
      return day < other;
    case 'less_than_or_equal_to':
      return day <= other;
    default:
      throw notSupported(operator, 'dates');
  }
}

/** A calendar day without a time or zone. */
export const date: FieldTypeModule<'date'> = {
  type: 'date',
  formula: 'date',
  column: { sqlType: 'date' },
  prepared: 'columns',
  fromText: dateFromText,
  coerce: (value, { raw, fail }) => {
    if (value !== null && !isRealDate(value as string)) fail(`${JSON.stringify(raw)} is not a real date`);
    return value;
  },
  json: ({ column }) => `COALESCE(to_json(to_char(${column}, 'YYYY-MM-DD'))::text, 'null')`,
  filters: {
    ...equalityOperators(needDay, 'date'),
    ...comparisonOperators(needDay, 'date'),
    is_empty: isNull,
    is_not_empty: isNotNull,
  },
  sort: ({ column }) => ({ expression: column, kind: 'date' }),
  match: { key: rawKey('date_ops') },
  readIndex: { order: (column) => column, filter: 'order' },
  readings: (column) => ({ text: `to_char(${column}, 'YYYY-MM-DD')`, day: column }),
  convertFrom: (from) => {
    if (from.textColumn !== undefined) {
      return finiteOrFail(`NULLIF(btrim(${from.textColumn}), '')::date`, from.textColumn, 'date');
    }
    if (from.instant !== undefined) return `(${from.instant} AT TIME ZONE 'UTC')::date`;
    return null;
  },
  oracle: {
    matches: (value, operator, operand) => matchDate(asStringOrNull(value), operator, operand),
    // 'YYYY-MM-DD' sorts as a string.
    sortKey: asStringOrNull,
  },
};
