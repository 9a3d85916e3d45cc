import { quoteLiteral } from '../physical/naming';
import { binaryType, callType, type Inferred } from './infer';
import { type BinaryOperator, FormulaError, type FormulaNode } from './parse';
import type { FormulaType } from './types';

/**
 * A formula tree as one SQL expression over a record row, computed by PostgreSQL: the semantics
 * are docs/formulas.md, "The semantics as built", and the in-memory oracle of the property test
 * states the same rules in JavaScript. Values travel in one SQL type per formula type — text
 * `text`, number `float8`, checkbox `boolean`, date and datetime `timestamp` (UTC), array `text[]`
 * — with SQL NULL for blank. The pieces that would fail a statement where a formula must give
 * blank (an overflow, a zero divisor, a date out of range) are the `public.rb_f_*` functions of
 * the formula_functions migration, which also hold every text operation that needs a collation
 * (PostgreSQL folds a generated column's constants before it assigns collations, so `lower('A')`
 * in the expression itself fails); literals are quoted into the text, because a stored generated
 * column's expression cannot take parameters. Every piece is immutable except NOW() and TODAY(),
 * so a formula without them (over stored fields) can be a stored generated column.
 */

/** A field as a formula reads it: its formula type and its value in that type's SQL form. */
export interface FormulaFieldSql {
  type: FormulaType;
  sql: string;
  /** Whether reading it needs more than the row's own stored columns, or the time of the read. */
  volatile?: boolean;
}

export interface CompileContext {
  /** A field the formula names (by id; inference has checked it exists). */
  field(id: string): FormulaFieldSql;
  /** The record's id as text, and its createdAt and updatedAt as UTC timestamps. */
  recordId: string;
  createdAt: string;
  updatedAt: string;
  /** The current time as timestamptz: CLOCK_SQL unless a test fixes it. */
  now?: string;
}

/** How a compiled formula reads the clock: SQL holding it gives other values as time passes. */
export const CLOCK_SQL = 'now()';

export interface CompiledFormula {
  /** The value in its type's SQL form (see above), blank as NULL. */
  sql: string;
  type: FormulaType;
  /** It reads the clock or a field that is not stored in the row: computed at read time. */
  volatile: boolean;
}

/**
 * The longest SQL a formula may compile to. Fields are expanded in place (a stored generated
 * column cannot read another), and SWITCH repeats its subject once per pattern, so this bounds
 * what a chain of formulas can build, far above any formula written by hand.
 */
export const MAX_COMPILED_FORMULA_LENGTH = 200_000;

/** A compiled value: SQL in its type's form (see SQL_TYPE). */
export interface Value {
  sql: string;
  type: Inferred;
}

const SQL_TYPE: Readonly<Record<FormulaType, string>> = {
  text: 'text',
  number: 'float8',
  checkbox: 'boolean',
  date: 'timestamp',
  datetime: 'timestamp',
  array: 'text[]',
};

const blankOf = (type: Inferred) => (type === 'blank' ? 'NULL' : `NULL::${SQL_TYPE[type]}`);
const isDate = (type: Inferred) => type === 'date' || type === 'datetime';
const isNumeric = (type: Inferred) => type === 'number' || type === 'checkbox';

// --- Conversions (docs/formulas.md, "Conversions") ------------------------------------------

function asNumber({ sql, type }: Value): string {
  switch (type) {
    case 'number':
      return sql;
    case 'checkbox':
      return `(${sql})::integer::float8`;
    case 'text':
      return `public.rb_f_value(${sql})`;
    default:
      return 'NULL::float8';
  }
}

/** A number where blank counts as 0: arithmetic's operands and the numeric functions' arguments. */
const asNumberOrZero = (value: Value) =>
  value.type === 'blank' ? '0::float8' : `COALESCE(${asNumber(value)}, 0::float8)`;

/** A value as text, as `&` and ARRAYJOIN write it (a rollup's array_join too). */
export function asText({ sql, type }: Value): string {
  switch (type) {
    case 'text':
      return sql;
    case 'number':
      return `public.rb_f_number_text(${sql})`;
    case 'checkbox':
      return `(CASE ${sql} WHEN true THEN '1' WHEN false THEN '0' END)`;
    case 'date':
      return `public.rb_f_date_text(${sql})`;
    case 'datetime':
      return `public.rb_f_datetime_text(${sql})`;
    case 'array':
      return `public.rb_f_join(${sql}, ', ')`;
    case 'blank':
      return 'NULL::text';
  }
}

/** Text where blank is "": what `&` and the text functions read. */
const asJoinedText = (value: Value) => (value.type === 'blank' ? `''` : `COALESCE(${asText(value)}, '')`);

/** Whether a value counts as true (IF, AND, OR; a rollup's and/or too). */
export function truthy({ sql, type }: Value): string {
  switch (type) {
    case 'checkbox':
      return `COALESCE(${sql}, false)`;
    case 'number':
      return `COALESCE(${sql} <> 0, false)`;
    case 'text':
      return `(public.rb_f_nonempty(${sql}) IS NOT NULL)`;
    case 'date':
    case 'datetime':
      return `(${sql} IS NOT NULL)`;
    case 'array':
      return `COALESCE(cardinality(${sql}) > 0, false)`;
    case 'blank':
      return 'false';
  }
}

function asDate(value: Value): string {
  if (isDate(value.type)) return value.sql;
  if (value.type === 'text') return `public.rb_f_parse_date(${value.sql})`;
  return 'NULL::timestamp';
}

function asArray(value: Value): string {
  if (value.type === 'array') return `COALESCE(${value.sql}, '{}'::text[])`;
  if (value.type === 'blank') return `'{}'::text[]`;
  return `public.rb_f_one_item(${asText(value)})`;
}

/** A value as the type its place needs (IF's branches as the IF's type): only widening occurs. */
function convert(value: Value, to: Inferred): string {
  if (to === 'blank' || value.type === 'blank') return blankOf(to);
  if (value.type === to || (to === 'datetime' && value.type === 'date')) return value.sql;
  switch (to) {
    case 'text':
      return asText(value);
    case 'number':
      return asNumber(value);
    case 'array':
      return asArray(value);
    case 'checkbox':
      return truthy(value);
    default:
      return asDate(value);
  }
}

// --- Comparisons ----------------------------------------------------------------------------

const SQL_OPERATOR: Readonly<Record<string, string>> = {
  '=': '=',
  '!=': '<>',
  '<': '<',
  '>': '>',
  '<=': '<=',
  '>=': '>=',
};

/** Two instants: blank equals only blank, and no order holds with a blank. */
function compareInstants(operator: BinaryOperator, left: string, right: string): string {
  if (operator === '=') return `(${left} IS NOT DISTINCT FROM ${right})`;
  if (operator === '!=') return `(${left} IS DISTINCT FROM ${right})`;
  return `COALESCE(${left} ${SQL_OPERATOR[operator]} ${right}, false)`;
}

/** `left operator right` by the operands' static types (docs/formulas.md, "Operators"). */
function compare(operator: BinaryOperator, left: Value, right: Value): string {
  const op = SQL_OPERATOR[operator]!;
  const numeric =
    (isNumeric(left.type) && (isNumeric(right.type) || right.type === 'blank')) ||
    (isNumeric(right.type) && left.type === 'blank');
  if (numeric) return `(${asNumberOrZero(left)} ${op} ${asNumberOrZero(right)})`;
  const dateOrBlank = (type: Inferred) => isDate(type) || type === 'blank';
  if (isDate(left.type) && (dateOrBlank(right.type) || right.type === 'text')) {
    return compareInstants(operator, left.sql, asDate(right));
  }
  if ((left.type === 'text' || left.type === 'blank') && isDate(right.type)) {
    return compareInstants(operator, asDate(left), right.sql);
  }
  return `(public.rb_f_text_cmp(${asJoinedText(left)}, ${asJoinedText(right)}) ${op} 0)`;
}

// --- The compiler ---------------------------------------------------------------------------

const ARITHMETIC: Readonly<Record<string, string>> = {
  '+': 'public.rb_f_add',
  '-': 'public.rb_f_sub',
  '*': 'public.rb_f_mul',
  '/': 'public.rb_f_div',
};

const ROUNDING: Readonly<Record<string, string>> = { ROUND: 'half', ROUNDUP: 'up', ROUNDDOWN: 'down' };
const AGGREGATES: Readonly<Record<string, string>> = {
  MIN: 'min',
  MAX: 'max',
  SUM: 'sum',
  AVERAGE: 'average',
};
const DATE_PARTS: Readonly<Record<string, string>> = {
  YEAR: 'year',
  MONTH: 'month',
  DAY: 'day',
  HOUR: 'hour',
  MINUTE: 'minute',
};

class Compiler {
  volatile = false;

  constructor(private readonly context: CompileContext) {}

  private get now(): string {
    this.volatile = true;
    return this.context.now ?? CLOCK_SQL;
  }

  value(node: FormulaNode): Value {
    switch (node.kind) {
      case 'number':
        // A literal past the doubles (1e999) is no number at all.
        return {
          sql: Number.isFinite(node.value) ? `${node.value}::float8` : 'NULL::float8',
          type: 'number',
        };
      case 'text':
        return { sql: `${quoteLiteral(node.value)}::text`, type: 'text' };
      case 'field': {
        const field = this.context.field(node.name);
        if (field.volatile) this.volatile = true;
        return { sql: field.sql, type: field.type };
      }
      case 'negate':
        return { sql: `(-${asNumberOrZero(this.value(node.operand))})`, type: 'number' };
      case 'binary':
        return this.binary(node.operator, this.value(node.left), this.value(node.right), node.at);
      case 'call':
        return this.call(node.name, node.args);
    }
  }

  private binary(operator: BinaryOperator, left: Value, right: Value, at: number): Value {
    const type = binaryType(operator, left.type, right.type, at);
    if (operator === '&') return { sql: `(${asJoinedText(left)} || ${asJoinedText(right)})`, type };
    if (operator === '-' && isDate(left.type) && isDate(right.type)) {
      return {
        sql: `public.rb_f_div(public.rb_f_epoch_ms(${left.sql}) - public.rb_f_epoch_ms(${right.sql}), 86400000)`,
        type,
      };
    }
    const arithmetic = ARITHMETIC[operator];
    if (arithmetic) return { sql: `${arithmetic}(${asNumberOrZero(left)}, ${asNumberOrZero(right)})`, type };
    return { sql: compare(operator, left, right), type };
  }

  private call(name: string, nodes: readonly FormulaNode[]): Value {
    const args = nodes.map((node) => this.value(node));
    const type = callType(
      name,
      args.map((arg) => arg.type),
    );
    // Outside arithmetic a blank number stays blank, and so does the function's result.
    const number = (index: number) => asNumber(args[index]!);
    const text = (index: number) => asJoinedText(args[index]!);
    const optional = (index: number, read: (index: number) => string, absent: string) =>
      args[index] === undefined ? absent : read(index);
    const result = (sql: string): Value => ({ sql, type });
    const rounding = ROUNDING[name];
    if (rounding)
      return result(`public.rb_f_round(${number(0)}, ${optional(1, number, '0::float8')}, '${rounding}')`);
    const aggregate = AGGREGATES[name];
    if (aggregate) {
      const numbers = args.map((arg) =>
        arg.type === 'array'
          ? `public.rb_f_item_numbers(${asArray(arg)})`
          : `ARRAY[${asNumber(arg)}]::float8[]`,
      );
      return result(`public.rb_f_aggregate(${numbers.join(' || ')}, '${aggregate}')`);
    }
    const datePart = DATE_PARTS[name];
    if (datePart) return result(`extract(${datePart} FROM ${asDate(args[0]!)})::float8`);
    switch (name) {
      case 'IF':
        return result(
          `(CASE WHEN ${truthy(args[0]!)} THEN ${convert(args[1]!, type)} ELSE ${
            args[2] ? convert(args[2], type) : blankOf(type)
          } END)`,
        );
      case 'SWITCH':
        return result(this.switchSql(args, type));
      case 'AND':
      case 'OR':
        return result(`(${args.map(truthy).join(` ${name} `)})`);
      case 'XOR':
        return result(`((${args.map((arg) => `${truthy(arg)}::integer`).join(' + ')}) % 2 = 1)`);
      case 'NOT':
        return result(`(NOT ${truthy(args[0]!)})`);
      case 'BLANK':
        return result('NULL');
      case 'TRUE':
        return result('true');
      case 'FALSE':
        return result('false');
      case 'ABS':
        return result(`abs(${number(0)})`);
      case 'INT':
        return result(`floor(${number(0)})`);
      case 'FLOOR':
      case 'CEILING':
        return result(
          `public.rb_f_to_multiple(${number(0)}, ${optional(1, number, '1::float8')}, ${name === 'CEILING'})`,
        );
      case 'MOD':
        return result(`public.rb_f_mod(${number(0)}, ${number(1)})`);
      case 'POWER':
        return result(`public.rb_f_pow(${number(0)}, ${number(1)})`);
      case 'SQRT':
        return result(`public.rb_f_sqrt(${number(0)})`);
      case 'EXP':
        return result(`public.rb_f_exp(${number(0)})`);
      case 'LOG':
        return result(`public.rb_f_log(${number(0)}, ${optional(1, number, '10::float8')})`);
      case 'VALUE':
        return result(asNumber(args[0]!));
      case 'CONCATENATE':
        return result(`(${args.map(asJoinedText).join(' || ')})`);
      case 'LEN':
        return result(`char_length(${text(0)})::float8`);
      case 'LOWER':
        return result(`public.rb_f_lower(${asText(args[0]!)})`);
      case 'UPPER':
        return result(`public.rb_f_upper(${asText(args[0]!)})`);
      case 'TRIM':
        return result(`public.rb_f_trim(${text(0)})`);
      case 'LEFT':
        return result(`public.rb_f_left(${text(0)}, ${number(1)})`);
      case 'RIGHT':
        return result(`public.rb_f_right(${text(0)}, ${number(1)})`);
      case 'MID':
        return result(`public.rb_f_mid(${text(0)}, ${number(1)}, ${number(2)})`);
      case 'FIND':
      case 'SEARCH': {
        const found = `public.rb_f_find(${text(0)}, ${text(1)}, ${optional(2, number, '1::float8')})`;
        return result(name === 'FIND' ? found : `NULLIF(${found}, 0)`);
      }
      case 'SUBSTITUTE':
        return result(
          args[3] === undefined
            ? `public.rb_f_substitute(${text(0)}, ${text(1)}, ${text(2)})`
            : `public.rb_f_substitute(${text(0)}, ${text(1)}, ${text(2)}, ${number(3)})`,
        );
      case 'REPLACE':
        return result(`public.rb_f_replace(${text(0)}, ${number(1)}, ${number(2)}, ${text(3)})`);
      case 'REPT':
        return result(`public.rb_f_rept(${text(0)}, ${number(1)})`);
      case 'T':
        return result(args[0]!.type === 'text' ? args[0]!.sql : 'NULL::text');
      case 'TODAY':
        return result(`date_trunc('day', ${this.now} AT TIME ZONE 'UTC')`);
      case 'NOW':
        return result(`date_trunc('milliseconds', ${this.now} AT TIME ZONE 'UTC')`);
      case 'SECOND':
        return result(`floor(extract(second FROM ${asDate(args[0]!)}))::float8`);
      case 'WEEKDAY':
        return result(
          `public.rb_f_weekday(${asDate(args[0]!)}, ${optional(1, (i) => asText(args[i]!), `'Sunday'`)})`,
        );
      case 'DATEADD':
        return result(`public.rb_f_dateadd(${asDate(args[0]!)}, ${number(1)}, ${asText(args[2]!)})`);
      case 'DATETIME_DIFF':
        return result(
          `public.rb_f_datetime_diff(${asDate(args[0]!)}, ${asDate(args[1]!)}, ${optional(2, text, `'seconds'`)})`,
        );
      case 'DATESTR':
        return result(`public.rb_f_date_text(${asDate(args[0]!)})`);
      case 'IS_BEFORE':
        return result(`COALESCE(${asDate(args[0]!)} < ${asDate(args[1]!)}, false)`);
      case 'IS_AFTER':
        return result(`COALESCE(${asDate(args[0]!)} > ${asDate(args[1]!)}, false)`);
      case 'RECORD_ID':
        return result(this.context.recordId);
      case 'CREATED_TIME':
        return result(this.context.createdAt);
      case 'LAST_MODIFIED_TIME':
        return result(this.context.updatedAt);
      case 'ARRAYJOIN':
        return result(`public.rb_f_join(${asArray(args[0]!)}, ${optional(1, text, `', '`)})`);
      case 'ARRAYUNIQUE':
        return result(`public.rb_f_unique(${asArray(args[0]!)})`);
      case 'ARRAYCOMPACT':
        return result(`public.rb_f_compact(${asArray(args[0]!)})`);
      default:
        throw new Error(`formula compiler: no SQL for ${name}`);
    }
  }

  /** The first result whose pattern equals the subject (by `=`'s rules), else the default. */
  private switchSql(args: readonly Value[], type: Inferred): string {
    const [subject, ...rest] = args;
    const pairs = Math.floor(rest.length / 2);
    const branches: string[] = [];
    for (let i = 0; i < pairs; i += 1) {
      branches.push(`WHEN ${compare('=', subject!, rest[2 * i]!)} THEN ${convert(rest[2 * i + 1]!, type)}`);
    }
    const fallback = rest.length % 2 === 1 ? convert(rest[rest.length - 1]!, type) : blankOf(type);
    return branches.length === 0 ? fallback : `(CASE ${branches.join(' ')} ELSE ${fallback} END)`;
  }
}

/**
 * The formula `tree` (inferred already: its functions, arities and fields are known good) as SQL
 * in its type's form. A FormulaError when it grows past MAX_COMPILED_FORMULA_LENGTH.
 */
export function compileFormula(tree: FormulaNode, context: CompileContext): CompiledFormula {
  const compiler = new Compiler(context);
  const value = compiler.value(tree);
  const type: FormulaType = value.type === 'blank' ? 'text' : value.type;
  const sql = value.type === 'blank' ? blankOf('text') : value.sql;
  if (sql.length > MAX_COMPILED_FORMULA_LENGTH) {
    throw new FormulaError(
      0,
      'the formula is too large once the formulas it uses are written out; split it or simplify what it reads',
    );
  }
  return { sql, type, volatile: compiler.volatile };
}

/** The SQL type of a formula's result as a column holds it. */
export const FORMULA_COLUMN_TYPE: Readonly<Record<FormulaType, string>> = {
  text: 'text',
  number: 'double precision',
  checkbox: 'boolean',
  date: 'date',
  datetime: 'timestamptz',
  array: 'text[]',
};

/**
 * A compiled value as the field's column holds it: text without "" (empty is null), a number
 * without -0, a checkbox never null, a date as date, a datetime as timestamptz, an array never null.
 */
export function formulaResultSql(compiled: Pick<CompiledFormula, 'sql' | 'type'>): string {
  const { sql } = compiled;
  switch (compiled.type) {
    case 'text':
      return `public.rb_f_nonempty(${sql})`;
    case 'number':
      // Adding +0 turns -0 into 0, which JSON and the API write without a sign.
      return `(${sql} + 0::float8)`;
    case 'checkbox':
      return truthy({ sql, type: 'checkbox' });
    case 'date':
      return `(${sql})::date`;
    case 'datetime':
      return `(${sql} AT TIME ZONE 'UTC')`;
    case 'array':
      return `COALESCE(${sql}, '{}'::text[])`;
  }
}

/**
 * A stored value as a formula reads it (its module's formula type), from its column's SQL: text
 * with "" as blank, numbers as doubles, dates at UTC midnight, datetimes to the millisecond the
 * API shows, arrays never null.
 */
export function formulaReadSql(type: FormulaType, column: string): string {
  switch (type) {
    case 'text':
      return `public.rb_f_nonempty(${column}::text)`;
    case 'number':
      return `${column}::float8`;
    case 'checkbox':
      return column;
    case 'date':
      return `${column}::timestamp`;
    case 'datetime':
      return `date_trunc('milliseconds', ${column} AT TIME ZONE 'UTC')`;
    case 'array':
      return `COALESCE(${column}, '{}'::text[])`;
  }
}
