import { z } from 'zod';
import { MAX_NAME_LENGTH, textSchema } from './common';

/**
 * The building blocks of record values, shared by the field type table (fields.ts), which says
 * what each type accepts on write, and the record schemas (records.ts). Kept apart from both so
 * neither imports the other for them.
 */

export const MAX_SELECT_OPTIONS = 1000;

/**
 * Value patterns for the validated text types. Written in the common subset of JavaScript and
 * PostgreSQL regular expressions, because type conversions check existing values in SQL (`~*`).
 *
 * Each is unambiguous, so a backtracking engine runs it in linear time: no two quantifiers can
 * hand the same character back and forth (test/linear-patterns.test.ts proves it with recheck).
 * - email: the local part stops at the first `@`; the domain's first character is taken alone,
 *   then non-dots up to the first dot after it, so that dot is the only one the pattern can pick.
 *   Same meaning as `[^\s@]+\.[^\s@]+` (a dot with something either side), which backtracked
 *   quadratically over `a.a.a.a…`.
 * - url: scheme, then a host without `/?#`, then anything without whitespace: already unambiguous.
 * - phone_number: the spaces before an extension are part of the 3 to 40 number characters
 *   rather than a separate `[ ]*` that competed with them, and at most 10 spaces may follow the
 *   extension mark, so every repetition is bounded. Only absurd values change class: more than
 *   40 characters of number and spaces before the extension, or more than 10 spaces after it.
 */
export const textValuePatterns = {
  email: '^[^\\s@]+@[^\\s@][^\\s@.]*[.][^\\s@]+$',
  url: '^https?://[^\\s/?#]+([/?#][^\\s]*)?$',
  phone_number: '^[+]?[0-9 ()./-]{3,40}((x|ext[.]?)[ ]{0,10}[0-9]{1,6})?$',
} as const;

/** An attachment as stored and returned; the same shape the attachment upload answers with. */
export const attachmentValueSchema = z.object({
  url: z.string(),
  fileName: z.string(),
  size: z.int().min(0),
  mimeType: z.string(),
  /**
   * In answers only, for files uploaded through /fileupload: `url` with a short-lived token that
   * opens the file without an API key (FILE_LINK_TTL_SECONDS), bound to the key that read it.
   */
  signedUrl: z.string().optional(),
});
export type AttachmentValue = z.infer<typeof attachmentValueSchema>;

/**
 * An attachment as written. `{url}` suffices when the url came from `/fileupload`; the service
 * takes name, size and type from its own upload record, so the optional keys are only tolerated
 * (a client may write back what it read).
 */
export const attachmentWriteValueSchema = z.strictObject({
  url: textSchema(2048).min(1, { error: 'must not be empty' }),
  fileName: textSchema(MAX_NAME_LENGTH).optional(),
  size: z.int().min(0).optional(),
  mimeType: textSchema(255).optional(),
  /** Tolerated and ignored: a link is made afresh for each answer. */
  signedUrl: textSchema(4096).optional(),
});
export type AttachmentWriteValue = z.infer<typeof attachmentWriteValueSchema>;

export const MAX_TEXT_LENGTH = 100_000;
export const MAX_ATTACHMENTS_PER_VALUE = 100;
export const MAX_LINKED_RECORDS_PER_VALUE = 1000;

/** Text of a record value: bounded first, no NUL (PostgreSQL text cannot hold it). */
export const textValue = (error: string, max: number) => textSchema(max, { type: error });

/**
 * The same patterns validate values on write and on field type conversion (in SQL). The pattern
 * runs only on a value within `max` characters without NUL: the checks before it abort.
 */
export const patternValue = (type: keyof typeof textValuePatterns, error: string, max: number) =>
  textValue(error, max).regex(new RegExp(textValuePatterns[type], 'i'), { error });

export const optionNameValue = () => textValue('must be an option name', MAX_NAME_LENGTH).min(1);
