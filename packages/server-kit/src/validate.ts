import { z } from 'zod';
import { badRequest } from './errors';

export type RequestPart = 'body' | 'query' | 'params' | 'headers';

function describePath(part: RequestPart, path: readonly PropertyKey[]): string {
  let out: string = part;
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  return out;
}

/** One readable sentence per problem, each naming where it is: `body.fields[1].type: ...`. */
export function describeIssues(part: RequestPart, issues: readonly z.core.$ZodIssue[], max = 5): string {
  const lines = issues.slice(0, max).map((issue) => {
    const where = describePath(part, issue.path);
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((key) => `"${key}"`).join(', ');
      const noun = part === 'query' ? 'parameter' : 'key';
      return `${where}: unknown ${noun}${issue.keys.length > 1 ? 's' : ''} ${keys}`;
    }
    return `${where}: ${issue.message}`;
  });
  if (issues.length > max) lines.push(`and ${issues.length - max} more problem(s)`);
  return lines.join('; ');
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
