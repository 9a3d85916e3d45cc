import { type FormulaNode, type FormulaType, inferFormula, parseFormula } from '../../src/formula';

/**
 * The formula language evaluated in memory, record by record, straight from docs/formulas.md's
 * section "The semantics as built": the independent reference the SQL compiler is tested against.
 * It computes with JavaScript's own Number, String and Date and knows nothing of SQL.
 */

export interface OracleRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
  /** by field id, in API shape */
  values: Readonly<Record<string, unknown>>;
}

/** A node's static type: a FormulaType, or BLANK()'s own, which takes the type beside it. */
type Static = FormulaType | 'blank';

/**
 * A value of a known static type. text: a non-empty string or null (`""` is blank, as an empty
 * text field is); number: a finite double or null; checkbox: boolean or null; date and datetime:
 * milliseconds since the epoch (UTC) or null; array: its items (never null: blank is `[]`).
 */
type Value = string | number | boolean | readonly string[] | null;

// ---------------------------------------------------------------------------------------------
// Calendar and instants

const MS_OF = {
  millisecond: 1,
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 604_800_000,
} as const;

/** The instant of a UTC calendar time; setUTCFullYear, since Date.UTC reads years 0–99 as 19xx. */
function utc(year: number, month: number, day: number, hours = 0, minutes = 0, seconds = 0, ms = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hours, minutes, seconds, ms);
  return date.getTime();
}

const FIRST_INSTANT = utc(1, 1, 1);
const LAST_INSTANT = utc(10000, 1, 1) - 1;

/** A date or datetime result outside the years 1–9999 is blank. */
function inRange(instant: number): number | null {
  return Number.isFinite(instant) && instant >= FIRST_INSTANT && instant <= LAST_INSTANT ? instant : null;
}

const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

const msOfDay = (instant: number) => instant - Math.floor(instant / MS_OF.day) * MS_OF.day;

const dateText = (instant: number) => new Date(instant).toISOString().slice(0, 10);
const datetimeText = (instant: number) => new Date(instant).toISOString();

const MONTH_NAMES = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

function monthOfName(name: string): number | null {
  const lower = name.toLowerCase();
  const index = MONTH_NAMES.findIndex((full) => full === lower || full.slice(0, 3) === lower);
  return index < 0 ? null : index + 1;
}

const ISO_DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|([+-])(\d{2}):?(\d{2}))?)?$/;
const US_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4}|\d{2})(?: (\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;
const NAMED_DATE = /^(\d{1,2}) ([A-Za-z]+) (\d{4})(?: (\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;

/** Spaces, tabs and line breaks: what TRIM removes, and what surrounds a number or a date. */
const EDGE_SPACE = /^[ \t\n\r]+|[ \t\n\r]+$/g;
const trimSpace = (text: string) => text.replace(EDGE_SPACE, '');

/** Two-digit years 00–68 are 2000–2068, 69–99 are 1969–1999. */
const fullYear = (digits: string) => {
  const year = Number(digits);
  if (digits.length === 4) return year;
  return year <= 68 ? 2000 + year : 1900 + year;
};

/**
 * A calendar time checked field by field (February 30 or hour 24 is no time at all), as an
 * instant; `offsetMinutes` east of UTC is taken off.
 */
function calendarInstant(
  year: number,
  month: number,
  day: number,
  hours: number,
  minutes: number,
  seconds: number,
  ms: number,
  offsetMinutes: number,
): number | null {
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hours > 23 || minutes > 59 || seconds > 59) return null;
  return inRange(utc(year, month, day, hours, minutes, seconds, ms) - offsetMinutes * MS_OF.minute);
}

/** Text read as a date (docs/formulas.md, "Text as a date"), or null when it is none. */
function parseTextDate(raw: string): number | null {
  const text = trimSpace(raw);
  const iso = ISO_DATE.exec(text);
  if (iso) {
    const [, y, mo, d, h, mi, s, fraction, zone, sign, oh, om] = iso;
    let offset = 0;
    if (zone !== undefined && zone !== 'Z') {
      if (Number(oh) > 23 || Number(om) > 59) return null;
      offset = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
    }
    // Instants are whole milliseconds: finer digits are cut off, never rounded up.
    const ms = fraction === undefined ? 0 : Number(fraction.padEnd(3, '0').slice(0, 3));
    return calendarInstant(
      Number(y),
      Number(mo),
      Number(d),
      Number(h ?? 0),
      Number(mi ?? 0),
      Number(s ?? 0),
      ms,
      offset,
    );
  }
  const us = US_DATE.exec(text);
  if (us) {
    const [, mo, d, y, h, mi, s] = us;
    return calendarInstant(
      fullYear(y!),
      Number(mo),
      Number(d),
      Number(h ?? 0),
      Number(mi ?? 0),
      Number(s ?? 0),
      0,
      0,
    );
  }
  const named = NAMED_DATE.exec(text);
  if (named) {
    const [, d, name, y, h, mi, s] = named;
    const month = monthOfName(name!);
    if (month === null) return null;
    return calendarInstant(
      Number(y),
      month,
      Number(d),
      Number(h ?? 0),
      Number(mi ?? 0),
      Number(s ?? 0),
      0,
      0,
    );
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Numbers and text

/** Every non-finite number is blank, at the operation that made it. */
const finite = (n: number): number | null => (Number.isFinite(n) ? n : null);

/** A multiple rounded to 15 significant digits, as a spreadsheet shows it; the largest doubles as they are. */
const spreadsheetDigits = (n: number) =>
  !Number.isFinite(n) || Math.abs(n) > 1.7976931348623e308 ? n : Number(n.toPrecision(15));

/** An exact power of ten, 1e0…1e22 (all exactly representable), without Math.pow's rounding. */
const pow10 = (k: number) => Number(`1e${k}`);

const NUMBER_TEXT = /^[+-]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?%?$/;

/** VALUE's reading of text, or null when it is no number. */
function numberOfText(raw: string): number | null {
  const text = trimSpace(raw).replace(/[$€£¥,]/g, '');
  if (!NUMBER_TEXT.test(text)) return null;
  const percent = text.endsWith('%');
  const n = Number(percent ? text.slice(0, -1) : text);
  return finite(percent ? n / 100 : n);
}

/** Code points, as positions and lengths count them. */
const codePoints = (text: string) => Array.from(text);

/** Comparison by Unicode code point (UTF-16 order differs for characters past U+FFFF). */
function compareCodePoints(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    i += x > 0xffff ? 2 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** An empty text is blank. */
const textOrBlank = (text: string): string | null => (text === '' ? null : text);

// ---------------------------------------------------------------------------------------------
// Conversions between static types

function toNumber(value: Value, from: Static): number | null {
  if (value === null) return null;
  switch (from) {
    case 'number':
      return value as number;
    case 'checkbox':
      return value ? 1 : 0;
    case 'text':
      return numberOfText(value as string);
    default:
      return null;
  }
}

/** The text of a value; `""` for blank. */
function toText(value: Value, from: Static): string {
  if (value === null) return '';
  switch (from) {
    case 'text':
      return value as string;
    case 'number':
      // String() already writes -0 as "0".
      return String(value);
    case 'checkbox':
      return value ? '1' : '0';
    case 'date':
      return dateText(value as number);
    case 'datetime':
      return datetimeText(value as number);
    case 'array':
      return (value as readonly string[]).join(', ');
    case 'blank':
      return '';
  }
}

function truthy(value: Value, from: Static): boolean {
  if (value === null) return false;
  switch (from) {
    case 'number':
      return value !== 0;
    case 'text':
      return value !== '';
    case 'checkbox':
      return value === true;
    case 'date':
    case 'datetime':
      return true;
    case 'array':
      return (value as readonly string[]).length > 0;
    case 'blank':
      return false;
  }
}

function toInstant(value: Value, from: Static): number | null {
  if (value === null) return null;
  if (from === 'date' || from === 'datetime') return value as number;
  if (from === 'text') return parseTextDate(value as string);
  return null;
}

function toArray(value: Value, from: Static): readonly string[] {
  if (from === 'array') return (value as readonly string[] | null) ?? [];
  if (value === null || from === 'blank') return [];
  return [toText(value, from)];
}

/** A value of static type `from` where `to` is wanted. */
function convert(value: Value, from: Static, to: Static): Value {
  switch (to) {
    case 'blank':
      return null;
    case 'number':
      return toNumber(value, from);
    case 'text':
      return textOrBlank(toText(value, from));
    case 'checkbox':
      // BLANK() where a checkbox is wanted stays blank (IF(c, TRUE()) & "" is "" when c is false).
      return from === 'checkbox' || from === 'blank' ? value : truthy(value, from);
    case 'date':
    case 'datetime':
      return toInstant(value, from);
    case 'array':
      return toArray(value, from);
  }
}

// ---------------------------------------------------------------------------------------------
// Comparison

type Comparison = '=' | '!=' | '<' | '>' | '<=' | '>=';

function order(operator: Comparison, sign: number): boolean {
  switch (operator) {
    case '=':
      return sign === 0;
    case '!=':
      return sign !== 0;
    case '<':
      return sign < 0;
    case '>':
      return sign > 0;
    case '<=':
      return sign <= 0;
    case '>=':
      return sign >= 0;
  }
}

const numeric = (type: Static) => type === 'number' || type === 'checkbox';
const temporal = (type: Static) => type === 'date' || type === 'datetime';

/** `left operator right` by the operands' static types (the section's "Operators"). */
function compare(
  operator: Comparison,
  left: Value,
  leftType: Static,
  right: Value,
  rightType: Static,
): boolean {
  if (operator === '!=') return !compare('=', left, leftType, right, rightType);
  const bothBlank = leftType === 'blank' && rightType === 'blank';
  if (
    !bothBlank &&
    (numeric(leftType) || leftType === 'blank') &&
    (numeric(rightType) || rightType === 'blank')
  ) {
    const a = toNumber(left, leftType) ?? 0;
    const b = toNumber(right, rightType) ?? 0;
    return order(operator, a === b ? 0 : a < b ? -1 : 1);
  }
  const asInstants =
    (!bothBlank &&
      (temporal(leftType) || leftType === 'blank') &&
      (temporal(rightType) || rightType === 'blank')) ||
    (temporal(leftType) && rightType === 'text') ||
    (leftType === 'text' && temporal(rightType));
  if (asInstants) {
    const a = toInstant(left, leftType);
    const b = toInstant(right, rightType);
    if (a === null || b === null) return operator === '=' && a === null && b === null;
    return order(operator, a === b ? 0 : a < b ? -1 : 1);
  }
  return order(operator, compareCodePoints(toText(left, leftType), toText(right, rightType)));
}

// ---------------------------------------------------------------------------------------------
// Static types, as infer.ts gives them, for every node

/** IF's branches and SWITCH's results together (infer.ts's unify). */
function unify(a: Static, b: Static): Static {
  if (a === 'blank') return b;
  if (b === 'blank' || a === b) return a;
  if (temporal(a) && temporal(b)) return 'datetime';
  return 'text';
}

const RESULT_TYPES = {
  BLANK: 'blank',
  ...Object.fromEntries(
    ['AND', 'OR', 'NOT', 'XOR', 'TRUE', 'FALSE', 'IS_BEFORE', 'IS_AFTER'].map((n) => [n, 'checkbox']),
  ),
  ...Object.fromEntries(
    [
      'ABS',
      'ROUND',
      'ROUNDUP',
      'ROUNDDOWN',
      'FLOOR',
      'CEILING',
      'INT',
      'MOD',
      'POWER',
      'SQRT',
      'EXP',
      'LOG',
      'MIN',
      'MAX',
      'SUM',
      'AVERAGE',
      'VALUE',
      'LEN',
      'FIND',
      'SEARCH',
      'YEAR',
      'MONTH',
      'DAY',
      'HOUR',
      'MINUTE',
      'SECOND',
      'WEEKDAY',
      'DATETIME_DIFF',
    ].map((n) => [n, 'number']),
  ),
  ...Object.fromEntries(
    [
      'CONCATENATE',
      'LOWER',
      'UPPER',
      'TRIM',
      'LEFT',
      'RIGHT',
      'MID',
      'SUBSTITUTE',
      'REPLACE',
      'REPT',
      'T',
      'DATESTR',
      'RECORD_ID',
      'ARRAYJOIN',
    ].map((n) => [n, 'text']),
  ),
  TODAY: 'date',
  NOW: 'datetime',
  DATEADD: 'datetime',
  CREATED_TIME: 'datetime',
  LAST_MODIFIED_TIME: 'datetime',
  ARRAYUNIQUE: 'array',
  ARRAYCOMPACT: 'array',
} as Readonly<Record<string, Static>>;

/** The result argument indexes of SWITCH(expression, pattern, result, …, default?). */
function switchResultIndexes(count: number): number[] {
  const indexes: number[] = [];
  for (let i = 2; i < count; i += 2) indexes.push(i);
  if (count % 2 === 0) indexes.push(count - 1);
  return indexes;
}

/**
 * The static type of every node of `tree`; an Error for arithmetic on a date or datetime other
 * than date − date, which the section says is refused when a formula is saved.
 */
function staticTypes(
  tree: FormulaNode,
  fieldTypes: ReadonlyMap<string, FormulaType>,
): Map<FormulaNode, Static> {
  const types = new Map<FormulaNode, Static>();
  const refuse = (node: FormulaNode): never => {
    throw new Error(
      `at character ${node.at + 1}: arithmetic on a date is refused when a formula is saved (use DATEADD)`,
    );
  };
  const visit = (node: FormulaNode): Static => {
    let type: Static;
    switch (node.kind) {
      case 'number':
        type = 'number';
        break;
      case 'text':
        type = 'text';
        break;
      case 'field': {
        const fieldType = fieldTypes.get(node.name);
        if (fieldType === undefined) throw new Error(`unknown field {${node.name}}`);
        type = fieldType;
        break;
      }
      case 'negate':
        if (temporal(visit(node.operand))) refuse(node);
        type = 'number';
        break;
      case 'binary': {
        const left = visit(node.left);
        const right = visit(node.right);
        if ('+-*/'.includes(node.operator)) {
          const dateDifference = node.operator === '-' && temporal(left) && temporal(right);
          if (!dateDifference && (temporal(left) || temporal(right))) refuse(node);
          type = 'number';
        } else {
          type = node.operator === '&' ? 'text' : 'checkbox';
        }
        break;
      }
      case 'call': {
        const args = node.args.map(visit);
        if (node.name === 'IF') type = unify(args[1]!, args[2] ?? 'blank');
        else if (node.name === 'SWITCH')
          type = switchResultIndexes(args.length).reduce<Static>((all, i) => unify(all, args[i]!), 'blank');
        else if (RESULT_TYPES[node.name] !== undefined) type = RESULT_TYPES[node.name]!;
        else throw new Error(`unknown function ${node.name}`);
        break;
      }
    }
    types.set(node, type);
    return type;
  };
  visit(tree);
  return types;
}

// ---------------------------------------------------------------------------------------------
// Units of DATEADD and DATETIME_DIFF

type Unit = keyof typeof MS_OF | 'month' | 'quarter' | 'year';

const UNIT_ABBREVIATIONS: Readonly<Record<string, Unit>> = {
  ms: 'millisecond',
  s: 'second',
  m: 'minute',
  h: 'hour',
  d: 'day',
  w: 'week',
  M: 'month',
  Q: 'quarter',
  y: 'year',
};
const UNIT_NAMES: readonly Unit[] = [
  'millisecond',
  'second',
  'minute',
  'hour',
  'day',
  'week',
  'month',
  'quarter',
  'year',
];

/** A unit: an abbreviation in its exact case, or a full name in any case, singular or plural. */
function unitOf(text: string): Unit | null {
  if (Object.hasOwn(UNIT_ABBREVIATIONS, text)) return UNIT_ABBREVIATIONS[text]!;
  const lower = text.toLowerCase();
  return UNIT_NAMES.find((name) => lower === name || lower === `${name}s`) ?? null;
}

const MONTHS_PER = { month: 1, quarter: 3, year: 12 } as const;

/** The instant `months` calendar months on, its day clamped to the month's last. */
function addMonths(instant: number, months: number): number | null {
  if (!Number.isFinite(months) || Math.abs(months) > 200_000) return null;
  const date = new Date(instant);
  const total = date.getUTCFullYear() * 12 + date.getUTCMonth() + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12 + 1;
  if (year < 1 || year > 9999) return null;
  const day = Math.min(date.getUTCDate(), daysInMonth(year, month));
  return inRange(utc(year, month, day) + msOfDay(instant));
}

/** Whole calendar months from `b` to `a` (a ≥ b): one less when a's day and time come before b's. */
function monthsFrom(b: number, a: number): number {
  if (a < b) return -monthsFrom(a, b);
  const x = new Date(a);
  const y = new Date(b);
  let months = (x.getUTCFullYear() - y.getUTCFullYear()) * 12 + (x.getUTCMonth() - y.getUTCMonth());
  const earlier =
    x.getUTCDate() < y.getUTCDate() || (x.getUTCDate() === y.getUTCDate() && msOfDay(a) < msOfDay(b));
  if (earlier) months -= 1;
  return months;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

class Evaluation {
  constructor(
    private readonly types: ReadonlyMap<FormulaNode, Static>,
    private readonly fieldTypes: ReadonlyMap<string, FormulaType>,
    private readonly record: OracleRecord,
    private readonly now: Date,
  ) {}

  typeOf(node: FormulaNode): Static {
    return this.types.get(node)!;
  }

  /** The node's value converted to `to`. */
  as(node: FormulaNode, to: Static): Value {
    return convert(this.value(node), this.typeOf(node), to);
  }

  /** A number argument: blank when it is blank or no number. */
  number(node: FormulaNode): number | null {
    return this.as(node, 'number') as number | null;
  }

  /** An arithmetic operand: blank reads as 0. */
  operand(node: FormulaNode): number {
    return this.number(node) ?? 0;
  }

  text(node: FormulaNode): string {
    return toText(this.value(node), this.typeOf(node));
  }

  instant(node: FormulaNode): number | null {
    return toInstant(this.value(node), this.typeOf(node));
  }

  truthy(node: FormulaNode): boolean {
    return truthy(this.value(node), this.typeOf(node));
  }

  /** The value of `node`, of its own static type. */
  value(node: FormulaNode): Value {
    switch (node.kind) {
      case 'number':
        return finite(node.value);
      case 'text':
        return textOrBlank(node.value);
      case 'field':
        return this.field(node.name);
      case 'negate':
        return finite(-this.operand(node.operand));
      case 'binary':
        return this.binary(node);
      case 'call':
        return this.call(node.name, node.args, node);
    }
  }

  field(id: string): Value {
    const raw = this.record.values[id];
    const type = this.fieldTypes.get(id)!;
    const wrong = () => new Error(`field ${id} (${type}) holds ${JSON.stringify(raw)}, not an API value`);
    if (type === 'checkbox' && (raw === undefined || raw === null)) return false;
    if (raw === undefined || raw === null) return type === 'array' ? [] : null;
    switch (type) {
      case 'text':
        if (typeof raw !== 'string') throw wrong();
        return textOrBlank(raw);
      case 'number':
        if (typeof raw !== 'number' || !Number.isFinite(raw)) throw wrong();
        return raw;
      case 'checkbox':
        if (typeof raw !== 'boolean') throw wrong();
        return raw;
      case 'date':
        if (typeof raw !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(raw)) throw wrong();
        return Date.parse(`${raw}T00:00:00.000Z`);
      case 'datetime': {
        if (typeof raw !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(raw))
          throw wrong();
        return Date.parse(raw);
      }
      case 'array':
        // A lookup's array may hold blanks: they read as "".
        if (!Array.isArray(raw) || raw.some((item) => item !== null && typeof item !== 'string'))
          throw wrong();
        return raw.map((item) => (item === null ? '' : (item as string)));
    }
  }

  binary(node: Extract<FormulaNode, { kind: 'binary' }>): Value {
    const { operator, left, right } = node;
    switch (operator) {
      case '+':
        return finite(this.operand(left) + this.operand(right));
      case '-': {
        if (temporal(this.typeOf(left)) && temporal(this.typeOf(right))) {
          const a = this.instant(left);
          const b = this.instant(right);
          return a === null || b === null ? null : finite((a - b) / MS_OF.day);
        }
        return finite(this.operand(left) - this.operand(right));
      }
      case '*':
        return finite(this.operand(left) * this.operand(right));
      case '/': {
        const divisor = this.operand(right);
        return divisor === 0 ? null : finite(this.operand(left) / divisor);
      }
      case '&':
        return textOrBlank(this.text(left) + this.text(right));
      default:
        return compare(operator, this.value(left), this.typeOf(left), this.value(right), this.typeOf(right));
    }
  }

  call(name: string, args: readonly FormulaNode[], node: FormulaNode): Value {
    const arg = (i: number) => args[i]!;
    switch (name) {
      case 'IF': {
        const type = this.typeOf(node);
        if (this.truthy(arg(0))) return this.as(arg(1), type);
        return args.length > 2 ? this.as(arg(2), type) : convert(null, 'blank', type);
      }
      case 'SWITCH': {
        const type = this.typeOf(node);
        const subject = this.value(arg(0));
        const subjectType = this.typeOf(arg(0));
        const pairs = Math.floor((args.length - 1) / 2);
        for (let p = 0; p < pairs; p += 1) {
          const pattern = arg(1 + 2 * p);
          if (compare('=', subject, subjectType, this.value(pattern), this.typeOf(pattern))) {
            return this.as(arg(2 + 2 * p), type);
          }
        }
        return args.length % 2 === 0 ? this.as(arg(args.length - 1), type) : convert(null, 'blank', type);
      }
      case 'AND':
        return args.every((a) => this.truthy(a));
      case 'OR':
        return args.some((a) => this.truthy(a));
      case 'XOR':
        return args.filter((a) => this.truthy(a)).length % 2 === 1;
      case 'NOT':
        return !this.truthy(arg(0));
      case 'BLANK':
        return null;
      case 'TRUE':
        return true;
      case 'FALSE':
        return false;

      case 'ABS':
        return this.numeric(args, (x) => Math.abs(x));
      case 'INT':
        return this.numeric(args, (x) => Math.floor(x));
      case 'SQRT':
        return this.numeric(args, (x) => Math.sqrt(x));
      case 'EXP':
        return this.numeric(args, (x) => Math.exp(x));
      case 'POWER':
        return this.numeric(args, (a, b) => a ** b!);
      case 'MOD':
        return this.numeric(args, (a, b) => (b === 0 ? Number.NaN : a - b! * Math.trunc(a / b!)));
      case 'LOG':
        return this.numeric(args, (x, base = 10) =>
          x <= 0 || base <= 0 || base === 1 ? Number.NaN : Math.log(x) / Math.log(base),
        );
      case 'ROUND':
        return this.numeric(args, (x, p = 0) => roundAt(x, p, (n) => Math.floor(n + 0.5)));
      case 'ROUNDUP':
        return this.numeric(args, (x, p = 0) => Math.sign(x) * roundAt(Math.abs(x), p, Math.ceil));
      case 'ROUNDDOWN':
        return this.numeric(args, (x, p = 0) => Math.sign(x) * roundAt(Math.abs(x), p, Math.trunc));
      case 'CEILING':
        return this.numeric(args, (x, s = 1) =>
          s === 0 ? Number.NaN : spreadsheetDigits(Math.ceil(x / Math.abs(s)) * Math.abs(s)),
        );
      case 'FLOOR':
        return this.numeric(args, (x, s = 1) =>
          s === 0 ? Number.NaN : spreadsheetDigits(Math.floor(x / Math.abs(s)) * Math.abs(s)),
        );
      case 'MIN':
      case 'MAX':
      case 'AVERAGE':
      case 'SUM': {
        const numbers = this.spreadNumbers(args);
        if (name === 'SUM') return finite(numbers.reduce((sum, n) => sum + n, 0));
        if (numbers.length === 0) return null;
        if (name === 'MIN') return Math.min(...numbers);
        if (name === 'MAX') return Math.max(...numbers);
        return finite(numbers.reduce((sum, n) => sum + n, 0) / numbers.length);
      }
      case 'VALUE': {
        const type = this.typeOf(arg(0));
        return type === 'number' || type === 'checkbox' || type === 'text' ? this.number(arg(0)) : null;
      }

      case 'CONCATENATE':
        return textOrBlank(args.map((a) => this.text(a)).join(''));
      case 'LEN':
        return codePoints(this.text(arg(0))).length;
      case 'LOWER':
        return textOrBlank(this.text(arg(0)).toLowerCase());
      case 'UPPER':
        return textOrBlank(this.text(arg(0)).toUpperCase());
      case 'TRIM':
        return textOrBlank(trimSpace(this.text(arg(0))));
      case 'LEFT':
      case 'RIGHT': {
        const count = this.truncated(arg(1));
        if (count === null || count < 0) return null;
        const chars = codePoints(this.text(arg(0)));
        const kept = name === 'LEFT' ? chars.slice(0, count) : chars.slice(Math.max(0, chars.length - count));
        return textOrBlank(kept.join(''));
      }
      case 'MID': {
        const start = this.truncated(arg(1));
        const count = this.truncated(arg(2));
        if (start === null || count === null || start < 1 || count < 0) return null;
        return textOrBlank(
          codePoints(this.text(arg(0)))
            .slice(start - 1, start - 1 + count)
            .join(''),
        );
      }
      case 'FIND':
      case 'SEARCH': {
        let start = 1;
        if (args.length > 2) {
          const given = this.truncated(arg(2));
          if (given === null) return null;
          start = Math.max(1, given);
        }
        const position = find(this.text(arg(0)), this.text(arg(1)), start);
        return name === 'SEARCH' && position === 0 ? null : position;
      }
      case 'SUBSTITUTE': {
        const text = this.text(arg(0));
        const old = this.text(arg(1));
        const replacement = this.text(arg(2));
        if (args.length < 4) {
          if (old === '') return textOrBlank(text);
          const pieces = text.split(old);
          const grows = codePoints(replacement).length - codePoints(old).length;
          const length = codePoints(text).length + (pieces.length - 1) * grows;
          // Blank past 100,000 code points, as REPT, unless it grew nothing.
          return grows > 0 && length > 100_000 ? null : textOrBlank(pieces.join(replacement));
        }
        const nth = this.truncated(arg(3));
        if (nth === null) return null;
        return textOrBlank(old === '' ? text : substituteNth(text, old, replacement, nth));
      }
      case 'REPLACE': {
        const start = this.truncated(arg(1));
        const count = this.truncated(arg(2));
        if (start === null || count === null || start < 1 || count < 0) return null;
        const chars = codePoints(this.text(arg(0)));
        return textOrBlank(
          chars.slice(0, start - 1).join('') + this.text(arg(3)) + chars.slice(start - 1 + count).join(''),
        );
      }
      case 'REPT': {
        const times = this.truncated(arg(1));
        if (times === null || times < 0) return null;
        const text = this.text(arg(0));
        if (text === '') return null;
        return codePoints(text).length * times > 100_000 ? null : textOrBlank(text.repeat(times));
      }
      case 'T':
        return this.typeOf(arg(0)) === 'text' ? this.value(arg(0)) : null;

      case 'TODAY': {
        const now = this.now.getTime();
        return now - msOfDay(now);
      }
      case 'NOW':
        return this.now.getTime();
      case 'YEAR':
        return this.datePart(arg(0), (d) => d.getUTCFullYear());
      case 'MONTH':
        return this.datePart(arg(0), (d) => d.getUTCMonth() + 1);
      case 'DAY':
        return this.datePart(arg(0), (d) => d.getUTCDate());
      case 'HOUR':
        return this.datePart(arg(0), (d) => d.getUTCHours());
      case 'MINUTE':
        return this.datePart(arg(0), (d) => d.getUTCMinutes());
      case 'SECOND':
        return this.datePart(arg(0), (d) => d.getUTCSeconds());
      case 'WEEKDAY': {
        const day = this.datePart(arg(0), (d) => d.getUTCDay());
        if (day === null) return null;
        const start = args.length > 1 ? this.text(arg(1)).toLowerCase() : 'sunday';
        if (start === 'sunday') return day;
        return start === 'monday' ? (day + 6) % 7 : null;
      }
      case 'DATEADD': {
        const instant = this.instant(arg(0));
        const count = this.number(arg(1));
        const unit = unitOf(this.text(arg(2)));
        if (instant === null || count === null || unit === null) return null;
        if (unit === 'month' || unit === 'quarter' || unit === 'year') {
          return addMonths(instant, Math.trunc(count) * MONTHS_PER[unit]);
        }
        // Up to weeks the count may be fractional: the moved instant is cut to the millisecond.
        return inRange(Math.floor(instant + count * MS_OF[unit]));
      }
      case 'DATETIME_DIFF': {
        const a = this.instant(arg(0));
        const b = this.instant(arg(1));
        if (a === null || b === null) return null;
        const unit = (args.length > 2 ? unitOf(this.text(arg(2))) : null) ?? 'second';
        if (unit === 'month' || unit === 'quarter' || unit === 'year') {
          return Math.trunc(monthsFrom(b, a) / MONTHS_PER[unit]);
        }
        return Math.trunc((a - b) / MS_OF[unit]);
      }
      case 'DATESTR': {
        const instant = this.instant(arg(0));
        return instant === null ? null : dateText(instant);
      }
      case 'IS_BEFORE':
      case 'IS_AFTER': {
        const a = this.instant(arg(0));
        const b = this.instant(arg(1));
        if (a === null || b === null) return false;
        return name === 'IS_BEFORE' ? a < b : a > b;
      }

      case 'RECORD_ID':
        return textOrBlank(this.record.id);
      case 'CREATED_TIME':
        return Date.parse(this.record.createdAt);
      case 'LAST_MODIFIED_TIME':
        return Date.parse(this.record.updatedAt);

      case 'ARRAYJOIN': {
        const items = this.as(arg(0), 'array') as readonly string[];
        const separator = args.length > 1 ? this.text(arg(1)) : ', ';
        return textOrBlank(items.join(separator));
      }
      case 'ARRAYUNIQUE':
        return [...new Set(this.as(arg(0), 'array') as readonly string[])];
      case 'ARRAYCOMPACT':
        return (this.as(arg(0), 'array') as readonly string[]).filter((item) => item !== '');
    }
    throw new Error(`the oracle does not know ${name}()`);
  }

  /** A number function of its arguments: any blank argument makes it blank, as does a non-finite result. */
  numeric(args: readonly FormulaNode[], f: (x: number, y?: number) => number): number | null {
    const numbers = args.map((a) => this.number(a));
    if (numbers.some((n) => n === null)) return null;
    return finite(f(numbers[0]!, numbers[1] ?? undefined));
  }

  /** A count or position: the number truncated toward zero, or null when blank. */
  truncated(node: FormulaNode): number | null {
    const n = this.number(node);
    return n === null ? null : Math.trunc(n);
  }

  /** MIN, MAX, SUM, AVERAGE's numbers: arrays spread into items, blanks and non-numbers left out. */
  spreadNumbers(args: readonly FormulaNode[]): number[] {
    const numbers: number[] = [];
    for (const a of args) {
      const type = this.typeOf(a);
      const items: readonly (number | null)[] =
        type === 'array'
          ? (this.value(a) as readonly string[]).map(numberOfText)
          : [toNumber(this.value(a), type)];
      for (const n of items) if (n !== null) numbers.push(n);
    }
    return numbers;
  }

  datePart(node: FormulaNode, part: (date: Date) => number): number | null {
    const instant = this.instant(node);
    return instant === null ? null : part(new Date(instant));
  }
}

/** ROUND's arithmetic: `p` truncated and clamped to −22…22, an exact power of ten each side. */
function roundAt(x: number, precision: number, whole: (n: number) => number): number {
  const p = Math.max(-22, Math.min(22, Math.trunc(precision)));
  return p >= 0 ? whole(x * pow10(p)) / pow10(p) : whole(x / pow10(-p)) * pow10(-p);
}

/** FIND's 1-based code point position of `needle` in `haystack` at or after `start`, else 0. */
function find(needle: string, haystack: string, start: number): number {
  const chars = codePoints(haystack);
  if (start > chars.length + 1) return 0;
  if (needle === '') return start;
  const from = chars.slice(0, start - 1).join('').length;
  const at = haystack.indexOf(needle, from);
  return at < 0 ? 0 : codePoints(haystack.slice(0, at)).length + 1;
}

/** `text` with only the n-th occurrence of `old` (counted left to right, not overlapping) replaced. */
function substituteNth(text: string, old: string, replacement: string, nth: number): string {
  if (nth < 1) return text;
  let from = 0;
  for (let seen = 1; ; seen += 1) {
    const at = text.indexOf(old, from);
    if (at < 0) return text;
    if (seen === nth) return text.slice(0, at) + replacement + text.slice(at + old.length);
    from = at + old.length;
  }
}

/** A value of the result type as the API shows it. */
function apiShape(value: Value, resultType: FormulaType): unknown {
  switch (resultType) {
    case 'text':
      return value === '' ? null : value;
    case 'number':
      // The API has no -0.
      return value === 0 ? 0 : value;
    case 'checkbox':
      return value === true;
    case 'date':
      return value === null ? null : dateText(value as number);
    case 'datetime':
      return value === null ? null : datetimeText(value as number);
    case 'array':
      return [...((value as readonly string[] | null) ?? [])];
  }
}

/** The result of `expression` (stored form: field references by id) for `record`, in API shape by the formula's inferred result type. */
export function evaluateFormula(
  expression: string,
  fieldTypes: ReadonlyMap<string, FormulaType>,
  record: OracleRecord,
  now: Date,
): unknown {
  const tree = parseFormula(expression);
  const fields = [...fieldTypes].map(([id, type]) => ({ id, name: id, type }));
  const { type: resultType } = inferFormula(tree, fields);
  const types = staticTypes(tree, fieldTypes);
  const rootType = types.get(tree)!;
  // Two readings of infer.ts's rules must agree, or the oracle types some node wrongly.
  if ((rootType === 'blank' ? 'text' : rootType) !== resultType) {
    throw new Error(`the oracle types ${expression} as ${rootType}, inferFormula as ${resultType}`);
  }
  const evaluation = new Evaluation(types, fieldTypes, record, now);
  return apiShape(convert(evaluation.value(tree), rootType, resultType), resultType);
}
