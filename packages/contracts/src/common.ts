import { z } from 'zod';

/** Longest name accepted for a database, table, field, option or API key. */
export const MAX_NAME_LENGTH = 255;

export const NUL_CHARACTER_MESSAGE = 'must not contain NUL characters';
export const CONTROL_CHARACTER_MESSAGE = 'must not contain control characters';

/** PostgreSQL text cannot hold NUL (error 22021): refused here, it never reaches a query. */
export function hasNoNul(text: string): boolean {
  return !text.includes('\u0000');
}

export const LONE_SURROGATE_MESSAGE = 'must be well-formed Unicode (it holds a lone surrogate)';

/** Half of a surrogate pair without the other half: JSON can carry it, UTF-8 cannot. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Whether the text survives UTF-8 as it is: PostgreSQL would otherwise store a lone surrogate as
 * a replacement character, silently changing what the client wrote.
 */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** Control characters in names and identifiers only cause grief downstream (logs, headers, UIs). */
export function hasNoControlCharacter(text: string): boolean {
  return !CONTROL_CHARACTER.test(text);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export type StringMessages = {
  /** When the value is not a string; zod's own message when omitted. */
  type?: string;
  /** When the value is too long; "must be at most N characters" when omitted. */
  tooLong?: string;
};

/**
 * A string whose length is checked first and, when too long, stops every later check (`abort`):
 * no pattern or refinement chained after it ever runs over an oversized value.
 */
export function boundedString(max: number, messages: StringMessages = {}) {
  return z
    .string(messages.type === undefined ? undefined : { error: messages.type })
    .max(max, { abort: true, error: messages.tooLong ?? `must be at most ${max} characters` });
}

/**
 * Refuses what PostgreSQL text cannot hold as written (NUL, lone surrogates) and stops there, so
 * the checks after it see storable text.
 */
export function refuseUnstorable(schema: z.ZodString): z.ZodString {
  return schema
    .refine(hasNoNul, { abort: true, error: NUL_CHARACTER_MESSAGE })
    .refine(isWellFormedText, { abort: true, error: LONE_SURROGATE_MESSAGE });
}

/** Refuses unstorable text (NUL with its own message) and every other control character. */
export function refuseControlCharacters(schema: z.ZodString): z.ZodString {
  return refuseUnstorable(schema).refine(hasNoControlCharacter, {
    abort: true,
    error: CONTROL_CHARACTER_MESSAGE,
  });
}

/** Text as PostgreSQL stores it: at most `max` characters (checked first), no NUL. */
export function textSchema(max: number, messages: StringMessages = {}): z.ZodString {
  return refuseUnstorable(boundedString(max, messages));
}

/** Identifiers and other short labels: text without any control character either. */
export function identifierSchema(max: number, messages: StringMessages = {}): z.ZodString {
  return refuseControlCharacters(boundedString(max, messages));
}

/** A reference to something by id or name: 1 to MAX_NAME_LENGTH characters, no control characters. */
export function referenceSchema(error = 'must not be empty'): z.ZodString {
  return identifierSchema(MAX_NAME_LENGTH, { type: error }).min(1, { error });
}

/**
 * A zod format (uuid, iso date, url...) behind a length check: a format schema runs its own
 * pattern before any `.max()` chained onto it, so the bound has to come in front, in a pipe.
 */
export function boundedFormat<Format extends z.ZodType<string, string>>(
  max: number,
  error: string | undefined,
  format: Format,
) {
  return boundedString(max, error === undefined ? {} : { type: error, tooLong: error }).pipe(format);
}

/**
 * The error of a union of types: `message` when the input has none of the types, but the
 * branch's own message when the input had its type and failed its length or content checks
 * ("must not contain NUL characters" says more than "must be a string or a number").
 */
export function unionError(message: string) {
  return (issue: z.core.$ZodRawIssue): string => {
    if (issue.code !== 'invalid_union') return message;
    const specific = (issue.errors as z.core.$ZodIssue[][])
      .flat()
      .find((branchIssue) => branchIssue.code === 'too_big' || branchIssue.code === 'custom');
    return specific?.message ?? message;
  };
}

/**
 * The error of a record whose keys are checked: the key's own message for a refused key, so the
 * answer says what is wrong with it rather than that the object is malformed.
 */
export function recordError(message: string) {
  return (issue: z.core.$ZodRawIssue): string => {
    if (issue.code !== 'invalid_key') return message;
    return (issue.issues as z.core.$ZodIssue[])[0]?.message ?? message;
  };
}

/**
 * Runs `precheck` on the raw input before `schema` parses it. Issues from the precheck stop the
 * parse, so an oversized body costs one cheap count rather than a full validation (zod checks an
 * array's `.max()` only after parsing every element). Typed as the schema itself.
 */
export function withPrecheck<Schema extends z.ZodType>(
  precheck: (value: unknown, ctx: z.RefinementCtx<unknown>) => void,
  schema: Schema,
): z.ZodType<z.output<Schema>, z.input<Schema>> {
  return z.unknown().superRefine(precheck).pipe(schema) as unknown as z.ZodType<
    z.output<Schema>,
    z.input<Schema>
  >;
}

export const nameSchema = refuseControlCharacters(
  boundedString(MAX_NAME_LENGTH).trim().min(1, { error: 'must not be empty' }),
);

/** Path segments of the routes (ids or names): Express decodes `%00` into a NUL. */
export const pathSegmentSchema = referenceSchema();

export const MAX_UUID_LENGTH = 36;
export const uuidSchema = boundedFormat(
  MAX_UUID_LENGTH,
  'must be a UUID',
  z.uuid({ error: 'must be a UUID' }),
);

/** Any UUID (any version), as PostgreSQL's uuid type accepts it. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Table and field ids: a three-letter prefix and base62 characters. */
export const TABLE_ID_PATTERN = /^tbl[0-9A-Za-z]{12,16}$/;
export const FIELD_ID_PATTERN = /^fld[0-9A-Za-z]{12,16}$/;

/** A path segment or body key naming a table: its id or its name. */
export const tableRefSchema = referenceSchema('must name a table by id or name');
/** A body key naming a field (in a filter, sort, projection...): its id or its name. */
export const fieldReferenceSchema = referenceSchema('must name a field by id or name');

/** A saved view of the table a read is on, by id (viw…) or name (api-contract "Views"). */
export const viewReferenceSchema = referenceSchema('must name a view of the table by id or name');

/** `2024-05-01T12:00:00.123456789+02:00` is 35 characters; more is no date-time anyone sends. */
export const MAX_ISO_DATE_TIME_LENGTH = 64;
export const ISO_DATE_LENGTH = 10;

export function isoDateTimeString(error?: string) {
  return boundedFormat(
    MAX_ISO_DATE_TIME_LENGTH,
    error,
    z.iso.datetime(error === undefined ? { offset: true } : { offset: true, error }),
  );
}

export function isoDateString(error?: string) {
  return boundedFormat(ISO_DATE_LENGTH, error, z.iso.date(error === undefined ? {} : { error }));
}

export const isoDateTimeSchema = isoDateTimeString();
