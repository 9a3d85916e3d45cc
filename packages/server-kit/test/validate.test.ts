import { z } from 'zod';
import { bearerToken } from '../src/auth';
import { parseEnv } from '../src/env';
import { AppError } from '../src/errors';
import { parseRequestPart } from '../src/validate';

describe('parseRequestPart', () => {
  const schema = z.strictObject({
    name: z.string().max(5),
    items: z.array(z.strictObject({ n: z.number() })),
  });

  function messageOf(value: unknown): string {
    try {
      parseRequestPart(schema, value, 'body');
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).status).toBe(400);
      return (error as AppError).message;
    }
    throw new Error('expected a 400');
  }

  it('names unknown keys', () => {
    expect(messageOf({ name: 'a', items: [], colour: 'red' })).toBe('body: unknown key "colour"');
  });

  it('names the path of a nested problem', () => {
    expect(messageOf({ name: 'a', items: [{ n: 'x' }] })).toMatch(/^body\.items\[0\]\.n: /);
  });

  it('names an oversized string', () => {
    expect(messageOf({ name: 'abcdefgh', items: [] })).toMatch(/^body\.name: .*5/);
  });

  it('returns the parsed value when valid', () => {
    expect(parseRequestPart(schema, { name: 'a', items: [{ n: 1 }] }, 'body')).toEqual({
      name: 'a',
      items: [{ n: 1 }],
    });
  });
});

describe('bearerToken', () => {
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['Bearer  abc ', 'abc'],
    ['Basic abc', null],
    ['Bearer', null],
    ['Bearer a b', null],
    ['Bearer\tabc', null],
    [undefined, null],
  ])('reads %p as %p', (header, expected) => {
    expect(bearerToken(header)).toBe(expected);
  });
});

describe('parseEnv', () => {
  it('names the offending variable', () => {
    const schema = z.object({ PORT: z.coerce.number().int() });
    expect(() => parseEnv(schema, { PORT: 'eighty' })).toThrow(/PORT/);
  });
});
