import fc from 'fast-check';
import type { FormulaType } from '../../src/formula';
import type { OracleRecord } from './formula-oracle';

/**
 * fast-check arbitraries for testing formulas: a small table, records of it in API shape, and
 * well-typed formulas over it in stored form (fields by id). The compiler's property test draws
 * from these and holds its SQL's results to the oracle's.
 */

/** The field types a generated table uses, each read in a formula as FORMULA_TYPE_OF_FIELD says. */
export type OracleFieldType =
  | 'single_line_text'
  | 'number'
  | 'checkbox'
  | 'date'
  | 'datetime'
  | 'multiple_select';

export const FORMULA_TYPE_OF_FIELD: Readonly<Record<OracleFieldType, FormulaType>> = {
  single_line_text: 'text',
  number: 'number',
  checkbox: 'checkbox',
  date: 'date',
  datetime: 'datetime',
  multiple_select: 'array',
};

export interface OracleField {
  /** `fld` and 14 base62 characters, as newFieldId makes them (FIELD_ID_PATTERN). */
  id: string;
  type: OracleFieldType;
  /** A multiple_select's option names (empty for the other types). */
  choices: readonly string[];
}

export interface OracleTable {
  /** At least one field of each type, so that every kind of reference can be drawn. */
  fields: readonly OracleField[];
}

/** The fields' formula types by id, as evaluateFormula takes them. */
export function formulaFieldTypes(table: OracleTable): Map<string, FormulaType> {
  return new Map(table.fields.map((field) => [field.id, FORMULA_TYPE_OF_FIELD[field.type]]));
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const fieldIdArbitrary: fc.Arbitrary<string> = fc
  .string({ unit: fc.constantFrom(...BASE62), minLength: 14, maxLength: 14 })
  .map((tail) => `fld${tail}`);

/** Option names: a comma inside one, one that reads as a number, one as a date, accents. */
export const MULTIPLE_SELECT_CHOICES: readonly string[] = [
  'Red',
  'Green',
  'in progress',
  'a, b',
  'Été',
  '10',
  '2.5',
  '2024-01-31',
];

const FIELD_TYPES = Object.keys(FORMULA_TYPE_OF_FIELD) as OracleFieldType[];

export const tableArbitrary: fc.Arbitrary<OracleTable> = fc
  .tuple(fc.array(fc.constantFrom(...FIELD_TYPES), { maxLength: 3 }), fc.integer({ min: 0, max: 1000 }))
  .chain(([extra, seed]) => {
    const types = [...FIELD_TYPES, ...extra];
    return fc
      .uniqueArray(fieldIdArbitrary, { minLength: types.length, maxLength: types.length })
      .map((ids) => ({
        fields: types.map((type, i) => ({
          id: ids[i]!,
          type,
          choices:
            type === 'multiple_select' ? MULTIPLE_SELECT_CHOICES.filter((_, c) => (seed >> c) % 4 !== 0) : [],
        })),
      }));
  });

// ---------------------------------------------------------------------------------------------
// Values in API shape

const LATIN1_LETTERS = ['é', 'è', 'à', 'ç', 'ñ', 'ö', 'ü', 'Ä', 'Ö', 'Ü', 'É', 'Å', 'ø']; // not ß: upper() differs
const printableAscii = fc.integer({ min: 32, max: 126 }).map((code) => String.fromCharCode(code));
const textUnit = fc.oneof(
  { arbitrary: printableAscii, weight: 6 },
  { arbitrary: fc.constantFrom(' ', '\t'), weight: 2 },
  { arbitrary: fc.constantFrom(...LATIN1_LETTERS), weight: 1 },
);

/** Texts that other rules read: numbers, dates in every format, units, weekday names. */
export const SPECIAL_TEXTS: readonly string[] = [
  '3',
  ' 3.5 ',
  '-2',
  '$1,000',
  '10%',
  '1e3',
  '.5',
  '1.',
  'abc',
  'Hello World',
  ' Hello! ',
  '\tTabbed\t',
  'a  b',
  'quick brown fox',
  'Été à Zürich',
  '2024-02-29',
  '2023-02-29',
  '2024-01-31T10:20:30.123Z',
  '2024-01-31 23:59',
  '2024-06-30T22:30:00+05:30',
  '2024-06-30T22:30:00.123456-0800',
  '02/17/2013 7:31',
  '2/29/2024',
  '12/13/21',
  '1/1/69',
  '7/4/68',
  '4 Mar 2017 7:00',
  '31 December 1999',
  '30 Feb 2024',
  '2024-13-01',
  '2024-01-01T24:00',
  'days',
  'M',
  'Monday',
  'sunday',
  'Red',
];

export const textValueArbitrary: fc.Arbitrary<string | null> = fc
  .oneof(
    { arbitrary: fc.constant(null), weight: 2 },
    { arbitrary: fc.string({ unit: textUnit, minLength: 1, maxLength: 16 }), weight: 4 },
    { arbitrary: fc.constantFrom(...SPECIAL_TEXTS), weight: 4 },
    { arbitrary: fc.string({ unit: textUnit, minLength: 200, maxLength: 3000 }), weight: 1 },
  )
  // The API keeps no empty text: an emptied text field is null.
  .map((text) => (text === '' ? null : text));

export const numberValueArbitrary: fc.Arbitrary<number | null> = fc
  .oneof(
    { arbitrary: fc.constant(null), weight: 2 },
    {
      arbitrary: fc.constantFrom(
        0,
        1,
        -1,
        2,
        2.5,
        -2.5,
        0.1,
        0.2,
        3,
        7,
        -7,
        16.8,
        1.99,
        100,
        1e15,
        1e21,
        -1e21,
        1e-7,
        1e308,
      ),
      weight: 4,
    },
    { arbitrary: fc.integer({ min: -1000, max: 1000 }), weight: 3 },
    { arbitrary: fc.double({ min: -1e6, max: 1e6, noNaN: true }), weight: 2 },
    { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
  )
  // JSON has no -0: the API gives 0.
  .map((n) => (n === 0 ? 0 : n));

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const lastDay = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();
const year = fc.integer({ min: 1900, max: 2100 });
const month = fc.integer({ min: 1, max: 12 });

/** A calendar day: any, or the last of a month (leap days among them). */
const dayArbitrary: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '2024-02-29',
    '2023-02-28',
    '2000-02-29',
    '1900-02-28',
    '2100-02-28',
    '2024-01-31',
    '1999-12-31',
    '2000-01-01',
  ),
  fc.tuple(year, month).map(([y, m]) => `${y}-${pad(m)}-${pad(lastDay(y, m))}`),
  fc.tuple(year, month, fc.integer({ min: 1, max: 28 })).map(([y, m, d]) => `${y}-${pad(m)}-${pad(d)}`),
);

export const dateValueArbitrary: fc.Arbitrary<string | null> = fc.option(dayArbitrary, { freq: 5 });

const FIRST_MS = Date.UTC(1900, 0, 1);
const LAST_MS = Date.UTC(2100, 11, 31, 23, 59, 59, 999);

const instantArbitrary: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: FIRST_MS, max: LAST_MS }).map((ms) => new Date(ms).toISOString()),
  fc
    .tuple(dayArbitrary, fc.constantFrom('00:00:00.000', '23:59:59.999', '12:00:00.000', '00:00:00.001'))
    .map(([day, time]) => `${day}T${time}Z`),
);

export const datetimeValueArbitrary: fc.Arbitrary<string | null> = fc.option(instantArbitrary, { freq: 5 });

export function multipleSelectValueArbitrary(choices: readonly string[]): fc.Arbitrary<string[]> {
  return fc.shuffledSubarray([...choices]);
}

/** One field's value, as the API returns it. */
export function valueArbitrary(field: OracleField): fc.Arbitrary<unknown> {
  switch (field.type) {
    case 'single_line_text':
      return textValueArbitrary;
    case 'number':
      return numberValueArbitrary;
    case 'checkbox':
      return fc.boolean();
    case 'date':
      return dateValueArbitrary;
    case 'datetime':
      return datetimeValueArbitrary;
    case 'multiple_select':
      return multipleSelectValueArbitrary(field.choices);
  }
}

export function recordArbitrary(table: OracleTable): fc.Arbitrary<OracleRecord> {
  return fc
    .record({
      id: fc.uuid({ version: 7 }),
      created: fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
      later: fc.integer({ min: 0, max: 400 * 86_400_000 }),
      values: fc.tuple(...table.fields.map(valueArbitrary)),
    })
    .map(({ id, created, later, values }) => ({
      id,
      createdAt: new Date(created).toISOString(),
      updatedAt: new Date(created + later).toISOString(),
      values: Object.fromEntries(table.fields.map((field, i) => [field.id, values[i]])),
    }));
}

// ---------------------------------------------------------------------------------------------
// Expressions

/** A text literal in formula syntax. */
export const textLiteral = (text: string) => `"${text.replace(/[\\"]/g, (char) => `\\${char}`)}"`;

/** A number literal; negative ones through unary minus, since literals carry no sign. */
export const numberLiteral = (n: number) => (n < 0 || Object.is(n, -0) ? `-${String(-n)}` : String(n));

const NUMBER_LITERALS = [
  0, 1, 2, 3, -1, 2.5, -2.5, 0.1, 0.5, 16.8, 1.99, 100, 1e21, 1e-7, 0.000001, 123456789, 1e15, 1e308,
];
const TEXT_LITERALS = ['', ' ', 'a', 'A', 'abc', 'x y', 'Hello!', 'a\nb', 'a😀b', 'é', ...SPECIAL_TEXTS];
const DATE_TEXTS = SPECIAL_TEXTS.filter((text) => /\d.*[-/ ]\d|[A-Za-z]{3} \d/.test(text)).concat([
  '2024-01-31',
  '2024-03-31T00:00:00Z',
  '0001-01-01',
  '9999-12-31T23:59:59.999Z',
  '3 mar 2017',
  '3 Sept 2017',
]);
const UNITS = [
  'milliseconds',
  'ms',
  'seconds',
  'second',
  's',
  'minutes',
  'm',
  'hours',
  'HOURS',
  'h',
  'days',
  'Day',
  'd',
  'weeks',
  'w',
  'months',
  'Month',
  'M',
  'quarters',
  'Q',
  'years',
  'y',
  // unknown: blank for DATEADD, seconds for DATETIME_DIFF
  'D',
  'Y',
  'MS',
  'fortnight',
  '',
];
/** DATEADD counts whose instant lands on a whole millisecond in any arithmetic (see the notes on libm). */
const COUNTS = [0, 1, 2, 10, 13, -1, -12, 0.5, 1.5, -2.25, 0.001, 1200, 100000, 1e7];

export interface ExpressionOptions {
  /** How deep calls and operators nest (default 4). */
  maxDepth?: number;
  /** Whether NOW() and TODAY() may appear: only when both sides evaluate with one `now`. */
  withNow?: boolean;
}

type Want = FormulaType;

const COMPARISONS = ['=', '!=', '<', '>', '<=', '>='] as const;
const ARITHMETIC = ['+', '-', '*', '/'] as const;

/**
 * Well-typed formulas over `table`, by the static type they give, memoized per type and depth so
 * that building the arbitrary stays cheap. EXP, LOG and POWER are drawn with free arguments only
 * at the root, where a libm's last-bit difference cannot change a comparison, a text or a rounding;
 * below it they get arguments with exact results.
 */
class ExpressionGenerator {
  private readonly memo = new Map<string, fc.Arbitrary<string>>();
  private readonly fieldsOf: Readonly<Record<Want, string[]>>;

  constructor(
    table: OracleTable,
    private readonly options: Required<ExpressionOptions>,
  ) {
    const fieldsOf: Record<Want, string[]> = {
      text: [],
      number: [],
      checkbox: [],
      date: [],
      datetime: [],
      array: [],
    };
    for (const field of table.fields) fieldsOf[FORMULA_TYPE_OF_FIELD[field.type]].push(`{${field.id}}`);
    this.fieldsOf = fieldsOf;
  }

  root(): fc.Arbitrary<string> {
    const depth = this.options.maxDepth;
    const number = this.numberish(Math.min(depth - 1, 2));
    const free = fc.oneof(
      number.map((x) => `EXP(${x})`),
      fc.tuple(number, fc.option(number)).map(([x, b]) => (b === null ? `LOG(${x})` : `LOG(${x}, ${b})`)),
      fc.tuple(number, number).map(([a, b]) => `POWER(${a}, ${b})`),
    );
    return fc.oneof({ arbitrary: this.any(depth), weight: 24 }, { arbitrary: free, weight: 1 });
  }

  /** Any type, or a bare BLANK(). */
  any(depth: number): fc.Arbitrary<string> {
    return this.memoized(`any${depth}`, () =>
      fc.oneof(
        ...(['text', 'number', 'checkbox', 'date', 'datetime', 'array'] as const).map((want) => ({
          arbitrary: this.of(want, depth),
          weight: 3,
        })),
        { arbitrary: fc.constant('BLANK()'), weight: 1 },
      ),
    );
  }

  /** An expression whose static type is exactly `want` (never a bare BLANK()). */
  of(want: Want, depth: number): fc.Arbitrary<string> {
    return this.memoized(`${want}${depth}`, () => {
      const leaves = this.leaves(want);
      if (depth <= 0) return leaves;
      const d = depth - 1;
      const compounds = fc.oneof(...this.compounds(want, d), ...this.branches(want, d));
      return fc.oneof({ arbitrary: leaves, weight: 2 }, { arbitrary: compounds, weight: 3 });
    });
  }

  private memoized(key: string, make: () => fc.Arbitrary<string>): fc.Arbitrary<string> {
    let arbitrary = this.memo.get(key);
    if (!arbitrary) {
      arbitrary = make();
      this.memo.set(key, arbitrary);
    }
    return arbitrary;
  }

  private leaves(want: Want): fc.Arbitrary<string> {
    const fields = this.fieldsOf[want];
    const withFields = (literals: fc.Arbitrary<string>) =>
      fields.length === 0 ? literals : fc.oneof(literals, fc.constantFrom(...fields));
    switch (want) {
      case 'number':
        return withFields(fc.constantFrom(...NUMBER_LITERALS.map(numberLiteral)));
      case 'text':
        return withFields(fc.constantFrom(...TEXT_LITERALS.map(textLiteral)));
      case 'checkbox':
        return withFields(fc.constantFrom('TRUE()', 'FALSE()', 'TRUE', 'false'));
      case 'date':
        return this.options.withNow || fields.length === 0
          ? withFields(fc.constant('TODAY()'))
          : fc.constantFrom(...fields);
      case 'datetime': {
        const record = fc.constantFrom(
          'CREATED_TIME()',
          'LAST_MODIFIED_TIME()',
          ...(this.options.withNow ? ['NOW()'] : []),
        );
        return withFields(record);
      }
      case 'array':
        return fields.length === 0 ? fc.constant('ARRAYCOMPACT("a")') : fc.constantFrom(...fields);
    }
  }

  /**
   * IF and SWITCH giving `want`, with branches of other types that unify to it. The first branch
   * is of `want` itself: a lone branch of another type (a date where text is wanted, beside
   * BLANK() or nothing) would give its own type.
   */
  private branches(want: Want, d: number): fc.Arbitrary<string>[] {
    const branch = this.branchOf(want, d);
    const first = this.of(want, d);
    const condition = this.any(d);
    const ifs = fc
      .tuple(condition, first, fc.option(fc.oneof(branch, fc.constant('BLANK()')), { freq: 3 }))
      .map(([c, a, b]) => (b === null ? `IF(${c}, ${a})` : `IF(${c}, ${a}, ${b})`));
    const subject = fc.oneof(this.any(d), this.leaves('number'), this.leaves('text'));
    const pattern = fc.oneof(this.leaves('number'), this.leaves('text'), this.any(d), fc.constant('BLANK()'));
    const switches = fc
      .tuple(
        subject,
        fc.tuple(pattern, first),
        fc.array(fc.tuple(pattern, branch), { minLength: 0, maxLength: 2 }),
        fc.option(branch),
      )
      .map(([s, head, rest, fallback]) => [s, [head, ...rest], fallback] as const)
      .chain(([s, pairs, fallback]) =>
        // Now and then a pattern that is the subject itself, so that some SWITCH matches.
        fc.boolean().map((echo) => {
          const parts = pairs.map(([p, r], i) => `${echo && i === pairs.length - 1 ? s : p}, ${r}`);
          return `SWITCH(${[s, ...parts, ...(fallback === null ? [] : [fallback])].join(', ')})`;
        }),
      );
    return [ifs, switches];
  }

  /** A branch that, beside others of its IF or SWITCH, unifies to `want`. */
  private branchOf(want: Want, d: number): fc.Arbitrary<string> {
    switch (want) {
      case 'text':
        // Any mix of types but dates beside dates gives text.
        return fc.oneof({ arbitrary: this.of('text', d), weight: 3 }, { arbitrary: this.any(d), weight: 1 });
      case 'datetime':
        return fc.oneof(this.of('datetime', d), this.of('date', d));
      default:
        return this.of(want, d);
    }
  }

  /** Operands of arithmetic: anything but a date or datetime (refused there). */
  private numberish(d: number): fc.Arbitrary<string> {
    return this.memoized(`numberish${d}`, () =>
      fc.oneof(
        { arbitrary: this.of('number', d), weight: 10 },
        { arbitrary: this.of('checkbox', d), weight: 1 },
        { arbitrary: this.of('text', d), weight: 1 },
        { arbitrary: this.of('array', d), weight: 1 },
        { arbitrary: fc.constant('BLANK()'), weight: 1 },
      ),
    );
  }

  /** Arguments where a date is wanted: dates, datetimes, text (dates or not), now and then a number. */
  private dateish(d: number): fc.Arbitrary<string> {
    return this.memoized(`dateish${d}`, () =>
      fc.oneof(
        { arbitrary: this.of('date', d), weight: 3 },
        { arbitrary: this.of('datetime', d), weight: 3 },
        { arbitrary: fc.constantFrom(...DATE_TEXTS.map(textLiteral)), weight: 3 },
        { arbitrary: this.of('text', d), weight: 1 },
        { arbitrary: this.of('number', d), weight: 1 },
        { arbitrary: fc.constant('BLANK()'), weight: 1 },
      ),
    );
  }

  private textish(d: number): fc.Arbitrary<string> {
    return this.memoized(`textish${d}`, () =>
      fc.oneof({ arbitrary: this.of('text', d), weight: 4 }, { arbitrary: this.any(d), weight: 1 }),
    );
  }

  /** Small counts and positions, negative and fractional ones among them, or any number. */
  private count(d: number): fc.Arbitrary<string> {
    return fc.oneof(
      { arbitrary: fc.constantFrom(0, 1, 2, 3, 5, 20, -1, 2.7, -0.5, 1e9).map(numberLiteral), weight: 3 },
      { arbitrary: this.numberish(d), weight: 1 },
    );
  }

  private unit(d: number): fc.Arbitrary<string> {
    return fc.oneof(
      { arbitrary: fc.constantFrom(...UNITS.map(textLiteral)), weight: 6 },
      { arbitrary: fc.constantFrom('LOWER("DAYS")', 'UPPER("m")'), weight: 1 },
      { arbitrary: this.of('text', d), weight: 1 },
    );
  }

  private compounds(want: Want, d: number): fc.Arbitrary<string>[] {
    const call = (name: string, ...args: fc.Arbitrary<string>[]) =>
      fc.tuple(...args).map((parts) => `${name}(${parts.join(', ')})`);
    /** A call whose last `optional` arguments may be left out. */
    const callOptional = (name: string, required: fc.Arbitrary<string>[], optional: fc.Arbitrary<string>[]) =>
      fc
        .tuple(fc.tuple(...required), fc.integer({ min: 0, max: optional.length }), fc.tuple(...optional))
        .map(([given, n, extra]) => `${name}(${[...given, ...extra.slice(0, n)].join(', ')})`);
    const variadic = (name: string, arg: fc.Arbitrary<string>) =>
      fc.array(arg, { minLength: 1, maxLength: 4 }).map((args) => `${name}(${args.join(', ')})`);

    const num = this.numberish(d);
    const text = this.textish(d);
    const date = this.dateish(d);
    const any = this.any(d);
    switch (want) {
      case 'number': {
        const precision = fc.oneof(
          fc.constantFrom(0, 1, 2, -1, -2, 1.7, -0.5, 25, -25).map(numberLiteral),
          num,
        );
        const significance = fc.oneof(fc.constantFrom(0.1, 1, 2, -2, 0, 0.25, 5).map(numberLiteral), num);
        const spread = fc.oneof(
          { arbitrary: num, weight: 3 },
          { arbitrary: this.of('array', d), weight: 1 },
          { arbitrary: any, weight: 1 },
        );
        const temporal = fc.oneof(this.of('date', d), this.of('datetime', d));
        return [
          fc.tuple(num, fc.constantFrom(...ARITHMETIC), num).map(([a, op, b]) => `(${a} ${op} ${b})`),
          fc
            .tuple(num, fc.constantFrom('/', '-'), fc.constantFrom('0', 'BLANK()', '(1 - 1)'))
            .map(([a, op, b]) => `(${a} ${op} ${b})`),
          num.map((a) => `-(${a})`),
          fc.tuple(temporal, temporal).map(([a, b]) => `(${a} - ${b})`),
          call('ABS', num),
          call('INT', num),
          call('SQRT', num),
          callOptional('ROUND', [num], [precision]),
          callOptional('ROUNDUP', [num], [precision]),
          callOptional('ROUNDDOWN', [num], [precision]),
          callOptional('CEILING', [num], [significance]),
          callOptional('FLOOR', [num], [significance]),
          call('MOD', num, fc.oneof(fc.constantFrom(0, 2, 3, -3, 2.5).map(numberLiteral), num)),
          // Exact results only, below the root (the notes on libm above).
          fc.constantFrom(
            'POWER(2, 3)',
            'POWER(-3, 3)',
            'POWER(10, 6)',
            'POWER(2, -3)',
            'POWER(-8, 1/3)',
            'POWER(0, -1)',
            'POWER(5, 0)',
          ),
          fc.constantFrom(
            'EXP(0)',
            'LOG(100)',
            'LOG(10)',
            'LOG(1)',
            'LOG(0)',
            'LOG(-1)',
            'LOG(5, 1)',
            'LOG(8, 0)',
          ),
          variadic('MIN', spread),
          variadic('MAX', spread),
          variadic('SUM', spread),
          variadic('AVERAGE', spread),
          call('VALUE', fc.oneof(text, num, fc.constantFrom(...SPECIAL_TEXTS.map(textLiteral)))),
          call('LEN', text),
          callOptional('FIND', [text, text], [this.count(d)]),
          callOptional('SEARCH', [text, text], [this.count(d)]),
          ...['YEAR', 'MONTH', 'DAY', 'HOUR', 'MINUTE', 'SECOND'].map((name) => call(name, date)),
          callOptional(
            'WEEKDAY',
            [date],
            [fc.oneof(fc.constantFrom('"Monday"', '"sunday"', '"MONDAY"', '"Tuesday"', '""'), text)],
          ),
          callOptional('DATETIME_DIFF', [date, date], [this.unit(d)]),
        ];
      }
      case 'text': {
        const count = this.count(d);
        return [
          fc.tuple(any, any).map(([a, b]) => `(${a} & ${b})`),
          variadic('CONCATENATE', any),
          call('LOWER', text),
          call('UPPER', text),
          call('TRIM', text),
          call('LEFT', text, count),
          call('RIGHT', text, count),
          call('MID', text, count, count),
          callOptional(
            'SUBSTITUTE',
            [text, fc.oneof(text, fc.constantFrom('"a"', '""', '" "', '"o"')), text],
            [count],
          ),
          call('REPLACE', text, count, count, text),
          call('REPT', text, fc.oneof(fc.constantFrom(0, 1, 3, -1, 2.5, 1e6).map(numberLiteral), num)),
          call('T', any),
          call('DATESTR', date),
          callOptional('ARRAYJOIN', [any], [fc.oneof(fc.constantFrom('"; "', '""', '","'), text)]),
          fc.constant('RECORD_ID()'),
        ];
      }
      case 'checkbox': {
        const temporal = fc.oneof(this.of('date', d), this.of('datetime', d));
        const op = fc.constantFrom(...COMPARISONS);
        const pair = (a: fc.Arbitrary<string>, b: fc.Arbitrary<string>) =>
          fc.tuple(a, op, b).map(([x, o, y]) => `(${x} ${o} ${y})`);
        return [
          pair(num, num),
          pair(temporal, fc.oneof(temporal, date, fc.constant('BLANK()'))),
          pair(text, text),
          pair(any, any),
          pair(fc.constant('BLANK()'), any),
          variadic('AND', any),
          variadic('OR', any),
          variadic('XOR', any),
          call('NOT', any),
          call('IS_BEFORE', date, date),
          call('IS_AFTER', date, date),
        ];
      }
      case 'date':
        // Only fields, TODAY() and IF/SWITCH give a date.
        return [];
      case 'datetime': {
        const counts = fc.oneof(
          { arbitrary: fc.constantFrom(...COUNTS.map(numberLiteral)), weight: 3 },
          { arbitrary: num.map((n) => `INT(${n})`), weight: 1 },
        );
        const whole = fc.tuple(date, num, fc.constantFrom('"months"', '"Q"', '"years"', '"M"'));
        return [
          call('DATEADD', date, counts, this.unit(d)),
          whole.map(([x, n, u]) => `DATEADD(${x}, ${n}, ${u})`),
        ];
      }
      case 'array':
        return [call('ARRAYUNIQUE', any), call('ARRAYCOMPACT', any)];
    }
  }
}

/** Well-typed formulas (stored form) over `table`. */
export function expressionArbitrary(
  table: OracleTable,
  options: ExpressionOptions = {},
): fc.Arbitrary<string> {
  return new ExpressionGenerator(table, { maxDepth: 4, withNow: false, ...options }).root();
}

export interface FormulaCase {
  table: OracleTable;
  expression: string;
  records: OracleRecord[];
}

/** A table, a formula over it and a few records of it. */
export function formulaCaseArbitrary(options: ExpressionOptions = {}): fc.Arbitrary<FormulaCase> {
  return tableArbitrary.chain((table) =>
    fc.record({
      table: fc.constant(table),
      expression: expressionArbitrary(table, options),
      records: fc.array(recordArbitrary(table), { minLength: 1, maxLength: 5 }),
    }),
  );
}
