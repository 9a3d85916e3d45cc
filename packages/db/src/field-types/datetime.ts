import type { FilterOperator } from '@recordbase/contracts/filters';
import { finiteOrFail, ISO_UTC_MILLIS, rawKey } from './column-sql';
import { epochMicros } from './dates';
import { needDateTimeOrDay } from './operands';
import { byOperator, comparisonSql, isComparison } from './operators';
import { asStringOrNull, notSupported } from './oracle';
import { dateTimeFromText } from './text-cells';
import type { ConditionContext, FieldTypeModule } from './types';

/**
 * An instant, stored as timestamptz and answered in UTC. Its conditions and oracle serve the
 * system fields createdAt and updatedAt as well.
 */

/** A date-time condition on any timestamptz column; the operand is an instant or a whole UTC day. */
export function dateTimeCondition(column: string, ctx: ConditionContext): string {
  const { operator, params } = ctx;
  if (operator === 'is_empty') return `${column} IS NULL`;
  if (operator === 'is_not_empty') return `${column} IS NOT NULL`;
  const operand = needDateTimeOrDay(ctx);

  if (operand.kind === 'instant') {
    const at = `${params.add(operand.utc)}::timestamptz`;
    if (isComparison(operator)) return `${column} ${comparisonSql[operator]} ${at}`;
    if (operator === 'equals') return `${column} = ${at}`;
    if (operator === 'does_not_equal') return `${column} IS DISTINCT FROM ${at}`;
    throw noSql(operator);
  }

  // A date-only operand stands for the whole UTC day [start, end).
  const day = params.add(operand.day);
  const start = `(${day}::date::timestamp AT TIME ZONE 'UTC')`;
  const end = `((${day}::date + 1)::timestamp AT TIME ZONE 'UTC')`;
  switch (operator) {
    case 'equals':
      return `(${column} >= ${start} AND ${column} < ${end})`;
    case 'does_not_equal':
      return `(${column} IS NULL OR ${column} < ${start} OR ${column} >= ${end})`;
    case 'greater_than':
      return `${column} >= ${end}`;
    case 'greater_than_or_equal_to':
      return `${column} >= ${start}`;
    case 'less_than':
      return `${column} < ${start}`;
    case 'less_than_or_equal_to':
      return `${column} < ${end}`;
    default:
      throw noSql(operator);
  }
}

/** An operator the support table allows but this condition does not handle: a bug. */
const noSql = (operator: FilterOperator) => new Error(`no SQL for "${operator}" on a date-time`);

const DAY_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const MICROS_PER_DAY = 86_400_000_000n;

/**
 * Date-times in the oracle. Every operand is a span [from, to) of microseconds: a date-only
 * operand is its whole UTC day, a date-time operand the single microsecond it names. Then
 * "equals" is "within the span", "greater than" is "at or after its end", "less than" is "before
 * its start".
 */
export function matchDateTime(value: string | null, operator: FilterOperator, operand: unknown): boolean {
  if (operator === 'is_empty') return value === null;
  if (operator === 'is_not_empty') return value !== null;
  if (operator === 'does_not_equal') return !matchDateTime(value, 'equals', operand);
  if (value === null) return false;
  const at = epochMicros(value);
  const text = operand as string;
  const from = DAY_ONLY.test(text) ? epochMicros(`${text}T00:00:00Z`) : epochMicros(text);
  const to = DAY_ONLY.test(text) ? from + MICROS_PER_DAY : from + 1n;
  switch (operator) {
    case 'equals':
      return from <= at && at < to;
    case 'greater_than':
      return at >= to;
    case 'greater_than_or_equal_to':
      return at >= from;
    case 'less_than':
      return at < from;
    case 'less_than_or_equal_to':
      return at < to;
    default:
      throw notSupported(operator, 'date-times');
  }
}

/** ISO 8601 with an offset, normalised to UTC with millisecond precision. */
/** A UTC instant whose fields are in range on any month (day 28 at most): already ISO but for ms. */
const PLAIN_UTC = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,3}))?Z$/;

function normaliseDateTime(text: string): string | null {
  // Most imported and written instants: their ISO form without a Date (half of an import's reading).
  const plain = PLAIN_UTC.exec(text);
  if (plain !== null) {
    const [, year = '', month = '', day = '', hour = '', minute = '', second = '', millis = ''] = plain;
    if (
      year !== '0000' &&
      month >= '01' &&
      month <= '12' &&
      day >= '01' &&
      day <= '28' &&
      hour <= '23' &&
      minute <= '59' &&
      second <= '59'
    ) {
      return `${text.slice(0, 19)}.${millis.padEnd(3, '0')}Z`;
    }
  }
  const time = Date.parse(text);
  if (Number.isNaN(time)) return null;
  const iso = new Date(time).toISOString();
  return /^\d{4}-/.test(iso) && !iso.startsWith('0000') ? iso : null;
}

export const datetime: FieldTypeModule<'datetime'> = {
  type: 'datetime',
  formula: 'datetime',
  column: { sqlType: 'timestamptz' },
  prepared: 'columns',
  fromText: dateTimeFromText,
  coerce: (value, { raw, fail }) => {
    if (value === null) return null;
    const iso = normaliseDateTime(value as string);
    return iso ?? fail(`${JSON.stringify(raw)} is not a date-time between years 1 and 9999`);
  },
  json: ({ column }) =>
    `COALESCE(to_json(to_char(${column} AT TIME ZONE 'UTC', ${ISO_UTC_MILLIS}))::text, 'null')`,
  filters: byOperator(
    [
      'equals',
      'does_not_equal',
      'is_empty',
      'is_not_empty',
      'greater_than',
      'greater_than_or_equal_to',
      'less_than',
      'less_than_or_equal_to',
    ],
    ({ column }, ctx) => dateTimeCondition(column, ctx),
  ),
  sort: ({ column }) => ({ expression: column, kind: 'timestamp' }),
  match: { key: rawKey('timestamptz_ops') },
  readIndex: { order: (column) => column, filter: 'order' },
  readings: (column) => ({
    text: `to_char(${column} AT TIME ZONE 'UTC', ${ISO_UTC_MILLIS})`,
    instant: column,
  }),
  convertFrom: (from) => {
    if (from.textColumn !== undefined) {
      return finiteOrFail(
        `NULLIF(btrim(${from.textColumn}), '')::timestamptz`,
        from.textColumn,
        'timestamptz',
      );
    }
    if (from.day !== undefined) return `(${from.day}::timestamp AT TIME ZONE 'UTC')`;
    // The computed instants (created_time, last_modified_time) as written ones.
    if (from.instant !== undefined) return from.instant;
    return null;
  },
  oracle: {
    matches: (value, operator, operand) => matchDateTime(asStringOrNull(value), operator, operand),
    sortKey: (value) => (typeof value === 'string' ? epochMicros(value) : null),
  },
};
