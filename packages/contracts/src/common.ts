import { z } from 'zod';

/** Longest name accepted for a database, table, field, option or API key. */
export const MAX_NAME_LENGTH = 255;

/** PostgreSQL text cannot hold NUL, and control characters in names only cause grief downstream. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

export const nameSchema = z
  .string()
  .trim()
  .min(1, { error: 'must not be empty' })
  .max(MAX_NAME_LENGTH, { error: `must be at most ${MAX_NAME_LENGTH} characters` })
  .refine((name) => !CONTROL_CHARACTERS.test(name), { error: 'must not contain control characters' });

export const uuidSchema = z.uuid({ error: 'must be a UUID' });

/** Any UUID (any version), as PostgreSQL's uuid type accepts it. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Table and field ids: a three-letter prefix and base62 characters. */
export const TABLE_ID_PATTERN = /^tbl[0-9A-Za-z]{12,16}$/;
export const FIELD_ID_PATTERN = /^fld[0-9A-Za-z]{12,16}$/;

/** A path segment naming a table: its id or its name. */
export const tableRefSchema = z.string().min(1).max(MAX_NAME_LENGTH);

export const isoDateTimeSchema = z.iso.datetime({ offset: true });
