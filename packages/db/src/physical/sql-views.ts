import { createHash } from 'node:crypto';
import type { FieldType } from '@recordbase/contracts/fields';
import { moduleOfField } from '../field-types';
import { fieldValueSql } from './column-types';
import { qualifiedTable, quoteIdent, schemaNameForDatabase } from './naming';

/**
 * The views read-only SQL runs against: one schema per database, one view per table under the
 * table's name, one column per field under the field's name beside `id`, `createdAt` and
 * `updatedAt`, each value as its field type declares (`sqlValue` in field-types). The schema is
 * rebuilt whole in the transaction of every schema change, so renames and deletions follow.
 */

export function sqlViewSchemaName(databaseId: string): string {
  return schemaNameForDatabase(databaseId).replace(/^base_/, 'sql_');
}

/** PostgreSQL keeps 63 bytes of an identifier and silently cuts the rest. */
const MAX_IDENTIFIER_BYTES = 63;
const HASH_CHARACTERS = 8;

/**
 * The identifier a table or field is read under. A name that fits is kept as it is; a longer one
 * is cut on a character boundary and given a hash of the whole name, so two long names sharing a
 * beginning stay apart (names are unique per table or database, case aside, and the system names
 * are reserved, so names that fit cannot collide).
 */
export function sqlName(name: string): string {
  if (Buffer.byteLength(name, 'utf8') <= MAX_IDENTIFIER_BYTES) return name;
  const suffix = `~${createHash('sha256').update(name).digest('hex').slice(0, HASH_CHARACTERS)}`;
  let kept = '';
  for (const character of name) {
    if (Buffer.byteLength(kept + character, 'utf8') + suffix.length > MAX_IDENTIFIER_BYTES) break;
    kept += character;
  }
  return `${kept}${suffix}`;
}

/** A quoted identifier for any name without NUL (names never hold control characters). */
export function quoteName(name: string): string {
  if (name.includes('\u0000')) throw new Error('a name with NUL cannot be an identifier');
  return `"${name.replace(/"/g, '""')}"`;
}

export interface SqlViewTable {
  id: string;
  name: string;
  /** In their order in the table. */
  fields: readonly { id: string; name: string; type: FieldType; template: unknown }[];
}

export function sqlViewsDdl(
  databaseId: string,
  baseSchemaName: string,
  tables: readonly SqlViewTable[],
): string[] {
  const views = quoteIdent(sqlViewSchemaName(databaseId));
  const statements = [`DROP SCHEMA IF EXISTS ${views} CASCADE`, `CREATE SCHEMA ${views}`];
  for (const table of tables) {
    const columns = ['r.id AS "id"', 'r.created_at AS "createdAt"', 'r.updated_at AS "updatedAt"'];
    for (const field of table.fields) {
      const column = fieldValueSql(field);
      const module = moduleOfField(field);
      const value = module.sqlValue ? module.sqlValue({ field, schemaName: baseSchemaName, column }) : column;
      columns.push(`${value} AS ${quoteName(sqlName(field.name))}`);
    }
    statements.push(
      `CREATE VIEW ${views}.${quoteName(sqlName(table.name))} AS SELECT ${columns.join(', ')} FROM ${qualifiedTable(baseSchemaName, table.id)} r`,
    );
  }
  return statements;
}

/** Before the database's own schema goes (its tables' views depend on them). */
export function dropSqlViews(databaseId: string): string[] {
  return [`DROP SCHEMA IF EXISTS ${quoteIdent(sqlViewSchemaName(databaseId))} CASCADE`];
}
