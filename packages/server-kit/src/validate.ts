import { issueProblems, wordProblems } from '@recordbase/contracts/domain-errors';
import { z } from 'zod';
import { badRequest } from './errors';

export type RequestPart = 'body' | 'query' | 'params' | 'headers';

/** One readable sentence per problem, each naming where it is: `body.fields[1].type: ...`. */
export function describeIssues(part: RequestPart, issues: readonly z.core.$ZodIssue[]): string {
  return wordProblems(issueProblems([], issues, part === 'query' ? 'parameter' : 'key'), part);
}

/** Parses one part of a request, or throws a 400 naming every offending key. */
export function parseRequestPart<S extends z.ZodType>(
  schema: S,
  value: unknown,
  part: RequestPart,
): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(describeIssues(part, result.error.issues));
  return result.data;
}

/** The query of a route that takes no parameters: a misspelt one is refused, never ignored. */
export const noQueryParameters = z.strictObject({});
