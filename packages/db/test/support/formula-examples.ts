import { fieldTypeOfResult } from '../../src/field-types/formula';
import type { FormulaType } from '../../src/formula';
import type { OracleFieldType } from './formula-arbitraries';
import type { OracleRecord } from './formula-oracle';

/**
 * Airtable's documented examples for every function, as docs/formulas.md's tables record them
 * (with their source tags), and edge cases of the section "The semantics as built" (tag SEM):
 * what the oracle must give, and the SQL compiler after it.
 */

/** docs/formulas.md's source tags; `ours` marks the tables' own examples, SEM the section's rules. */
export type ExampleSource =
  | 'REF'
  | 'REF*'
  | 'REF**'
  | 'M2'
  | 'SW'
  | 'XN'
  | 'DD'
  | 'ARR'
  | 'C1'
  | 'ours'
  | 'SEM';

export interface ExampleField {
  /** The name the example's written formula uses. */
  name: string;
  /** How it reads in a formula. */
  type: FormulaType;
  /** The project field type to create for it. */
  fieldType: OracleFieldType;
  /** In API shape. */
  value: unknown;
}

export interface FormulaExample {
  /** The formula as a user writes it, fields by name. */
  written: string;
  /** The same in stored form: fields by id. */
  formula: string;
  /** By field id. */
  fields: Readonly<Record<string, ExampleField>>;
  /** The result in API shape. */
  expected: unknown;
  source: ExampleSource;
  /** Where our result differs from what Airtable shows, or what the example needs. */
  note?: string;
}

/** The one `now` every example is evaluated at (NOW() and TODAY() examples depend on it). */
export const EXAMPLE_NOW = new Date('2024-02-29T13:14:15.678Z');

/** The record every example is evaluated on, its values aside. */
export const EXAMPLE_RECORD: Omit<OracleRecord, 'values'> = {
  id: '018d6a2e-4f1b-7c3a-9e2d-5b8f0a1c2d3e',
  createdAt: '2024-01-15T08:30:00.000Z',
  updatedAt: '2024-02-20T17:45:12.345Z',
};

/** The record of one example, its field values in place. */
export function exampleRecord(example: FormulaExample): OracleRecord {
  return {
    ...EXAMPLE_RECORD,
    values: Object.fromEntries(Object.entries(example.fields).map(([id, field]) => [id, field.value])),
  };
}

/** The fields' formula types by id, as evaluateFormula takes them. */
export function exampleFieldTypes(example: FormulaExample): Map<string, FormulaType> {
  return new Map(Object.entries(example.fields).map(([id, field]) => [id, field.type]));
}

const FIELD_TYPE_OF = (type: FormulaType) => fieldTypeOfResult(type) as OracleFieldType;

/** A field id made from its name: `fld` and 14 letters and digits. */
const idOf = (name: string) =>
  `fld${name
    .replace(/[^A-Za-z0-9]/g, '')
    .padEnd(14, '0')
    .slice(0, 14)}`;

type Fields = Readonly<Record<string, readonly [FormulaType, unknown]>>;

function example(
  written: string,
  expected: unknown,
  source: ExampleSource,
  fields: Fields = {},
  note?: string,
): FormulaExample {
  const formula = written.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (!(name in fields)) throw new Error(`example ${written} names {${name}} without a value for it`);
    return `{${idOf(name)}}`;
  });
  const byId = Object.fromEntries(
    Object.entries(fields).map(([name, [type, value]]) => [
      idOf(name),
      { name, type, fieldType: FIELD_TYPE_OF(type), value },
    ]),
  );
  return { written, formula, fields: byId, expected, source, ...(note === undefined ? {} : { note }) };
}

const ex = example;

/** Fields most edge cases use. */
const EMPTY: Fields = {
  'No number': ['number', null],
  'No text': ['text', null],
  'No date': ['date', null],
  'No tags': ['array', []],
};
const LEAP: Fields = {
  Day: ['date', '2024-02-29'],
  At: ['datetime', '2024-02-29T23:59:59.999Z'],
  Tags: ['array', ['10', '2.5', 'Red']],
};

const OPERATORS: FormulaExample[] = [
  ex('{Price} + {Tax}', 12.5, 'REF', { Price: ['number', 10], Tax: ['number', 2.5] }, 'inputs ours'),
  ex(
    '{End Date} - {Start Date}',
    2,
    'REF',
    { 'End Date': ['date', '2024-03-01'], 'Start Date': ['date', '2024-02-28'] },
    'inputs ours; the unit (days) is the section’s',
  ),
  ex(
    '{Qty} * {Unit Price}',
    3.75,
    'REF',
    { Qty: ['number', 3], 'Unit Price': ['number', 1.25] },
    'inputs ours',
  ),
  ex('{Total} / {Count}', 2.5, 'REF', { Total: ['number', 10], Count: ['number', 4] }, 'inputs ours'),
  ex(
    '{First Name} & " " & {Last Name}',
    'Ada Lovelace',
    'REF',
    { 'First Name': ['text', 'Ada'], 'Last Name': ['text', 'Lovelace'] },
    'inputs ours',
  ),
  ex('{Status} = "Done"', true, 'REF', { Status: ['text', 'Done'] }, 'inputs ours'),
  ex('{Status} != "Done"', false, 'REF', { Status: ['text', 'Done'] }, 'inputs ours'),
  ex('{Score} >= 90', true, 'REF', { Score: ['number', 90] }, 'inputs ours'),
  // The section's rules on operators.
  ex('"3" + 1', 4, 'SEM'),
  ex('"abc" + 1', 1, 'SEM', {}, 'text that is no number is blank, and blank is 0 in arithmetic'),
  ex('{No number} * 2', 0, 'SEM', EMPTY),
  ex('1 / 0', null, 'SEM'),
  ex('1 / 0 + 1', 1, 'SEM'),
  ex('1e308 * 10', null, 'SEM'),
  ex('1e-320 * 1e-10', 0, 'SEM'),
  ex('-(0)', 0, 'SEM', {}, 'the API has no -0'),
  ex('0.1 + 0.2 & ""', '0.30000000000000004', 'SEM'),
  ex('1e21 & ""', '1e+21', 'SEM'),
  ex('1e-7 & ""', '1e-7', 'SEM'),
  ex('0.000001 & ""', '0.000001', 'SEM'),
  ex('-0 & ""', '0', 'SEM'),
  ex('TRUE() & FALSE() & BLANK()', '10', 'SEM'),
  ex('{Day} & " " & {At} & " " & {Tags}', '2024-02-29 2024-02-29T23:59:59.999Z 10, 2.5, Red', 'SEM', LEAP),
  ex('{At} - {Day}', 0.999999988425926, 'SEM', LEAP, 'a day less one millisecond: (a − b) / 86,400,000 ms'),
  ex('{Day} - {No date}', null, 'SEM', { ...LEAP, ...EMPTY }),
  ex('1 = "1"', true, 'SEM'),
  ex('1 = "1.0"', false, 'SEM', {}, 'number and text compare as text'),
  ex('TRUE() = 1', true, 'SEM'),
  ex('{No number} = 0', true, 'SEM', EMPTY),
  ex('{No text} = ""', true, 'SEM', EMPTY),
  ex('{No date} = BLANK()', true, 'SEM', EMPTY),
  ex('{No date} = "not a date"', true, 'SEM', EMPTY, 'a text that does not parse compares as blank'),
  ex('{No date} < "2024-01-01"', false, 'SEM', EMPTY),
  ex('{Day} < BLANK()', false, 'SEM', LEAP),
  ex('{Day} = "2024-02-29T00:00:00Z"', true, 'SEM', LEAP),
  ex('{Day} < {At}', true, 'SEM', LEAP),
  ex('BLANK() < 1', true, 'SEM'),
  ex('BLANK() = BLANK()', true, 'SEM'),
  ex('"Z" < "a"', true, 'SEM'),
  ex('"é" > "z"', true, 'SEM'),
  ex('"😀" > "～"', true, 'SEM', {}, 'by code point (U+1F600 > U+FF5E), unlike UTF-16 order'),
  ex('{Tags} = "10, 2.5, Red"', true, 'SEM', LEAP),
  ex('"abc" >= "abc"', true, 'SEM'),
  ex('2 <= 1', false, 'SEM'),
];

const LOGIC: FormulaExample[] = [
  ex(
    'IF({Sales Tax} * {Price} > 100, "This is over 100", "This is less than 100")',
    'This is over 100',
    'REF',
    { 'Sales Tax': ['number', 2], Price: ['number', 60] },
    'inputs ours',
  ),
  ex('SWITCH(4, 1, "one", 2, "two", "many")', 'many', 'SW'),
  ex('AND(TRUE(), 1, "a")', true, 'ours'),
  ex('OR(FALSE(), 0, "")', false, 'ours'),
  ex('NOT(100 > 75)', false, 'XN'),
  ex('100 > 75', true, 'XN'),
  ex('IF(XOR({Checkbox 1}, {Checkbox 2}), "Missing Checkmark")', 'Missing Checkmark', 'XN', {
    'Checkbox 1': ['checkbox', true],
    'Checkbox 2': ['checkbox', false],
  }),
  ex('IF(XOR({Checkbox 1}, {Checkbox 2}), "Missing Checkmark")', null, 'XN', {
    'Checkbox 1': ['checkbox', true],
    'Checkbox 2': ['checkbox', true],
  }),
  ex('IF(BLANK() = "", "Same", "Different")', 'Same', 'C1'),
  ex('IF(BLANK() = 0, "Same", "Different")', 'Same', 'C1'),
  ex('IF(2 = 2, TRUE(), FALSE())', true, 'ours'),
  ex('FALSE() + 1', 1, 'ours'),
  // The section's rules.
  ex('IF(TRUE(), 1, "a")', '1', 'SEM', {}, 'a mixed result is text'),
  ex('IF(FALSE(), 1)', null, 'SEM'),
  ex('IF({No text}, "y", "n")', 'n', 'SEM', EMPTY),
  ex('IF("0", "y", "n")', 'y', 'SEM', {}, 'a non-empty text is truthy'),
  ex('IF(0, "y", "n")', 'n', 'SEM'),
  ex('IF({No tags}, "y", "n")', 'n', 'SEM', EMPTY),
  ex('IF({Day}, "y", "n")', 'y', 'SEM', LEAP),
  ex('IF(TRUE(), {Day}, {At})', '2024-02-29T00:00:00.000Z', 'SEM', LEAP, 'a date where a datetime is wanted'),
  ex('IF(TRUE(), TRUE(), 5)', '1', 'SEM'),
  ex('IF(TRUE(), BLANK(), 5)', null, 'SEM'),
  ex('IF(TRUE(), {Tags})', ['10', '2.5', 'Red'], 'SEM', LEAP),
  ex('IF(FALSE(), {Tags})', [], 'SEM', LEAP),
  ex('SWITCH({No number}, BLANK(), "blank", "other")', 'blank', 'SEM', EMPTY),
  ex('SWITCH({No text}, "", "empty")', 'empty', 'SEM', EMPTY),
  ex('SWITCH(1, "1", "text one")', 'text one', 'SEM'),
  ex('SWITCH(2, 2, "a", 2, "b")', 'a', 'SEM'),
  ex('SWITCH(3, "default")', 'default', 'SEM'),
  ex('SWITCH(5, 1, "one")', null, 'SEM'),
  ex('SWITCH({Day}, "2024-02-29", "leap")', 'leap', 'SEM', LEAP),
  ex('SWITCH(1, 1, 10, 2, "x")', '10', 'SEM'),
  ex('AND({No tags})', false, 'SEM', EMPTY),
  ex('AND({Tags}, "0")', true, 'SEM', LEAP),
  ex('AND(BLANK())', false, 'SEM'),
  ex('OR(BLANK(), 0, "", {No date})', false, 'SEM', EMPTY),
  ex('OR({Day})', true, 'SEM', LEAP),
  ex('XOR(TRUE(), TRUE(), TRUE())', true, 'SEM'),
  ex('XOR(1, "a")', false, 'SEM'),
  ex('NOT(BLANK())', true, 'SEM'),
  ex('NOT({No tags})', true, 'SEM', EMPTY),
  ex('BLANK()', null, 'SEM'),
  ex('BLANK() & "x"', 'x', 'SEM'),
  ex('TRUE() + TRUE()', 2, 'SEM'),
  ex('TRUE', true, 'SEM', {}, 'without parentheses, as in Airtable'),
  ex('FALSE() & ""', '0', 'SEM'),
];

const NUMBERS: FormulaExample[] = [
  ex('ABS(-1)', 1, 'M2'),
  ex('ROUND(1.99, 0)', 2, 'M2'),
  ex('ROUND(16.8, -1)', 20, 'M2'),
  ex('ROUND(2.5)', 3, 'ours'),
  ex('ROUND(-2.5)', -2, 'ours'),
  ex('ROUNDUP(1.1, 0)', 2, 'M2'),
  ex('ROUNDUP(-1.1, 0)', -2, 'M2'),
  ex('ROUNDDOWN(1.9, 0)', 1, 'M2'),
  ex('ROUNDDOWN(-1.9, 0)', -1, 'M2'),
  ex('CEILING(1.05, 0.1)', 1.1, 'REF**'),
  ex('CEILING(-2.5)', -2, 'ours'),
  ex('FLOOR(1.99, 0.1)', 1.9, 'REF**'),
  ex('FLOOR(-2.5)', -3, 'ours'),
  ex('INT(1.9)', 1, 'M2'),
  ex('INT(-1.9)', -2, 'M2'),
  ex('MOD(9, 2)', 1, 'M2'),
  ex('MOD(9, 3)', 0, 'M2'),
  ex('MOD(-7, 3)', -1, 'ours'),
  ex('MOD(5.5, 2)', 1.5, 'ours'),
  ex('POWER(2, 3)', 8, 'ours'),
  ex('POWER(-8, 1/3)', null, 'ours'),
  ex('SQRT(4)', 2, 'M2'),
  ex('EXP(0)', 1, 'M2'),
  ex('EXP(1)', Math.E, 'M2', {}, 'the full double 2.718281828459045'),
  ex('LOG(100)', 2, 'M2'),
  ex('LOG(1024, 2)', 10, 'M2'),
  ex('MIN(100, 200, 300)', 100, 'M2'),
  ex('MAX(100, 200, 300)', 300, 'M2'),
  ex('SUM(100, 200, 300)', 600, 'M2'),
  ex('AVERAGE(100, 200, 300)', 200, 'M2'),
  ex('VALUE("$1,000,000")', 1000000, 'M2'),
  // The section's rules.
  ex('ABS({No number})', null, 'SEM', EMPTY, 'a blank argument of a number function gives blank'),
  ex('ABS("-3")', 3, 'SEM'),
  ex('ROUND(1234.5678, -2)', 1200, 'SEM'),
  ex('ROUND(1.005, 2)', 1, 'SEM', {}, '1.005 × 100 is 100.49999999999999 in doubles'),
  ex('ROUND(1.25, 1.7)', 1.3, 'SEM', {}, 'precision truncated to 1; the tie goes up'),
  ex('ROUND(-1.25, 1)', -1.2, 'SEM', {}, 'ties toward +∞'),
  ex('ROUND(5, 30)', 5, 'SEM', {}, 'precision clamped to 22'),
  ex('ROUND(1e300, 22)', null, 'SEM', {}, 'x × 1e22 overflows'),
  ex('ROUND(-0.4)', 0, 'SEM'),
  ex('ROUND(-0.6)', -1, 'SEM'),
  ex('ROUND(2.5, BLANK())', null, 'SEM'),
  ex('ROUNDUP(1.21, 1)', 1.3, 'SEM'),
  ex('ROUNDUP(-1.1)', -2, 'SEM'),
  ex('ROUNDUP(1234, -2)', 1300, 'SEM'),
  ex('ROUNDDOWN(-1.99, 1)', -1.9, 'SEM'),
  ex('ROUNDDOWN(1299, -2)', 1200, 'SEM'),
  ex('ROUNDDOWN(-0.5)', 0, 'SEM'),
  ex('CEILING(5, 0)', null, 'SEM'),
  ex('CEILING(2.1, -2)', 4, 'SEM', {}, 'a negative significance counts as its absolute value'),
  ex('CEILING(-2.5, 2)', -2, 'SEM'),
  ex('FLOOR(5, 0)', null, 'SEM'),
  ex('FLOOR(-2.5, 2)', -4, 'SEM'),
  ex('FLOOR(7, -2)', 6, 'SEM'),
  ex('INT(-0.5)', -1, 'SEM'),
  ex('INT("2.9")', 2, 'SEM'),
  ex('MOD(5, 0)', null, 'SEM'),
  ex('MOD(7, -3)', 1, 'SEM'),
  ex('MOD(-7.5, 2)', -1.5, 'SEM'),
  ex('POWER(0, -1)', null, 'SEM'),
  ex('POWER(2, -3)', 0.125, 'SEM'),
  ex('POWER(BLANK(), 2)', null, 'SEM'),
  ex('SQRT(-1)', null, 'SEM'),
  ex('SQRT(16)', 4, 'SEM'),
  ex('EXP(1000)', null, 'SEM'),
  ex('EXP(-1000)', 0, 'SEM'),
  ex('LOG(0)', null, 'SEM'),
  ex('LOG(-1)', null, 'SEM'),
  ex('LOG(8, 1)', null, 'SEM'),
  ex('LOG(8, -2)', null, 'SEM'),
  ex('LOG(1000)', 2.9999999999999996, 'SEM', {}, 'ln 1000 ÷ ln 10 in doubles'),
  ex('MIN({Tags})', 2.5, 'SEM', LEAP, 'array items read as VALUE reads them'),
  ex('MIN(BLANK(), {No number})', null, 'SEM', EMPTY),
  ex('MIN(TRUE(), 5)', 1, 'SEM'),
  ex('MIN("3", 4, "x")', 3, 'SEM'),
  ex('MIN({Day}, 5)', 5, 'SEM', LEAP),
  ex('MAX({No number})', null, 'SEM', EMPTY),
  ex('MAX(-1, BLANK())', -1, 'SEM'),
  ex('SUM(BLANK())', 0, 'SEM'),
  ex('SUM({Tags}, 1)', 13.5, 'SEM', LEAP),
  ex('SUM(1e308, 1e308)', null, 'SEM'),
  ex('AVERAGE(1, BLANK(), 2)', 1.5, 'SEM'),
  ex('AVERAGE("a")', null, 'SEM'),
  ex('VALUE(" -1.5e3 ")', -1500, 'SEM'),
  ex('VALUE("12%")', 0.12, 'SEM'),
  ex('VALUE("1.")', null, 'SEM'),
  ex('VALUE(".5")', 0.5, 'SEM'),
  ex('VALUE("€1,234.50")', 1234.5, 'SEM'),
  ex('VALUE("\t+7\n")', 7, 'SEM'),
  ex('VALUE("abc")', null, 'SEM'),
  ex('VALUE("1 000")', null, 'SEM'),
  ex('VALUE(TRUE())', 1, 'SEM'),
  ex('VALUE({Day})', null, 'SEM', LEAP),
  ex('VALUE("1e400")', null, 'SEM'),
];

const TEXT: FormulaExample[] = [
  ex('CONCATENATE("Bob", " - ", 43)', 'Bob - 43', 'REF*'),
  ex('LEN("quick brown fox")', 15, 'REF*'),
  ex('LOWER("Hello!")', 'hello!', 'REF*'),
  ex('UPPER("Hello!")', 'HELLO!', 'REF*'),
  ex('TRIM(" Hello! ")', 'Hello!', 'REF*'),
  ex('LEFT("quick brown fox", 5)', 'quick', 'REF*'),
  ex('RIGHT("quick brown fox", 5)', 'n fox', 'REF*'),
  ex(
    'MID("quick brown fox", 6, 5)',
    ' brow',
    'REF*',
    {},
    'Airtable’s page gives "brown", which reads the start from 0; 1-based positions (as FIND and REPLACE count) give " brow"',
  ),
  ex('FIND("fox", "quick brown fox")', 13, 'REF*'),
  ex('SEARCH("World", "Hello World")', 7, 'REF*'),
  ex('SUBSTITUTE("gold mold", "old", "et")', 'get met', 'REF*'),
  ex('REPLACE("database", 2, 5, "o")', 'dose', 'REF*'),
  ex('REPT("Hi! ", 3)', 'Hi! Hi! Hi! ', 'REF*'),
  ex('T("Hello")', 'Hello', 'REF*'),
  ex('T(100)', null, 'M2'),
  // The section's rules.
  ex('CONCATENATE(1.5, TRUE(), BLANK(), {Day})', '1.512024-02-29', 'SEM', LEAP),
  ex('CONCATENATE("", "")', null, 'SEM', {}, 'an empty text result is null'),
  ex('LEN(BLANK())', 0, 'SEM'),
  ex('LEN("a😀b")', 3, 'SEM', {}, 'code points'),
  ex('LEN(12.50)', 4, 'SEM'),
  ex('LOWER({No text})', null, 'SEM', EMPTY),
  ex('LOWER("ÄÖÜ É")', 'äöü é', 'SEM'),
  ex('UPPER("éñç")', 'ÉÑÇ', 'SEM'),
  ex('TRIM("\t a  b \r\n")', 'a  b', 'SEM'),
  ex('TRIM("   ")', null, 'SEM'),
  ex('LEFT("abc", -1)', null, 'SEM'),
  ex('LEFT("abc", 10)', 'abc', 'SEM'),
  ex('LEFT("a😀b", 2)', 'a😀', 'SEM'),
  ex('LEFT("abc", 1.9)', 'a', 'SEM'),
  ex('LEFT("abc", BLANK())', null, 'SEM'),
  ex('LEFT(12345, 2)', '12', 'SEM'),
  ex('RIGHT("a😀b", 2)', '😀b', 'SEM'),
  ex('RIGHT("abc", 0)', null, 'SEM'),
  ex('RIGHT("abc", 5)', 'abc', 'SEM'),
  ex('MID("abc", 0, 1)', null, 'SEM'),
  ex('MID("abc", 5, 2)', null, 'SEM', {}, 'past the end: "", which is null'),
  ex('MID("abc", 2, -1)', null, 'SEM'),
  ex('MID("abcdef", 2.9, 2.9)', 'bc', 'SEM'),
  ex('FIND("x", "abc")', 0, 'SEM'),
  ex('FIND("", "abc")', 1, 'SEM'),
  ex('FIND("", "abc", 4)', 4, 'SEM'),
  ex('FIND("", "abc", 5)', 0, 'SEM'),
  ex('FIND("b", "abcb", 3)', 4, 'SEM'),
  ex('FIND("B", "abc")', 0, 'SEM', {}, 'case-sensitive'),
  ex('FIND("a", "abc", -5)', 1, 'SEM'),
  ex('FIND("b", "😀b")', 2, 'SEM'),
  ex('FIND("a", "abc", BLANK())', null, 'SEM'),
  ex('SEARCH("x", "abc")', null, 'SEM'),
  ex('SEARCH("b", "abcb", 3.9)', 4, 'SEM'),
  ex('SEARCH("W", "hello world")', null, 'SEM', {}, 'case-sensitive like FIND'),
  ex('SUBSTITUTE("aaa", "aa", "b")', 'ba', 'SEM'),
  ex('SUBSTITUTE("a-b-c", "-", "+", 2)', 'a-b+c', 'SEM'),
  ex('SUBSTITUTE("aaaa", "aa", "b", 2)', 'aab', 'SEM', {}, 'occurrences counted without overlap'),
  ex('SUBSTITUTE("abc", "", "x")', 'abc', 'SEM'),
  ex('SUBSTITUTE("abc", "b", "x", 0)', 'abc', 'SEM'),
  ex('SUBSTITUTE("abc", "b", "x", 5)', 'abc', 'SEM'),
  ex('SUBSTITUTE("abc", "abc", "")', null, 'SEM'),
  ex(
    'SUBSTITUTE(REPT("ab", 25000), "a", "xy")',
    'xyb'.repeat(25000),
    'SEM',
    {},
    'growing to 75,000 code points',
  ),
  ex('SUBSTITUTE(REPT("ab", 50000), "a", "xy")', null, 'SEM', {}, 'growing past 100,000 code points'),
  ex('SUBSTITUTE(REPT("x", 100000), "x", REPT("y", 5000))', null, 'SEM', {}, 'which would build 500 MB'),
  ex('LEN(SUBSTITUTE(REPT("ab", 50000), "ab", "c"))', 50000, 'SEM', {}, 'shrinking a long text'),
  ex('REPLACE("abc", 10, 1, "x")', 'abcx', 'SEM'),
  ex('REPLACE("abc", 0, 1, "x")', null, 'SEM'),
  ex('REPLACE("abc", 1, -1, "x")', null, 'SEM'),
  ex('REPLACE("a😀c", 2, 1, "b")', 'abc', 'SEM'),
  ex('REPLACE("abc", 2, 0, "X")', 'aXbc', 'SEM'),
  ex('REPT("ab", 0)', null, 'SEM'),
  ex('REPT("ab", -1)', null, 'SEM'),
  ex('REPT("ab", 2.9)', 'abab', 'SEM'),
  ex('REPT("ab", 50000)', 'ab'.repeat(50000), 'SEM', {}, 'exactly 100,000 code points'),
  ex('REPT("ab", 50001)', null, 'SEM'),
  ex('T(BLANK())', null, 'SEM'),
  ex('T({Day})', null, 'SEM', LEAP),
  ex('T({Name})', 'Ada', 'SEM', { Name: ['text', 'Ada'] }),
];

const DATES: FormulaExample[] = [
  ex('YEAR("2021-06-09")', 2021, 'REF*'),
  ex('MONTH("02/17/2013 7:31")', 2, 'REF*'),
  ex('DAY("02/17/2013")', 17, 'REF*'),
  ex('HOUR("4 Mar 2017 7:00")', 7, 'REF*'),
  ex('MINUTE("02/17/2013 7:31")', 31, 'REF*'),
  ex('SECOND("02/17/2013 7:31:25")', 25, 'REF*'),
  ex('WEEKDAY("2021-06-09")', 3, 'REF*'),
  ex('WEEKDAY("2021-06-09", "Monday")', 2, 'ours'),
  ex('DATEADD("07/10/19", 10, "days")', '2019-07-20T00:00:00.000Z', 'REF*', {}, 'our result is a datetime'),
  ex('DATETIME_DIFF("04/06/2019 12:00", "04/05/2019 11:00", "hours")', 25, 'REF*'),
  ex('DATETIME_DIFF({Date}, {Date2}, "y")', 3, 'DD', {
    Date: ['date', '2024-06-01'],
    Date2: ['date', '2020-07-01'],
  }),
  ex('DATETIME_DIFF({Date}, {Date2}, "years")', 3, 'DD', {
    Date: ['date', '2024-06-01'],
    Date2: ['date', '2020-07-01'],
  }),
  ex('DATESTR("12/13/21")', '2021-12-13', 'REF*'),
  ex('IS_BEFORE("1/1/1979", "1/1/2000")', true, 'REF*'),
  ex('IS_AFTER("1/1/1979", "1/1/2000")', false, 'REF*'),
  // NOW and TODAY at EXAMPLE_NOW.
  ex('TODAY()', '2024-02-29', 'SEM'),
  ex('TODAY() = "2024-02-29"', true, 'SEM'),
  ex('NOW()', '2024-02-29T13:14:15.678Z', 'SEM'),
  ex('DATETIME_DIFF(NOW(), TODAY(), "minutes")', 794, 'SEM'),
  // The section's rules.
  ex('YEAR(BLANK())', null, 'SEM'),
  ex('YEAR("0000-01-01")', null, 'SEM', {}, 'outside the years 1–9999'),
  ex('YEAR("garbage")', null, 'SEM'),
  ex('YEAR("1/1/69")', 1969, 'SEM'),
  ex('YEAR("1/1/68")', 2068, 'SEM'),
  ex('YEAR("12/31/00")', 2000, 'SEM'),
  ex('YEAR({At})', 2024, 'SEM', LEAP),
  ex('MONTH("2024-13-01")', null, 'SEM'),
  ex('MONTH("31 Dec 1999")', 12, 'SEM'),
  ex('MONTH("3 SEPTEMBER 2017")', 9, 'SEM'),
  ex('MONTH("3 Sept 2017")', null, 'SEM', {}, 'a month is its full name or first three letters'),
  ex('DAY("2/29/2023")', null, 'SEM'),
  ex('DAY("2/29/2024")', 29, 'SEM'),
  ex('DAY("2024-01-31T23:00:00-05:00")', 1, 'SEM'),
  ex('HOUR({Day})', 0, 'SEM', LEAP),
  ex('HOUR("2024-01-01T24:00")', null, 'SEM'),
  ex('HOUR("2024-01-01 23:59")', 23, 'SEM'),
  ex('HOUR("2024-06-30T22:30:00+05:30")', 17, 'SEM'),
  ex('MINUTE("2024-06-30T22:30:00+0530")', 0, 'SEM'),
  ex('MINUTE("2024-01-01 10:60")', null, 'SEM'),
  ex('SECOND("2024-01-01T10:00:59.999Z")', 59, 'SEM'),
  ex('SECOND("2024-01-01T10:00:60")', null, 'SEM'),
  ex('WEEKDAY("2021-06-09", "MONDAY")', 2, 'SEM'),
  ex('WEEKDAY("2021-06-09", "sunday")', 3, 'SEM'),
  ex('WEEKDAY("2021-06-13", "Monday")', 6, 'SEM'),
  ex('WEEKDAY("2021-06-09", "Tuesday")', null, 'SEM'),
  ex('WEEKDAY("2021-06-09", "")', null, 'SEM'),
  ex('WEEKDAY(BLANK())', null, 'SEM'),
  ex('DATEADD("2024-01-31", 1, "months")', '2024-02-29T00:00:00.000Z', 'SEM'),
  ex('DATEADD("2023-01-31", 1, "M")', '2023-02-28T00:00:00.000Z', 'SEM'),
  ex('DATEADD("2024-02-29", 1, "years")', '2025-02-28T00:00:00.000Z', 'SEM'),
  ex('DATEADD("2024-01-31", 1, "Q")', '2024-04-30T00:00:00.000Z', 'SEM'),
  ex('DATEADD("2024-03-31", -1, "quarter")', '2023-12-31T00:00:00.000Z', 'SEM'),
  ex('DATEADD("2024-01-01T10:20:30.456Z", 1, "Month")', '2024-02-01T10:20:30.456Z', 'SEM'),
  ex('DATEADD("2024-01-01", 1.9, "months")', '2024-02-01T00:00:00.000Z', 'SEM'),
  ex('DATEADD("2024-01-01", -1.9, "months")', '2023-12-01T00:00:00.000Z', 'SEM'),
  ex('DATEADD("2024-01-01", 1.5, "days")', '2024-01-02T12:00:00.000Z', 'SEM'),
  ex('DATEADD("2024-01-01", 2, "w")', '2024-01-15T00:00:00.000Z', 'SEM'),
  ex('DATEADD("2024-01-01", 1, "m")', '2024-01-01T00:01:00.000Z', 'SEM'),
  ex('DATEADD("2024-01-01", 1, "Minutes")', '2024-01-01T00:01:00.000Z', 'SEM'),
  ex('DATEADD("2024-01-01", 1, "HOUR")', '2024-01-01T01:00:00.000Z', 'SEM'),
  ex('DATEADD("2024-01-01", 1, "D")', null, 'SEM', {}, 'abbreviations are case-sensitive'),
  ex('DATEADD("2024-01-01", 1, "fortnight")', null, 'SEM'),
  ex('DATEADD("2024-01-01", 1.5, "ms")', '2024-01-01T00:00:00.001Z', 'SEM'),
  ex('DATEADD("2024-01-01", 0.0005, "seconds")', '2024-01-01T00:00:00.000Z', 'SEM'),
  ex('DATEADD("2024-01-01", -0.0005, "seconds")', '2023-12-31T23:59:59.999Z', 'SEM'),
  ex('DATEADD("9999-12-31", 1, "days")', null, 'SEM'),
  ex('DATEADD("0001-01-01", -1, "ms")', null, 'SEM'),
  ex('DATEADD("9999-12-01", 1, "months")', null, 'SEM'),
  ex('DATEADD(BLANK(), 1, "days")', null, 'SEM'),
  ex('DATEADD("2024-01-01", BLANK(), "days")', null, 'SEM'),
  ex('DATEADD({Day}, 1, "day")', '2024-03-01T00:00:00.000Z', 'SEM', LEAP),
  ex('DATETIME_DIFF("2024-03-31", "2024-02-29", "months")', 1, 'SEM'),
  ex('DATETIME_DIFF("2024-02-29", "2024-01-31", "months")', 0, 'SEM'),
  ex('DATETIME_DIFF("2024-01-15", "2024-03-10", "months")', -1, 'SEM', {}, 'mirrored: −(months from a to b)'),
  ex(
    'DATETIME_DIFF("2024-02-15T09:00", "2024-01-15T10:00", "M")',
    0,
    'SEM',
    {},
    'a’s time of day is earlier',
  ),
  ex('DATETIME_DIFF("2025-03-01", "2024-02-29", "years")', 1, 'SEM'),
  ex('DATETIME_DIFF("2024-12-31", "2024-01-01", "Q")', 3, 'SEM'),
  ex('DATETIME_DIFF("2024-01-01T10:00", "2024-01-01T11:30", "hours")', -1, 'SEM'),
  ex('DATETIME_DIFF("2024-01-02", "2024-01-01")', 86400, 'SEM'),
  ex('DATETIME_DIFF("2024-01-02", "2024-01-01", "fortnight")', 86400, 'SEM'),
  ex('DATETIME_DIFF("2024-01-01T00:00:00.999Z", "2024-01-01", "ms")', 999, 'SEM'),
  ex('DATETIME_DIFF("2024-01-01T00:00:00.999Z", "2024-01-01", "s")', 0, 'SEM'),
  ex('DATETIME_DIFF("2024-01-15", "2024-01-01", "weeks")', 2, 'SEM'),
  ex('DATETIME_DIFF(BLANK(), "2024-01-01")', null, 'SEM'),
  ex('DATESTR("2024-01-31T23:00:00-05:00")', '2024-02-01', 'SEM'),
  ex('DATESTR("abc")', null, 'SEM'),
  ex('DATESTR({At})', '2024-02-29', 'SEM', LEAP),
  ex('IS_BEFORE(BLANK(), "2024-01-01")', false, 'SEM'),
  ex('IS_BEFORE("2024-01-01", "2024-01-01")', false, 'SEM'),
  ex('IS_AFTER({At}, {Day})', true, 'SEM', LEAP),
  ex('IS_AFTER("bad", "2024-01-01")', false, 'SEM'),
];

const RECORDS: FormulaExample[] = [
  ex('RECORD_ID()', EXAMPLE_RECORD.id, 'REF', {}, 'our ids are UUIDs'),
  ex('CREATED_TIME()', EXAMPLE_RECORD.createdAt, 'REF'),
  ex('LAST_MODIFIED_TIME()', EXAMPLE_RECORD.updatedAt, 'REF'),
  ex('LEN(RECORD_ID())', 36, 'SEM'),
  ex('DATESTR(CREATED_TIME())', '2024-01-15', 'SEM'),
  ex('IS_AFTER(LAST_MODIFIED_TIME(), CREATED_TIME())', true, 'SEM'),
];

const ARRAYS: FormulaExample[] = [
  ex('ARRAYJOIN({Values}, "; ")', '1; 2; 3', 'ARR', { Values: ['array', ['1', '2', '3']] }),
  ex(
    'ARRAYUNIQUE({Values})',
    ['1', '2', '3'],
    'ARR',
    { Values: ['array', ['1', '2', '3', '3', '2', '1']] },
    'a multiple_select cannot repeat an option: this needs an array field that may (a lookup)',
  ),
  ex(
    'ARRAYCOMPACT({Values})',
    ['1', '2', 'false', '5'],
    'ARR',
    { Values: ['array', ['1', '2', 'false', null, '5']] },
    'ARR’s items as texts; a null item (a lookup’s) reads as "". Needs a lookup field',
  ),
  ex(
    'ARRAYCOMPACT({Values})',
    ['a', ' '],
    'ours',
    { Values: ['array', ['a', '', ' ', null]] },
    'needs an array field that may hold "" and null (a lookup)',
  ),
  // The section's rules.
  ex('ARRAYJOIN({Tags})', '10, 2.5, Red', 'SEM', LEAP),
  ex('ARRAYJOIN({No tags})', null, 'SEM', EMPTY),
  ex('ARRAYJOIN(5)', '5', 'SEM'),
  ex('ARRAYJOIN(BLANK())', null, 'SEM'),
  ex('ARRAYJOIN({Tags}, BLANK())', '102.5Red', 'SEM', LEAP),
  ex('ARRAYJOIN({Tags}, 0)', '1002.50Red', 'SEM', LEAP),
  ex('ARRAYUNIQUE("a")', ['a'], 'SEM'),
  ex('ARRAYUNIQUE(BLANK())', [], 'SEM'),
  ex('ARRAYUNIQUE({Day})', ['2024-02-29'], 'SEM', LEAP),
  ex('ARRAYUNIQUE({No text})', [], 'SEM', EMPTY),
  ex('ARRAYUNIQUE(REPT("ab", 0))', [], 'SEM', {}, 'a text repeated no times is blank, as any empty text'),
  ex('ARRAYUNIQUE(FALSE())', ['0'], 'SEM'),
  ex('ARRAYCOMPACT(BLANK())', [], 'SEM'),
  ex('ARRAYCOMPACT(0)', ['0'], 'SEM'),
  ex('ARRAYCOMPACT({No tags})', [], 'SEM', EMPTY),
];

/** Every example: Airtable's (docs/formulas.md's tables) and the section's edge cases (SEM). */
export const FORMULA_EXAMPLES: readonly FormulaExample[] = [
  ...OPERATORS,
  ...LOGIC,
  ...NUMBERS,
  ...TEXT,
  ...DATES,
  ...RECORDS,
  ...ARRAYS,
];
