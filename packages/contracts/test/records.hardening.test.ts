import type { z } from 'zod';
import {
  bulkRecordsRequestSchema,
  createRecordRequestSchema,
  filterSchema,
  listRecordsRequestSchema,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_LIST_ITEMS,
  MAX_FILTER_LIST_ITEMS_TOTAL,
  MAX_FILTER_PATTERN_CHARACTERS,
  MAX_FILTER_STRING_LENGTH,
  measureFilter,
  recordValuesInputSchema,
  recordValueWriteSchemaByType,
  sortSchema,
  updateRecordRequestSchema,
} from '../src/records';
import { MAX_FIELDS_PER_TABLE } from '../src/schema';

function problems(result: z.ZodSafeParseResult<unknown>): string[] {
  if (result.success) return [];
  return result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

const NUL = '\u0000';
const NUL_MESSAGE = 'must not contain NUL characters';

describe('NUL in filters and sorts', () => {
  it.each([
    ['equals', `a${NUL}`],
    ['does_not_equal', NUL],
    ['contains', `x${NUL}y`],
    ['does_not_contain', NUL],
    ['starts_with', NUL],
    ['ends_with', `${NUL}z`],
    ['greater_than', `2024-01-01${NUL}`],
    ['less_than_or_equal_to', NUL],
  ])('refuses NUL in the %s operand, naming it', (operator, operand) => {
    expect(problems(filterSchema.safeParse({ field: 'Name', [operator]: operand }))).toEqual([
      `${operator}: ${NUL_MESSAGE}`,
    ]);
  });

  it.each(['in', 'not_in'])('refuses NUL in an item of an %s list', (operator) => {
    expect(problems(filterSchema.safeParse({ field: 'Name', [operator]: ['ok', 2, `b${NUL}`] }))).toEqual([
      `${operator}.2: ${NUL_MESSAGE}`,
    ]);
  });

  it('refuses NUL and control characters in a field reference', () => {
    expect(problems(filterSchema.safeParse({ field: `Na${NUL}me`, equals: 'x' }))).toEqual([
      `field: ${NUL_MESSAGE}`,
    ]);
    expect(problems(filterSchema.safeParse({ field: 'Na\nme', equals: 'x' }))).toEqual([
      'field: must not contain control characters',
    ]);
    expect(problems(sortSchema.safeParse({ field: `Na${NUL}me` }))).toEqual([`field: ${NUL_MESSAGE}`]);
    expect(problems(sortSchema.safeParse({ fieldId: `fld${NUL}` }))).toEqual([`fieldId: ${NUL_MESSAGE}`]);
  });

  it('still names the expected types for operands of the wrong type', () => {
    expect(problems(filterSchema.safeParse({ field: 'x', equals: null }))).toEqual([
      'equals: must be a string, number or boolean',
    ]);
    expect(problems(filterSchema.safeParse({ field: 'x', greater_than: '' }))).toEqual([
      'greater_than: must be a number or a date string',
    ]);
  });

  it('refuses an operand over the length bound with the bound', () => {
    const long = 'x'.repeat(MAX_FILTER_STRING_LENGTH + 1);
    expect(problems(filterSchema.safeParse({ field: 'x', equals: long }))).toEqual([
      `equals: must be at most ${MAX_FILTER_STRING_LENGTH} characters`,
    ]);
  });
});

describe('the work one filter asks for', () => {
  const contains = (length: number) => ({ field: 'Notes', contains: 'x'.repeat(length) });

  it('measures the text-matching operands and the list items', () => {
    expect(
      measureFilter({
        or: [
          { field: 'a', contains: 'abc' },
          { field: 'b', does_not_contain: 'de' },
          {
            and: [
              { field: 'c', starts_with: 'f' },
              { field: 'd', ends_with: 'gh' },
            ],
          },
          { field: 'e', equals: 'not a pattern' },
          { field: 'f', in: [1, 2, 3] },
          { field: 'g', not_in: ['a'] },
          { field: 'h', contains: 42 },
        ],
      }),
    ).toEqual({ depth: 2, conditions: 8, patternCharacters: 8, listItems: 4 });
  });

  it(`accepts text-matching operands of ${MAX_FILTER_PATTERN_CHARACTERS} characters in all`, () => {
    expect(filterSchema.safeParse(contains(MAX_FILTER_PATTERN_CHARACTERS)).success).toBe(true);
    const half = MAX_FILTER_PATTERN_CHARACTERS / 2;
    expect(
      filterSchema.safeParse({ or: [contains(half), { field: 'N', starts_with: 'x'.repeat(half) }] }).success,
    ).toBe(true);
  });

  it('refuses a filter whose text-matching operands add up to more, with one issue naming the bound', () => {
    const conditions = Array.from({ length: MAX_FILTER_CONDITIONS }, () =>
      contains(MAX_FILTER_STRING_LENGTH),
    );
    expect(problems(listRecordsRequestSchema.safeParse({ filter: { or: conditions } }))).toEqual([
      `filter: the operands of contains, does_not_contain, starts_with, ends_with add up to 2000000 characters; one filter may use at most ${MAX_FILTER_PATTERN_CHARACTERS}`,
    ]);
    expect(
      problems(
        filterSchema.safeParse({ and: [contains(6000), { field: 'N', ends_with: 'y'.repeat(4001) }] }),
      ),
    ).toEqual([
      `: the operands of contains, does_not_contain, starts_with, ends_with add up to 10001 characters; one filter may use at most ${MAX_FILTER_PATTERN_CHARACTERS}`,
    ]);
  });

  it(`accepts ${MAX_FILTER_LIST_ITEMS_TOTAL} list values in all and refuses more, naming the bound`, () => {
    const list = (operator: 'in' | 'not_in') => ({
      field: 'Status',
      [operator]: Array.from({ length: MAX_FILTER_LIST_ITEMS }, (_, index) => index),
    });
    const lists = (count: number) =>
      Array.from({ length: count }, (_, index) => list(index % 2 ? 'in' : 'not_in'));
    const allowed = MAX_FILTER_LIST_ITEMS_TOTAL / MAX_FILTER_LIST_ITEMS;
    expect(filterSchema.safeParse({ and: lists(allowed) }).success).toBe(true);
    expect(problems(filterSchema.safeParse({ and: lists(allowed + 1) }))).toEqual([
      `: the in and not_in lists hold ${MAX_FILTER_LIST_ITEMS_TOTAL + MAX_FILTER_LIST_ITEMS} values in all; one filter may use at most ${MAX_FILTER_LIST_ITEMS_TOTAL}`,
    ]);
  });
});

describe('keys of a record body', () => {
  const keys = (count: number) =>
    Object.fromEntries(Array.from({ length: count }, (_, index) => [`f${index}`, index]));

  it(`accepts ${MAX_FIELDS_PER_TABLE} field keys, and an id beside them`, () => {
    expect(recordValuesInputSchema.safeParse(keys(MAX_FIELDS_PER_TABLE)).success).toBe(true);
    expect(recordValuesInputSchema.safeParse({ id: 'x', ...keys(MAX_FIELDS_PER_TABLE) }).success).toBe(true);
  });

  it('refuses more keys than a table has fields before looking at any, naming the bound and the count', () => {
    const hostile = keys(600_000);
    const message = `a record sets at most ${MAX_FIELDS_PER_TABLE} fields (a table has no more); this one has 600000 keys`;
    expect(problems(recordValuesInputSchema.safeParse(hostile))).toEqual([`: ${message}`]);
    expect(problems(createRecordRequestSchema.safeParse({ record: hostile }))).toEqual([
      `record: ${message}`,
    ]);
    expect(problems(updateRecordRequestSchema.safeParse({ record: keys(501) }))).toEqual([
      `record: a record sets at most ${MAX_FIELDS_PER_TABLE} fields (a table has no more); this one has 501 keys`,
    ]);
    expect(problems(bulkRecordsRequestSchema.safeParse({ records: [{}, keys(501)] }))).toEqual([
      `records.1: a record sets at most ${MAX_FIELDS_PER_TABLE} fields (a table has no more); this one has 501 keys`,
    ]);
  });

  it('counts the records of a bulk body before parsing any of them', () => {
    const records = Array.from({ length: 1000 }, () => keys(MAX_FIELDS_PER_TABLE));
    expect(problems(bulkRecordsRequestSchema.safeParse({ records }))).toEqual([
      'records: must hold at most 100 records',
    ]);
  });

  it('refuses NUL and control characters in a key, naming the key', () => {
    expect(problems(recordValuesInputSchema.safeParse({ [`Na${NUL}me`]: 'x' }))).toEqual([
      `Na${NUL}me: ${NUL_MESSAGE}`,
    ]);
    expect(problems(recordValuesInputSchema.safeParse({ 'Na\rme': 'x' }))).toEqual([
      'Na\rme: must not contain control characters',
    ]);
    expect(problems(recordValuesInputSchema.safeParse({ '': 'x' }))).toEqual([
      ': field keys must not be empty',
    ]);
  });
});

describe('NUL in record values', () => {
  const problemsOf = (type: keyof typeof recordValueWriteSchemaByType, value: unknown) =>
    problems(recordValueWriteSchemaByType[type].safeParse(value));

  it.each(['single_line_text', 'long_text', 'email', 'url', 'phone_number', 'single_select'] as const)(
    'refuses NUL in a %s value, naming it',
    (type) => {
      expect(problemsOf(type, `a${NUL}@b.c`)).toEqual([`: ${NUL_MESSAGE}`]);
    },
  );

  it('refuses NUL in a multiple_select option name', () => {
    expect(problemsOf('multiple_select', ['a', `b${NUL}`])).toEqual([`1: ${NUL_MESSAGE}`]);
  });

  it('refuses NUL in each string of an attachment', () => {
    expect(problemsOf('attachments', [{ url: `http://files/x${NUL}` }])).toEqual([`0.url: ${NUL_MESSAGE}`]);
    expect(
      problemsOf('attachments', [{ url: 'http://files/x', fileName: NUL, mimeType: `text/plain${NUL}` }]),
    ).toEqual([`0.fileName: ${NUL_MESSAGE}`, `0.mimeType: ${NUL_MESSAGE}`]);
  });

  it('bounds dates, date-times and record ids before their formats run', () => {
    const codes = (type: keyof typeof recordValueWriteSchemaByType, value: unknown) =>
      recordValueWriteSchemaByType[type].safeParse(value).error?.issues.map((issue) => issue.code);
    expect(codes('date', `2024-01-01${'1'.repeat(100_000)}`)).toEqual(['too_big']);
    expect(codes('datetime', `2024-01-01T00:00:00.${'1'.repeat(100_000)}Z`)).toEqual(['too_big']);
    expect(codes('linked_record', ['0'.repeat(100_000)])).toEqual(['too_big']);
    expect(problemsOf('date', `2024-01-01${NUL}`)).toEqual([': must be a date as YYYY-MM-DD']);
  });
});
