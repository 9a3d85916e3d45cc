import fc from 'fast-check';
import {
  type FormulaNode,
  type FormulaType,
  formulaFunctionNames,
  inferFormula,
  parseFormula,
} from '../src/formula';
import {
  expressionArbitrary,
  FORMULA_TYPE_OF_FIELD,
  formulaCaseArbitrary,
  formulaFieldTypes,
  tableArbitrary,
} from './support/formula-arbitraries';
import {
  EXAMPLE_NOW,
  EXAMPLE_RECORD,
  exampleFieldTypes,
  exampleRecord,
  FORMULA_EXAMPLES,
} from './support/formula-examples';
import { evaluateFormula, type OracleRecord } from './support/formula-oracle';

const NOW = new Date('2024-02-29T13:14:15.678Z');

/** The fields of the unit tests by the names they are written with, and their ids and types. */
const FIELDS: Readonly<Record<string, readonly [string, FormulaType]>> = {
  Text: ['fldText000000000', 'text'],
  Number: ['fldNumber0000000', 'number'],
  Check: ['fldCheck00000000', 'checkbox'],
  Date: ['fldDate000000000', 'date'],
  Datetime: ['fldDatetime00000', 'datetime'],
  Tags: ['fldTags000000000', 'array'],
};
const FIELD_TYPES = new Map(Object.values(FIELDS));

/** `formula`, its fields written by name, on a record holding `values` by the same names. */
function run(formula: string, values: Record<string, unknown> = {}): unknown {
  const idOf = (name: string) => FIELDS[name]![0];
  const stored = formula.replace(/\{(\w+)\}/g, (_, name: string) => `{${idOf(name)}}`);
  const record: OracleRecord = {
    ...EXAMPLE_RECORD,
    values: Object.fromEntries(Object.entries(values).map(([name, value]) => [idOf(name), value])),
  };
  return evaluateFormula(stored, FIELD_TYPES, record, NOW);
}

/** The names of the functions a tree calls. */
function callsOf(node: FormulaNode, into = new Set<string>()): Set<string> {
  switch (node.kind) {
    case 'call':
      into.add(node.name);
      for (const arg of node.args) callsOf(arg, into);
      break;
    case 'negate':
      into.add('unary -');
      callsOf(node.operand, into);
      break;
    case 'binary':
      into.add(node.operator);
      callsOf(node.left, into);
      callsOf(node.right, into);
      break;
  }
  return into;
}

/** Whether `value` is in the API shape of a `type` result. */
function hasShape(value: unknown, type: FormulaType): boolean {
  switch (type) {
    case 'text':
      return value === null || (typeof value === 'string' && value !== '');
    case 'number':
      return value === null || (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0));
    case 'checkbox':
      return typeof value === 'boolean';
    case 'date':
      return value === null || (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value));
    case 'datetime':
      return (
        value === null ||
        (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value))
      );
    case 'array':
      return Array.isArray(value) && value.every((item) => typeof item === 'string');
  }
}

describe("the oracle on Airtable's examples and the section's edge cases", () => {
  it.each(FORMULA_EXAMPLES.map((example) => [example.written, example] as const))('%s', (_, example) => {
    expect(
      evaluateFormula(example.formula, exampleFieldTypes(example), exampleRecord(example), EXAMPLE_NOW),
    ).toEqual(example.expected);
  });

  it('has a documented example and an edge case for every function of the catalogue', () => {
    const documented = new Set<string>();
    const edges = new Set<string>();
    for (const example of FORMULA_EXAMPLES) {
      for (const name of callsOf(parseFormula(example.formula))) {
        (example.source === 'SEM' ? edges : documented).add(name);
      }
    }
    const needsDocs = formulaFunctionNames.filter((name) => !['NOW', 'TODAY'].includes(name));
    expect(needsDocs.filter((name) => !documented.has(name))).toEqual([]);
    expect(formulaFunctionNames.filter((name) => !edges.has(name))).toEqual([]);
  });

  it('gives every example a result of the shape its type has', () => {
    for (const example of FORMULA_EXAMPLES) {
      const fields = [...exampleFieldTypes(example)].map(([id, type]) => ({ id, name: id, type }));
      const { type } = inferFormula(parseFormula(example.formula), fields);
      expect([example.written, hasShape(example.expected, type)]).toEqual([example.written, true]);
    }
  });
});

describe('conversions', () => {
  it('writes numbers as JavaScript does, never -0', () => {
    expect(run('1e21 & ""')).toBe('1e+21');
    expect(run('1e-7 & ""')).toBe('1e-7');
    expect(run('0.000001 & ""')).toBe('0.000001');
    expect(run('-0 & ""')).toBe('0');
    expect(run('(0 * -1) & ""')).toBe('0');
    expect(run('-(0)')).toBe(0);
    expect(Object.is(run('-(0)'), -0)).toBe(false);
    expect(run('2.50 & ""')).toBe('2.5');
    expect(run('{Number} & ""', { Number: 123456789.125 })).toBe('123456789.125');
  });

  it('writes checkboxes 1/0, dates and datetimes in ISO form, arrays joined with ", "', () => {
    expect(run('{Check} & {Check}', { Check: true })).toBe('11');
    expect(run('{Check} & ""', {})).toBe('0');
    expect(run('{Date} & ""', { Date: '2024-02-29' })).toBe('2024-02-29');
    expect(run('{Datetime} & ""', { Datetime: '1900-01-01T00:00:00.000Z' })).toBe('1900-01-01T00:00:00.000Z');
    expect(run('{Tags} & ""', { Tags: ['a', 'b, c'] })).toBe('a, b, c');
    expect(run('{Tags} & ""', { Tags: [] })).toBeNull();
  });

  it('converts IF and SWITCH branches to the unified type', () => {
    expect(run('IF({Check}, 1, "a")', { Check: true })).toBe('1');
    expect(run('IF({Check}, 1, "a")', { Check: false })).toBe('a');
    expect(run('IF({Check}, {Date}, {Datetime})', { Check: true, Date: '2024-01-31' })).toBe(
      '2024-01-31T00:00:00.000Z',
    );
    expect(run('IF({Check}, {Date}, BLANK())', { Check: false, Date: '2024-01-31' })).toBeNull();
    expect(run('IF({Check}, {Number}, {Check})', { Check: true })).toBeNull();
    expect(run('IF({Check}, {Number}, {Check})', { Check: false })).toBe('0');
    expect(run('SWITCH({Text}, "a", {Tags}, "b", 2)', { Text: 'a', Tags: ['x', 'y'] })).toBe('x, y');
    expect(run('IF({Check}, {Tags})', { Check: false })).toEqual([]);
  });

  it('reads text as a number the way VALUE does; blank is 0 only in arithmetic', () => {
    expect(run('"$1,234.5" * 2')).toBe(2469);
    expect(run('"50%" + 0')).toBe(0.5);
    expect(run('"1 2" + 1')).toBe(1);
    expect(run('{Tags} + 1', { Tags: ['1'] })).toBe(1);
    expect(run('-{Text}', { Text: '3' })).toBe(-3);
    expect(run('ABS({Number})')).toBeNull();
    expect(run('{Number} - 1')).toBe(-1);
  });

  it('tests truthiness: 0, "", blank, [] are false; a date is true', () => {
    expect(run('AND({Number})', { Number: 0.1 })).toBe(true);
    expect(run('AND({Number})', { Number: 0 })).toBe(false);
    expect(run('AND({Text})', { Text: ' ' })).toBe(true);
    expect(run('AND({Text})', { Text: '' })).toBe(false);
    expect(run('AND({Date})', { Date: '1900-01-01' })).toBe(true);
    expect(run('AND({Datetime})')).toBe(false);
    expect(run('OR({Tags})', { Tags: [] })).toBe(false);
    expect(run('IF({Check}, 1)')).toBeNull();
  });

  it('reads an empty text field as blank', () => {
    expect(run('{Text}', { Text: '' })).toBeNull();
    expect(run('ARRAYUNIQUE({Text})', { Text: '' })).toEqual([]);
    expect(run('ARRAYUNIQUE({Text})', { Text: ' ' })).toEqual([' ']);
  });
});

describe('comparisons', () => {
  it('compares numbers and checkboxes as numbers, blank as 0', () => {
    expect(run('{Number} = 0')).toBe(true);
    expect(run('{Number} < 1')).toBe(true);
    expect(run('{Number} > -1')).toBe(true);
    expect(run('BLANK() = 0')).toBe(true);
    expect(run('{Check} = 0')).toBe(true);
    expect(run('{Check} < 1', { Check: true })).toBe(false);
    expect(run('TRUE() = 1')).toBe(true);
    expect(run('0.1 + 0.2 = 0.3')).toBe(false);
  });

  it('compares dates and datetimes as instants: blank equals only blank and orders nothing', () => {
    expect(run('{Date} = {Datetime}', { Date: '2024-01-31', Datetime: '2024-01-31T00:00:00.000Z' })).toBe(
      true,
    );
    expect(run('{Date} < {Datetime}', { Date: '2024-01-31', Datetime: '2024-01-31T00:00:00.001Z' })).toBe(
      true,
    );
    expect(run('{Date} = {Datetime}')).toBe(true);
    expect(run('{Date} != {Datetime}', { Date: '2024-01-31' })).toBe(true);
    expect(run('{Date} <= {Datetime}')).toBe(false);
    expect(run('{Date} >= {Datetime}')).toBe(false);
    expect(run('{Date} < {Datetime}', { Date: '2024-01-31' })).toBe(false);
    expect(run('{Date} = BLANK()')).toBe(true);
    expect(run('{Date} >= BLANK()', { Date: '2024-01-31' })).toBe(false);
  });

  it('reads text beside a date as a date, and text that does not parse as blank', () => {
    expect(run('{Date} = "01/31/2024"', { Date: '2024-01-31' })).toBe(true);
    expect(run('"31 jan 2024" = {Date}', { Date: '2024-01-31' })).toBe(true);
    expect(run('{Date} > "2024-01-30T23:59:59.999Z"', { Date: '2024-01-31' })).toBe(true);
    expect(run('{Date} = "tomorrow"')).toBe(true);
    expect(run('{Date} = "tomorrow"', { Date: '2024-01-31' })).toBe(false);
    expect(run('{Date} < "tomorrow"', { Date: '2024-01-31' })).toBe(false);
  });

  it('compares anything else as text, by code point', () => {
    expect(run('{Text} = ""')).toBe(true);
    expect(run('{Text} = BLANK()')).toBe(true);
    expect(run('{Text} = "abc"', { Text: 'ABC' })).toBe(false);
    expect(run('{Text} = " abc"', { Text: 'abc' })).toBe(false);
    expect(run('{Number} = "2.5"', { Number: 2.5 })).toBe(true);
    expect(run('{Number} < "10"', { Number: 9 })).toBe(false);
    expect(run('{Tags} = "a, b"', { Tags: ['a', 'b'] })).toBe(true);
    expect(run('{Tags} = ""', { Tags: [] })).toBe(true);
    expect(run('{Date} = 5', { Date: '2024-01-31' })).toBe(false);
    expect(run('{Date} > 5', { Date: '2024-01-31' })).toBe(false);
    expect(run('"Ä" > "Z"')).toBe(true);
    expect(run('"a" < "ab"')).toBe(true);
    expect(run('"😀" > "\uffff"')).toBe(true);
    expect(run('"B" < "a"')).toBe(true);
  });
});

describe('text as a date', () => {
  // The texts hold no quote or backslash: written as they are, tabs and all.
  const at = (text: string) => run(`DATEADD("${text}", 0, "days")`);

  it('reads ISO dates and times, with offsets and fractions cut to the millisecond', () => {
    expect(at('2024-02-29')).toBe('2024-02-29T00:00:00.000Z');
    expect(at('  2024-02-29\t')).toBe('2024-02-29T00:00:00.000Z');
    expect(at('2024-02-29T10:20')).toBe('2024-02-29T10:20:00.000Z');
    expect(at('2024-02-29 10:20:30')).toBe('2024-02-29T10:20:30.000Z');
    expect(at('2024-02-29T10:20:30.5')).toBe('2024-02-29T10:20:30.500Z');
    expect(at('2024-02-29T10:20:30.123456Z')).toBe('2024-02-29T10:20:30.123Z');
    expect(at('2024-02-29T10:20:30.999999Z')).toBe('2024-02-29T10:20:30.999Z');
    expect(at('2024-02-29T10:20:30+02:00')).toBe('2024-02-29T08:20:30.000Z');
    expect(at('2024-02-29T10:20-0130')).toBe('2024-02-29T11:50:00.000Z');
    expect(at('2024-02-29T23:30:00-01:00')).toBe('2024-03-01T00:30:00.000Z');
  });

  it('reads US dates, two-digit years 00–68 as 20xx and 69–99 as 19xx', () => {
    expect(at('2/29/2024')).toBe('2024-02-29T00:00:00.000Z');
    expect(at('02/09/2024 7:05')).toBe('2024-02-09T07:05:00.000Z');
    expect(at('12/31/1999 23:59:59')).toBe('1999-12-31T23:59:59.000Z');
    expect(at('1/1/00')).toBe('2000-01-01T00:00:00.000Z');
    expect(at('1/1/68')).toBe('2068-01-01T00:00:00.000Z');
    expect(at('1/1/69')).toBe('1969-01-01T00:00:00.000Z');
    expect(at('1/1/99')).toBe('1999-01-01T00:00:00.000Z');
  });

  it('reads day, month name and year', () => {
    expect(at('4 Mar 2017 7:00')).toBe('2017-03-04T07:00:00.000Z');
    expect(at('29 february 2024')).toBe('2024-02-29T00:00:00.000Z');
    expect(at('1 DEC 1900 0:00:01')).toBe('1900-12-01T00:00:01.000Z');
  });

  it('gives blank for impossible dates and times and for anything else', () => {
    for (const text of [
      '2023-02-29',
      '2024-02-30',
      '2024-04-31',
      '2024-00-10',
      '2024-13-01',
      '2024-01-00',
      '2024-01-01T24:00',
      '2024-01-01T10:60',
      '2024-01-01T10:00:60',
      '2024-01-01T10:00+24:00',
      '2/29/2023',
      '13/1/2024',
      '1/32/2024',
      '1/1/024',
      '30 Feb 2024',
      '1 Foo 2024',
      '1 Sept 2024',
      '2024-1-1',
      '2024-01-01T10',
      '2024-01-01Z',
      '2024-01-01T10:00:00.1234567',
      '0000-12-31',
      'today',
      '',
      '2024/01/01',
    ]) {
      expect([text, at(text)]).toEqual([text, null]);
    }
  });

  it('keeps instants within the years 1–9999', () => {
    expect(at('0001-01-01')).toBe('0001-01-01T00:00:00.000Z');
    expect(at('0001-01-01T00:30+01:00')).toBeNull();
    expect(at('9999-12-31T23:59:59.999Z')).toBe('9999-12-31T23:59:59.999Z');
    expect(at('9999-12-31T23:00-01:00')).toBeNull();
  });
});

describe('DATEADD and DATETIME_DIFF', () => {
  it('clamps month steps to the last day of the month, keeping the time of day', () => {
    expect(run('DATEADD("2024-01-31", 1, "months")')).toBe('2024-02-29T00:00:00.000Z');
    expect(run('DATEADD("2024-03-31", -1, "months")')).toBe('2024-02-29T00:00:00.000Z');
    expect(run('DATEADD("2024-05-31T12:34:56.789Z", 1, "M")')).toBe('2024-06-30T12:34:56.789Z');
    expect(run('DATEADD("2024-02-29", 4, "years")')).toBe('2028-02-29T00:00:00.000Z');
    expect(run('DATEADD("2024-02-29", -1, "y")')).toBe('2023-02-28T00:00:00.000Z');
    expect(run('DATEADD("2023-11-30", 1, "quarters")')).toBe('2024-02-29T00:00:00.000Z');
    expect(run('DATEADD("1900-01-31", 1, "month")')).toBe('1900-02-28T00:00:00.000Z');
    expect(run('DATEADD({Date}, 13, "months")', { Date: '2023-01-31' })).toBe('2024-02-29T00:00:00.000Z');
  });

  it('counts whole months from b to a, mirrored when a is earlier', () => {
    const months = (a: string, b: string) => run(`DATETIME_DIFF("${a}", "${b}", "months")`);
    expect(months('2024-02-29', '2024-01-31')).toBe(0);
    expect(months('2024-01-31', '2024-02-29')).toBe(0);
    expect(months('2024-03-31', '2024-01-31')).toBe(2);
    expect(months('2024-01-31', '2024-03-31')).toBe(-2);
    expect(months('2024-01-15', '2024-03-10')).toBe(-1);
    expect(months('2024-03-10', '2024-01-15')).toBe(1);
    expect(months('2024-03-15T10:00', '2024-01-15T10:00:00.001')).toBe(1);
    expect(months('2024-01-15T10:00:00.001', '2024-03-15T10:00')).toBe(-1);
    expect(run('DATETIME_DIFF("2024-01-01", "2022-01-02", "years")')).toBe(1);
    expect(run('DATETIME_DIFF("2022-01-02", "2024-01-01", "years")')).toBe(-1);
    expect(run('DATETIME_DIFF("2024-01-01", "2024-06-01", "Q")')).toBe(-1);
  });

  it('truncates toward zero and takes unknown units as seconds', () => {
    expect(run('DATETIME_DIFF("2024-01-01T00:00:59", "2024-01-01", "m")')).toBe(0);
    expect(run('DATETIME_DIFF("2024-01-01", "2024-01-01T00:00:59", "minutes")')).toBe(0);
    expect(run('DATETIME_DIFF("2024-01-01", "2024-01-01T00:01:01", "minutes")')).toBe(-1);
    expect(run('DATETIME_DIFF("2024-01-03", "2024-01-01", "D")')).toBe(172800);
    expect(run('DATETIME_DIFF("2024-01-03", "2024-01-01", BLANK())')).toBe(172800);
  });
});

describe('numbers', () => {
  it('rounds ties toward +∞ with exact powers of ten', () => {
    expect(run('ROUND(-2.5)')).toBe(-2);
    expect(run('ROUND(2.5)')).toBe(3);
    expect(run('ROUND(-0.5)')).toBe(0);
    expect(run('ROUND(0.125, 2)')).toBe(0.13);
    expect(run('ROUND(-0.125, 2)')).toBe(-0.12);
    expect(run('ROUND(-250, -2)')).toBe(-200);
    expect(run('ROUND(1.5e-22, 22)')).toBe(2e-22);
    expect(run('ROUND(123, -23)')).toBe(0);
    expect(run('ROUNDUP(0.0001, 3)')).toBe(0.001);
    expect(run('ROUNDDOWN(-123.456, -1)')).toBe(-120);
  });

  it('computes MOD as a − b × trunc(a ÷ b)', () => {
    expect(run('MOD(-7, 3)')).toBe(-1);
    expect(run('MOD(7, -3)')).toBe(1);
    expect(run('MOD(-7, -3)')).toBe(-1);
    expect(run('MOD(1e300, 1e-300)')).toBeNull();
  });

  it('makes every non-finite result blank where it arises', () => {
    expect(run('1e308 + 1e308')).toBeNull();
    expect(run('(1e308 + 1e308) - 1e308')).toBe(-1e308);
    expect(run('0 / 0')).toBeNull();
    expect(run('-(1e308 * 10)')).toBe(0);
    expect(run('SQRT(-4) & "x"')).toBe('x');
    expect(run('AVERAGE(1e308, 1e308)')).toBeNull();
    expect(run('MAX(1e308, -1e308)')).toBe(1e308);
  });
});

describe('refusals', () => {
  it('refuses arithmetic on a date other than date − date, as saving the formula does', () => {
    expect(() => run('{Date} + 1')).toThrow(/DATEADD/);
    expect(() => run('-{Datetime}')).toThrow(/DATEADD/);
    expect(() => run('{Date} - BLANK()')).toThrow(/DATEADD/);
    expect(() => run('{Date} * 1')).toThrow(/DATEADD/);
    expect(run('{Date} - {Datetime}')).toBeNull();
  });

  it('refuses record values that are not in API shape', () => {
    expect(() => run('{Number}', { Number: '3' })).toThrow(/not an API value/);
    expect(() => run('{Date}', { Date: '2024-01-01T00:00:00.000Z' })).toThrow(/not an API value/);
    expect(() => run('{Tags}', { Tags: 'a' })).toThrow(/not an API value/);
  });
});

describe('generated formulas', () => {
  it('parse, infer and evaluate on generated records to results of their type', () => {
    fc.assert(
      fc.property(formulaCaseArbitrary(), ({ table, expression, records }) => {
        const types = formulaFieldTypes(table);
        const fields = [...types].map(([id, type]) => ({ id, name: id, type }));
        const { type } = inferFormula(parseFormula(expression), fields);
        for (const record of records) {
          const result = evaluateFormula(expression, types, record, NOW);
          if (!hasShape(result, type)) throw new Error(`${JSON.stringify(result)} is no ${type}`);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('call every function and use every operator, field type and NOW/TODAY only when asked', () => {
    const seen = new Set<string>();
    const seenWithNow = new Set<string>();
    const fieldTypes = new Set<FormulaType>();
    const tables = fc.sample(tableArbitrary, { numRuns: 20, seed: 7 });
    for (const [i, table] of tables.entries()) {
      for (const field of table.fields) fieldTypes.add(FORMULA_TYPE_OF_FIELD[field.type]);
      for (const expression of fc.sample(expressionArbitrary(table), { numRuns: 200, seed: 11 + i })) {
        callsOf(parseFormula(expression), seen);
      }
      for (const expression of fc.sample(expressionArbitrary(table, { withNow: true }), {
        numRuns: 100,
        seed: 1000 + i,
      })) {
        callsOf(parseFormula(expression), seenWithNow);
      }
    }
    const everything = [
      ...formulaFunctionNames,
      '+',
      '-',
      '*',
      '/',
      '&',
      '=',
      '!=',
      '<',
      '>',
      '<=',
      '>=',
      'unary -',
    ];
    expect(everything.filter((name) => !seen.has(name))).toEqual(['TODAY', 'NOW']);
    expect(['NOW', 'TODAY'].filter((name) => !seenWithNow.has(name))).toEqual([]);
    expect(fieldTypes.size).toBe(6);
  });

  it('draw field ids of the project pattern and record values in API shape', () => {
    fc.assert(
      fc.property(tableArbitrary, (table) => {
        for (const field of table.fields) expect(field.id).toMatch(/^fld[0-9A-Za-z]{14}$/);
        expect(new Set(table.fields.map((field) => field.id)).size).toBe(table.fields.length);
      }),
      { numRuns: 50 },
    );
  });
});
