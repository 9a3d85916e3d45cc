import { createHash } from 'node:crypto';

/**
 * Physical names. Every identifier in generated SQL comes from here and is built from ids the
 * service generated, never from user text; user text only ever reaches SQL as a parameter or
 * through `quoteLiteral` in a COMMENT.
 */

const SAFE_IDENTIFIER = /^[A-Za-z0-9_]{1,63}$/;

export function quoteIdent(identifier: string): string {
  if (!SAFE_IDENTIFIER.test(identifier)) {
    throw new Error(`refusing unsafe SQL identifier ${JSON.stringify(identifier)}`);
  }
  return `"${identifier}"`;
}

/**
 * For statements that take no parameters (COMMENT ON, role settings). An escape-string literal
 * with `\` and `'` both doubled reads as `text` whatever standard_conforming_strings is: in a plain
 * '…' literal a backslash escapes the next character while that setting is off, so a name such as
 * `a\'; DROP …` would end the literal early.
 */
export function quoteLiteral(text: string): string {
  if (text.includes('\u0000')) throw new Error('text with NUL cannot be a SQL literal');
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

export function schemaNameForDatabase(databaseId: string): string {
  const hex = databaseId.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new Error(`not a database id: ${databaseId}`);
  return `base_${hex}`;
}

export function qualifiedTable(schemaName: string, tableId: string): string {
  return `${quoteIdent(schemaName)}.${quoteIdent(tableId)}`;
}

/** Junction table of a linked-record field: one row per (record, linked record). */
export function linkTableName(fieldId: string): string {
  return `${fieldId}_links`;
}

/**
 * Indexes the service builds for upserts' matchOn fields are named with this prefix, so they can
 * be counted and dropped by name. (`<tableId>_match_` was the prefix of an older, unsafe scheme.)
 */
export function matchIndexPrefix(tableId: string): string {
  return `${tableId}_mx_`;
}

/** One name per set of fields, whatever their order: the ids are sorted before hashing. */
export function matchIndexName(tableId: string, fieldIds: readonly string[]): string {
  const canonical = [...fieldIds].sort().join(',');
  const digest = createHash('sha256').update(canonical).digest('hex').slice(0, 12);
  return `${matchIndexPrefix(tableId)}${digest}`;
}

/** Indexes the service builds for filtered and sorted fields (records-api read-indexes.ts). */
export function readIndexPrefix(tableId: string): string {
  return `${tableId}_rx_`;
}

/** One name per index definition: the same definition asked twice is one index. */
export function readIndexName(tableId: string, definition: string): string {
  const digest = createHash('sha256').update(definition).digest('hex').slice(0, 12);
  return `${readIndexPrefix(tableId)}${digest}`;
}

export const systemColumns = {
  id: 'id',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  /** Insertion order; the tie-breaker of every ordered query. */
  seq: 'seq',
} as const;
