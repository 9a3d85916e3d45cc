import { z } from 'zod';
import { DomainError, invalid, issueProblems, namePath, tooMany } from '../src/domain-errors';

describe('a domain refusal', () => {
  it('names each place from the root its caller gives', () => {
    const error = new DomainError('invalid', [
      { path: ['records', 3, 'fields', 'Email'], message: 'not an email' },
      { path: null, message: 'and 2 more bad records' },
    ]);
    expect(error.words('body')).toBe('body.records[3].fields.Email: not an email; and 2 more bad records');
    expect(error.words('import')).toBe(
      'import.records[3].fields.Email: not an email; and 2 more bad records',
    );
    // Logged as is: a neutral root.
    expect(error.message).toBe('input.records[3].fields.Email: not an email; and 2 more bad records');
  });

  it('names the other places its words refer to the same way', () => {
    const error = invalid(['records', 4], (at) => `has the same matchOn values as ${at(['records', 1])}`);
    expect(error.words('body')).toBe('body.records[4]: has the same matchOn values as body.records[1]');
    expect(error.kind).toBe('invalid');
  });

  it('carries when to come back', () => {
    const error = tooMany('too many imports under way', 5);
    expect([error.kind, error.retryAfterSeconds, error.words('body')]).toEqual([
      'too_many',
      5,
      'too many imports under way',
    ]);
  });

  it('names a place of the input at the root itself, and a field name as it is', () => {
    expect(namePath('body', [])).toBe('body');
    expect(namePath('body', ['record', 'First name', 0])).toBe('body.record.First name[0]');
  });
});

describe("a zod schema's issues", () => {
  const schema = z.strictObject({ a: z.number(), b: z.array(z.string()) });

  it('are problems at their places below the value, an unknown key named as one', () => {
    const parsed = schema.safeParse({ a: 'x', b: ['y', 2], c: 1 });
    if (parsed.success) throw new Error('expected issues');
    const problems = issueProblems(['records', 0, 'fields', 'Tags'], parsed.error.issues);
    expect(problems.map((problem) => problem.path)).toEqual([
      ['records', 0, 'fields', 'Tags', 'a'],
      ['records', 0, 'fields', 'Tags', 'b', 1],
      ['records', 0, 'fields', 'Tags'],
    ]);
    expect(problems[2]?.message).toBe('unknown key "c"');
    expect(issueProblems([], parsed.error.issues, 'parameter')[2]?.message).toBe('unknown parameter "c"');
  });

  it('are listed five at most, the rest counted', () => {
    const many = z.array(z.number()).safeParse(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    if (many.success) throw new Error('expected issues');
    const problems = issueProblems(['values'], many.error.issues);
    expect(problems).toHaveLength(6);
    expect(problems[5]).toEqual({ path: null, message: 'and 2 more problem(s)' });
  });
});
