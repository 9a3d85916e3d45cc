import { z } from 'zod';
import {
  boundedFormat,
  boundedString,
  identifierSchema,
  isoDateTimeSchema,
  MAX_NAME_LENGTH,
  nameSchema,
  pathSegmentSchema,
  tableRefSchema,
  textSchema,
  uuidSchema,
} from '../src/common';

function problems(result: z.ZodSafeParseResult<unknown>): string[] {
  if (result.success) return [];
  return result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

const NUL = '\u0000';

describe('bounded strings', () => {
  it('check the length first and run nothing after it on a value too long', () => {
    const refinement = jest.fn(() => true);
    const schema = boundedString(5).refine(refinement).regex(/^a+$/);
    expect(problems(schema.safeParse('b'.repeat(6)))).toEqual([': must be at most 5 characters']);
    expect(refinement).not.toHaveBeenCalled();
    expect(schema.safeParse('aaaaa').success).toBe(true);
    expect(refinement).toHaveBeenCalledTimes(1);
  });

  it('put a zod format behind the length check', () => {
    const format = jest.fn(() => true);
    const schema = boundedFormat(8, 'must be short', z.string().refine(format));
    expect(problems(schema.safeParse('x'.repeat(9)))).toEqual([': must be short']);
    expect(format).not.toHaveBeenCalled();
    expect(problems(schema.safeParse(3))).toEqual([': must be short']);
  });

  it('bound the uuid and date-time formats before their own patterns run', () => {
    const tooLong = (schema: z.ZodType, value: string) =>
      schema.safeParse(value).error?.issues.map((issue) => issue.code);
    expect(tooLong(uuidSchema, '0'.repeat(10_000))).toEqual(['too_big']);
    expect(tooLong(isoDateTimeSchema, `2024-05-01T12:00:00.${'1'.repeat(10_000)}Z`)).toEqual(['too_big']);
    expect(uuidSchema.safeParse('0190f2a4-5b6c-7d8e-9f00-112233445566').success).toBe(true);
    expect(isoDateTimeSchema.safeParse('2024-05-01T12:00:00.123456789+02:00').success).toBe(true);
  });
});

describe('text and identifiers', () => {
  it('refuse NUL anywhere in text, naming it', () => {
    for (const text of [NUL, `a${NUL}`, `${NUL}a`, `a${NUL}b`]) {
      expect(problems(textSchema(10).safeParse(text))).toEqual([': must not contain NUL characters']);
    }
    expect(textSchema(20).safeParse('line\nbreak\t').success).toBe(true);
  });

  it('refuse control characters in identifiers, with NUL named as such', () => {
    expect(problems(identifierSchema(10).safeParse(`a${NUL}`))).toEqual([
      ': must not contain NUL characters',
    ]);
    for (const text of ['a\n', 'a\u0001', 'a\u001f', 'a\u007f']) {
      expect(problems(identifierSchema(10).safeParse(text))).toEqual([
        ': must not contain control characters',
      ]);
    }
    expect(identifierSchema(10).safeParse('#ff00aa').success).toBe(true);
  });
});

describe('names', () => {
  it('are trimmed and then refuse NUL and control characters', () => {
    expect(nameSchema.parse('  Tasks\n')).toBe('Tasks');
    expect(problems(nameSchema.safeParse(`Ta${NUL}sks`))).toEqual([': must not contain NUL characters']);
    expect(problems(nameSchema.safeParse('Ta\u0007sks'))).toEqual([': must not contain control characters']);
    expect(problems(nameSchema.safeParse('   '))).toEqual([': must not be empty']);
  });

  it(`hold at most ${MAX_NAME_LENGTH} characters, checked before anything else`, () => {
    expect(nameSchema.safeParse('n'.repeat(MAX_NAME_LENGTH)).success).toBe(true);
    expect(problems(nameSchema.safeParse(`${NUL}${'n'.repeat(MAX_NAME_LENGTH)}`))).toEqual([
      ': must be at most 255 characters',
    ]);
  });
});

describe('path segments and table references', () => {
  it.each([
    ['T', true],
    ['tblAAAAAAAAAAAA1', true],
    ['My table', true],
    ['x'.repeat(255), true],
  ])('accept %j', (segment) => {
    expect(pathSegmentSchema.safeParse(segment).success).toBe(true);
    expect(tableRefSchema.safeParse(segment).success).toBe(true);
  });

  it.each([
    [`T${NUL}`, 'must not contain NUL characters'],
    ['T\n', 'must not contain control characters'],
    ['T\u001b[31m', 'must not contain control characters'],
    ['', 'must not be empty'],
    ['x'.repeat(256), 'must be at most 255 characters'],
  ])('refuse %j: %s', (segment, message) => {
    expect(problems(pathSegmentSchema.safeParse(segment))).toEqual([`: ${message}`]);
    expect(problems(tableRefSchema.safeParse(segment))).toEqual([
      `: ${message === 'must not be empty' ? 'must name a table by id or name' : message}`,
    ]);
  });
});
