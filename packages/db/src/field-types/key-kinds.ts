import { UUID_PATTERN } from '@recordbase/contracts/common';
import { parseDateTimeOperand } from './dates';

/**
 * How a sort key's value travels in a list cursor: the SQL type it is compared as, how
 * PostgreSQL writes it into the cursor and how a value read back from one is checked. Field
 * types name the kind of their sort (FieldTypeModule.sort); system columns use the same kinds.
 */

export type KeyKind =
  | 'text'
  | 'textArray'
  | 'float'
  | 'smallint'
  | 'integer'
  | 'bigint'
  | 'date'
  | 'timestamp'
  | 'boolean'
  | 'uuid';

/** A key value as read from a cursor and checked against its kind. */
export type KeyValue = string | string[] | null;

export interface KeyKindSpec {
  sqlType: string;
  /** The value as JSON: exact, and independent of the session's DateStyle and TimeZone. */
  json(expression: string): string;
  /** A non-null value from a cursor in the form its SQL parameter takes, or undefined when invalid. */
  read(value: unknown): KeyValue | undefined;
}

const NUL = '\u0000';
const FLOAT_PATTERN = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const INTEGER_PATTERN = /^-?\d{1,19}$/;
const ISO_UTC_MICROS = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

/** A double's text is its shortest exact form; jsonb numbers would round it to 15 digits. */
const asText = (expression: string) => `to_jsonb((${expression})::text)`;

/** Every kind but textArray travels as a string. */
const fromString =
  (read: (value: string) => string | undefined) =>
  (value: unknown): KeyValue | undefined =>
    typeof value === 'string' ? read(value) : undefined;

function integer(sqlType: string, min: bigint, max: bigint): KeyKindSpec {
  return {
    sqlType,
    json: asText,
    read: fromString((value) => {
      if (!INTEGER_PATTERN.test(value)) return undefined;
      const number = BigInt(value);
      return number >= min && number <= max ? value : undefined;
    }),
  };
}

/** A double as PostgreSQL reads it: finite, not out of range (which includes underflow to 0). */
function readFloat(value: string): string | undefined {
  if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') return value;
  if (!FLOAT_PATTERN.test(value)) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number)) return undefined;
  const mantissa = value.split(/[eE]/)[0]!;
  return number === 0 && /[1-9]/.test(mantissa) ? undefined : value;
}

export const keyKinds: Record<KeyKind, KeyKindSpec> = {
  text: {
    sqlType: 'text',
    json: (expression) => `to_jsonb(${expression})`,
    read: fromString((value) => (value.includes(NUL) ? undefined : value)),
  },
  textArray: {
    sqlType: 'text[]',
    json: (expression) => `to_jsonb(${expression})`,
    read: (value) =>
      Array.isArray(value) && value.every((item) => typeof item === 'string' && !item.includes(NUL))
        ? (value as string[])
        : undefined,
  },
  float: { sqlType: 'double precision', json: asText, read: fromString(readFloat) },
  smallint: integer('smallint', -32768n, 32767n),
  integer: integer('integer', -2147483648n, 2147483647n),
  bigint: integer('bigint', -9223372036854775808n, 9223372036854775807n),
  date: {
    sqlType: 'date',
    json: (expression) => `to_jsonb(to_char(${expression}, 'YYYY-MM-DD'))`,
    read: fromString((value) => {
      const parsed = parseDateTimeOperand(value);
      return parsed?.kind === 'day' ? parsed.day : undefined;
    }),
  },
  timestamp: {
    sqlType: 'timestamptz',
    json: (expression) => `to_jsonb(to_char(${expression} AT TIME ZONE 'UTC', ${ISO_UTC_MICROS}))`,
    read: fromString((value) => {
      const parsed = parseDateTimeOperand(value);
      return parsed?.kind === 'instant' ? parsed.utc : undefined;
    }),
  },
  boolean: {
    sqlType: 'boolean',
    json: asText,
    read: fromString((value) => (value === 'true' || value === 'false' ? value : undefined)),
  },
  uuid: {
    sqlType: 'uuid',
    json: asText,
    read: fromString((value) => (UUID_PATTERN.test(value) ? value : undefined)),
  },
};
