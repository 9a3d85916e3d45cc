import type { z } from 'zod';

/**
 * The domain's refusals. A use case knows what was wrong and where in its input, never how the
 * caller hears it: an error carries a kind and, for each problem, a structured path into the
 * input (`['records', 3, 'fields', 'Email']`). Whoever handed the input over words it: the HTTP
 * layer names the part of the request the input came from (`body.records[3].fields.Email`) and
 * picks the status from the kind; the import worker names its import. It lives with the
 * contracts because both sides of that boundary speak it.
 */

/** Where in a use case's input a problem lies: keys and indexes from the input's root. */
export type InputPath = readonly (string | number)[];

/**
 * What a refusal means to its caller:
 * - `invalid`: the input is wrong; `invalid_record_id` when what is wrong is a record's id;
 * - `not_found`: what the input names does not exist, or not for this caller;
 * - `forbidden`: the caller may not do this;
 * - `too_many`: the caller has too much under way; `retryAfterSeconds` says when to come back;
 * - `busy`: the service cannot take it now, through no fault of the input; retry shortly;
 * - `expired`: the input names a place (a cursor) that retention has since removed.
 */
export type DomainErrorKind =
  | 'invalid'
  | 'invalid_record_id'
  | 'not_found'
  | 'forbidden'
  | 'too_many'
  | 'busy'
  | 'expired';

/** Names a place of the input as the caller names it (`body.records[3]`). */
export type NamePath = (path: InputPath) => string;

/** A problem's words; a function of how places are named when they name other places of the input. */
export type Wording = string | ((at: NamePath) => string);

export interface Problem {
  /** Where the problem lies; null when it is about the input as a whole. */
  path: InputPath | null;
  message: Wording;
}

export class DomainError extends Error {
  readonly kind: DomainErrorKind;
  readonly problems: readonly Problem[];
  readonly retryAfterSeconds: number | undefined;

  constructor(
    kind: DomainErrorKind,
    problems: readonly Problem[],
    options: { retryAfterSeconds?: number } = {},
  ) {
    super(wordProblems(problems, 'input'));
    this.name = 'DomainError';
    this.kind = kind;
    this.problems = problems;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** The problems in words, the input's places named from `root` (`body`, `query`, `import`). */
  words(root: string): string {
    return wordProblems(this.problems, root);
  }
}

/** `root` followed by the path: `body.records[3].fields.Email`. */
export function namePath(root: string, path: InputPath): string {
  let name = root;
  for (const key of path) name += typeof key === 'number' ? `[${key}]` : `.${key}`;
  return name;
}

/** Each problem as `place: words`, joined by `; `, the places named from `root`. */
export function wordProblems(problems: readonly Problem[], root: string): string {
  const at: NamePath = (path) => namePath(root, path);
  return problems
    .map(({ path, message }) => {
      const words = typeof message === 'string' ? message : message(at);
      return path === null ? words : `${at(path)}: ${words}`;
    })
    .join('; ');
}

/**
 * The first `maxChars` of a text that may be huge (PostgreSQL quotes a value whole in its errors),
 * saying how much was left out; never splits a surrogate pair.
 */
export function clip(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = maxChars;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}

/** The input is wrong at `path` (null: as a whole). */
export const invalid = (path: InputPath | null, message: Wording): DomainError =>
  new DomainError('invalid', [{ path, message }]);

/** What the input names at `path` (null: the request's own address) does not exist for this caller. */
export const notFound = (message: Wording, path: InputPath | null = null): DomainError =>
  new DomainError('not_found', [{ path, message }]);

/** The caller may not do this. */
export const forbidden = (message: Wording): DomainError =>
  new DomainError('forbidden', [{ path: null, message }]);

/** The service cannot take it now; the caller may retry after `retryAfterSeconds`. */
export const busy = (message: string, retryAfterSeconds: number): DomainError =>
  new DomainError('busy', [{ path: null, message }], { retryAfterSeconds });

/** The caller has too much under way; it may come back after `retryAfterSeconds`. */
export const tooMany = (message: string, retryAfterSeconds: number): DomainError =>
  new DomainError('too_many', [{ path: null, message }], { retryAfterSeconds });

/** The place the input names at `path` is no longer kept: reading on from it would skip what was removed. */
export const expired = (path: InputPath, message: Wording): DomainError =>
  new DomainError('expired', [{ path, message }]);

/** Issues of a zod schema listed at most. */
const MAX_ISSUES = 5;

/**
 * A zod schema's issues with the value at `path` as problems, the first five listed and the rest
 * counted, an unknown key named as such (`noun`: a query's keys are its parameters).
 */
export function issueProblems(
  path: InputPath,
  issues: readonly z.core.$ZodIssue[],
  noun: 'key' | 'parameter' = 'key',
): Problem[] {
  const problems: Problem[] = issues.slice(0, MAX_ISSUES).map((issue) => {
    const at = [...path, ...issue.path.map((key) => (typeof key === 'number' ? key : String(key)))];
    if (issue.code !== 'unrecognized_keys') return { path: at, message: issue.message };
    const keys = issue.keys.map((key) => `"${key}"`).join(', ');
    return { path: at, message: `unknown ${noun}${issue.keys.length > 1 ? 's' : ''} ${keys}` };
  });
  if (issues.length > MAX_ISSUES)
    problems.push({ path: null, message: `and ${issues.length - MAX_ISSUES} more problem(s)` });
  return problems;
}
