import type { z } from 'zod';
import {
  filterSchema,
  MAX_FILTER_STRING_LENGTH,
  recordValuesInputSchema,
  recordValueWriteSchemaByType,
  sortSchema,
} from '../src/records';

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

describe('keys of a record body', () => {
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
