import type { FieldType } from '@recordbase/contracts/fields';
import { fieldTypeModule } from '../field-types';
import { columnDefinition, fieldValueSql, hasColumn, requireColumnSpec } from './column-types';
import { type ConversionContext, conversionExpression } from './conversions';
import {
  linkTableName,
  matchIndexPrefix,
  qualifiedTable,
  quoteIdent,
  quoteLiteral,
  readIndexPrefix,
  schemaNameForDatabase,
  systemColumns,
} from './naming';

/**
 * Builders of the DDL behind databases, tables and fields. They return statements; the caller
 * runs them inside the transaction that changes the metadata, so both commit or neither does.
 */

export interface PhysicalField {
  id: string;
  name: string;
  type: FieldType;
  /** What some types' columns depend on (see columnSpecOf). */
  template?: unknown;
  /** For linked_record: the id of the linked table (same database). */
  linkedTableId?: string;
}

/** Link fields have a junction table instead of a column. */
const hasLinkTable = (field: PhysicalField) => fieldTypeModule(field.type).prepared === 'links';

/** What completes a column just added: its type's columnAdded, when it has one. */
function completeColumn(table: PhysicalTable, field: PhysicalField): string[] {
  const { columnAdded } = fieldTypeModule(field.type);
  if (!columnAdded) return [];
  return columnAdded({
    field,
    schemaName: table.schemaName,
    table: qualifiedTable(table.schemaName, table.id),
    column: quoteIdent(field.id),
  });
}

export interface PhysicalTable {
  schemaName: string;
  id: string;
  name: string;
}

export function createDatabaseSchema(databaseId: string): string[] {
  return [`CREATE SCHEMA ${quoteIdent(schemaNameForDatabase(databaseId))}`];
}

export function dropDatabaseSchema(schemaName: string): string[] {
  return [`DROP SCHEMA IF EXISTS ${quoteIdent(schemaName)} CASCADE`];
}

export function createTable(table: PhysicalTable, fields: readonly PhysicalField[]): string[] {
  return [...createTableWithoutIndexes(table, fields), ...createTableIndexes(table)];
}

/**
 * A new table without its indexes. A table filled in the transaction that creates it (an import)
 * gets its rows first and its indexes after (createTableIndexes): one build instead of an index
 * update per row, several times faster for a big file.
 */
export function createTableWithoutIndexes(table: PhysicalTable, fields: readonly PhysicalField[]): string[] {
  const ref = qualifiedTable(table.schemaName, table.id);
  const columns = [
    `${systemColumns.id} uuid NOT NULL DEFAULT gen_random_uuid()`,
    `${systemColumns.seq} bigint GENERATED ALWAYS AS IDENTITY`,
    `${systemColumns.createdAt} timestamptz NOT NULL DEFAULT now()`,
    `${systemColumns.updatedAt} timestamptz NOT NULL DEFAULT now()`,
  ];
  for (const field of fields) {
    if (hasColumn(field)) columns.push(`${quoteIdent(field.id)} ${columnDefinition(field)}`);
  }
  const statements = [
    `CREATE TABLE ${ref} (${columns.join(', ')})`,
    ...commentOnTable(table),
    ...rowCountTriggers(table),
  ];
  for (const field of fields) {
    if (hasColumn(field)) statements.push(...commentOnField(table, field), ...completeColumn(table, field));
  }
  return statements;
}

/** The indexes every table has; the primary key is the one link tables reference. */
export function createTableIndexes(table: PhysicalTable): string[] {
  const ref = qualifiedTable(table.schemaName, table.id);
  return [
    `ALTER TABLE ${ref} ADD PRIMARY KEY (${systemColumns.id})`,
    `CREATE UNIQUE INDEX ${quoteIdent(`${table.id}_seq`)} ON ${ref} (${systemColumns.seq})`,
    // The default order of every listing: createdAt ascending, insertion order breaking ties.
    `CREATE INDEX ${quoteIdent(`${table.id}_created`)} ON ${ref} (${systemColumns.createdAt}, ${systemColumns.seq})`,
  ];
}

/**
 * Keeps table_row_counts in step with the table: its row count and its write version (see the
 * table_row_counts and table_write_versions migrations).
 */
function rowCountTriggers(table: PhysicalTable): string[] {
  const ref = qualifiedTable(table.schemaName, table.id);
  const arg = quoteLiteral(table.id);
  return [
    `CREATE TRIGGER count_inserts AFTER INSERT ON ${ref} REFERENCING NEW TABLE AS inserted_rows FOR EACH STATEMENT EXECUTE FUNCTION public.rb_count_inserted_rows(${arg})`,
    `CREATE TRIGGER count_deletes AFTER DELETE ON ${ref} REFERENCING OLD TABLE AS deleted_rows FOR EACH STATEMENT EXECUTE FUNCTION public.rb_count_deleted_rows(${arg})`,
    // Updates change no count but what filters match: they advance the write version.
    `CREATE TRIGGER count_updates AFTER UPDATE ON ${ref} REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION public.rb_count_write(${arg})`,
    `INSERT INTO public.table_row_counts (table_id, delta) VALUES (${arg}, 0)`,
  ];
}

/** Link fields need every table to exist first, so they are added after the tables. */
export function createLinkTable(table: PhysicalTable, field: PhysicalField): string[] {
  if (!field.linkedTableId) throw new Error(`linked_record field ${field.id} has no linked table`);
  const link = qualifiedTable(table.schemaName, linkTableName(field.id));
  return [
    `CREATE TABLE ${link} (
      record_id uuid NOT NULL REFERENCES ${qualifiedTable(table.schemaName, table.id)} (id) ON DELETE CASCADE,
      linked_id uuid NOT NULL REFERENCES ${qualifiedTable(table.schemaName, field.linkedTableId)} (id) ON DELETE CASCADE,
      position integer NOT NULL,
      PRIMARY KEY (record_id, linked_id)
    )`,
    // The reverse direction: which records link to a given record.
    `CREATE INDEX ${quoteIdent(`${field.id}_links_rev`)} ON ${link} (linked_id)`,
    // Links are values of the owning table's records: changing them advances its write version.
    `CREATE TRIGGER count_link_inserts AFTER INSERT ON ${link} REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION public.rb_count_write(${quoteLiteral(table.id)})`,
    `CREATE TRIGGER count_link_deletes AFTER DELETE ON ${link} REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION public.rb_count_write(${quoteLiteral(table.id)})`,
    `COMMENT ON TABLE ${link} IS ${quoteLiteral(`links of field ${field.name}`)}`,
  ];
}

export function dropTable(table: PhysicalTable, linkFieldIds: readonly string[]): string[] {
  return [
    ...linkFieldIds.map(
      (id) => `DROP TABLE IF EXISTS ${qualifiedTable(table.schemaName, linkTableName(id))}`,
    ),
    `DROP TABLE ${qualifiedTable(table.schemaName, table.id)}`,
    `DELETE FROM public.table_row_counts WHERE table_id = ${quoteLiteral(table.id)}`,
  ];
}

export function commentOnTable(table: PhysicalTable): string[] {
  return [`COMMENT ON TABLE ${qualifiedTable(table.schemaName, table.id)} IS ${quoteLiteral(table.name)}`];
}

/** The field's name rides along as the column comment, so the physical table explains itself. */
export function commentOnField(table: PhysicalTable, field: PhysicalField): string[] {
  // A computed field read from other columns (created_time) has nothing of its own to name.
  if (!hasColumn(field) && !hasLinkTable(field)) return [];
  if (hasLinkTable(field)) {
    return [
      `COMMENT ON TABLE ${qualifiedTable(table.schemaName, linkTableName(field.id))} IS ${quoteLiteral(`links of field ${field.name}`)}`,
    ];
  }
  return [
    `COMMENT ON COLUMN ${qualifiedTable(table.schemaName, table.id)}.${quoteIdent(field.id)} IS ${quoteLiteral(field.name)}`,
  ];
}

export function addField(table: PhysicalTable, field: PhysicalField): string[] {
  if (hasLinkTable(field)) return createLinkTable(table, field);
  if (!hasColumn(field)) return [];
  return [
    `ALTER TABLE ${qualifiedTable(table.schemaName, table.id)} ADD COLUMN ${quoteIdent(field.id)} ${columnDefinition(field)}`,
    ...commentOnField(table, field),
    ...completeColumn(table, field),
  ];
}

export function dropField(table: PhysicalTable, field: PhysicalField): string[] {
  if (!hasColumn(field) && !hasLinkTable(field)) return [];
  if (hasLinkTable(field))
    return [
      `DROP TABLE ${qualifiedTable(table.schemaName, linkTableName(field.id))}`,
      advanceWriteVersion(table),
    ];
  return [
    `ALTER TABLE ${qualifiedTable(table.schemaName, table.id)} DROP COLUMN ${quoteIdent(field.id)}`,
    advanceWriteVersion(table),
  ];
}

/**
 * The database trash (migrations/*_schema_trash.sql) keeps a deleted field's data where it is, so
 * a restore brings back exactly what was there, and costs nothing until then:
 * - a link field's link table stays (rows naming deleted records still go, by its foreign keys);
 * - a written field's column stays, without its service indexes (which a write would maintain and
 *   the planner consider) and with its default, so new records get what they would have had (an
 *   autonumber's number, a checkbox's false): nothing reads it, since no metadata names it;
 * - a derived field's column (a stored formula, a lookup) is dropped: a restore computes it again,
 *   and a generated column kept would still be computed on every write.
 * The table's write version moves on: its records read differently from now on.
 */
const keepsColumnInTrash = (field: PhysicalField) =>
  hasColumn(field) && fieldTypeModule(field.type).derived !== true;

/** A field's deletion into the database trash. */
export function trashField(table: PhysicalTable, field: PhysicalField): string[] {
  if (hasLinkTable(field)) return [advanceWriteVersion(table)];
  if (!hasColumn(field)) return [];
  if (!keepsColumnInTrash(field)) return dropField(table, field);
  return [...dropServiceIndexesOfColumn(table, field.id), advanceWriteVersion(table)];
}

/** A trashed field's data back in use: its kept column or link table named again, or computed again. */
export function restoreTrashedField(table: PhysicalTable, field: PhysicalField): string[] {
  if (hasLinkTable(field)) return [...commentOnField(table, field), advanceWriteVersion(table)];
  if (!hasColumn(field)) return [];
  if (!keepsColumnInTrash(field)) return addField(table, field);
  return [...commentOnField(table, field), advanceWriteVersion(table)];
}

/** What a trashed field kept, dropped for good (its table may be gone already). */
export function purgeTrashedField(table: PhysicalTable, field: PhysicalField): string[] {
  if (hasLinkTable(field))
    return [`DROP TABLE IF EXISTS ${qualifiedTable(table.schemaName, linkTableName(field.id))}`];
  if (!keepsColumnInTrash(field)) return [];
  return [
    `ALTER TABLE IF EXISTS ${qualifiedTable(table.schemaName, table.id)} DROP COLUMN IF EXISTS ${quoteIdent(field.id)}`,
  ];
}

/**
 * A trashed table dropped for good, with its link tables and those of other tables' link fields
 * that were deleted with it (by id); CASCADE takes the foreign keys of link tables still in the
 * trash that point at it.
 */
export function purgeTrashedTable(table: PhysicalTable, linkFieldIds: readonly string[]): string[] {
  return [
    ...linkFieldIds.map(
      (id) => `DROP TABLE IF EXISTS ${qualifiedTable(table.schemaName, linkTableName(id))}`,
    ),
    `DROP TABLE IF EXISTS ${qualifiedTable(table.schemaName, table.id)} CASCADE`,
    `DELETE FROM public.table_row_counts WHERE table_id = ${quoteLiteral(table.id)}`,
  ];
}

/**
 * For DDL that changes values without firing the row triggers (a column's conversion, a dropped
 * field): counts kept for the table's write version must not outlive it.
 */
export function advanceWriteVersion(table: Pick<PhysicalTable, 'id'>): string {
  return `INSERT INTO public.table_row_counts (table_id, delta) VALUES (${quoteLiteral(table.id)}, 0)`;
}

/**
 * Statements that change a column to a new field type, converting its values; null when the
 * pair has no conversion. Timestamps are read and written in UTC whatever the server's zone.
 */
export function changeFieldType(
  table: PhysicalTable,
  field: PhysicalField,
  to: FieldType,
  context: ConversionContext = {},
): string[] | null {
  const changed: PhysicalField = { ...field, type: to, template: context.template };
  if (!hasColumn(changed)) return null;
  if (!hasColumn(field)) return columnFromComputedValues(table, field, changed, context);
  const column = quoteIdent(field.id);
  const expression = conversionExpression(field.type, to, column, context);
  if (expression === null) return null;
  const ref = qualifiedTable(table.schemaName, table.id);
  const target = requireColumnSpec(changed);
  const statements = [
    `SET LOCAL TIME ZONE 'UTC'`,
    ...dropServiceIndexesOfColumn(table, field.id),
    `ALTER TABLE ${ref} ALTER COLUMN ${column} DROP DEFAULT, ALTER COLUMN ${column} DROP NOT NULL`,
    `ALTER TABLE ${ref} ALTER COLUMN ${column} TYPE ${target.sqlType} USING ${expression}`,
    advanceWriteVersion(table),
  ];
  if (target.notNullDefault) {
    statements.push(
      `ALTER TABLE ${ref} ALTER COLUMN ${column} SET DEFAULT ${target.notNullDefault}, ALTER COLUMN ${column} SET NOT NULL`,
    );
  }
  return statements;
}

/**
 * A computed field without a column (created_time) becoming a written one keeps the values it
 * showed: a new column filled from what the field read. Null when the pair has no conversion.
 */
function columnFromComputedValues(
  table: PhysicalTable,
  field: PhysicalField,
  changed: PhysicalField,
  context: ConversionContext,
): string[] | null {
  const value = fieldValueSql(field);
  if (value === '') return null;
  const expression = conversionExpression(field.type, changed.type, value, context);
  if (expression === null) return null;
  const ref = qualifiedTable(table.schemaName, table.id);
  const column = quoteIdent(field.id);
  const target = requireColumnSpec(changed);
  return [
    `SET LOCAL TIME ZONE 'UTC'`,
    `ALTER TABLE ${ref} ADD COLUMN ${column} ${target.sqlType}`,
    `UPDATE ${ref} AS r SET ${column} = ${expression}`,
    ...(target.notNullDefault
      ? [
          `ALTER TABLE ${ref} ALTER COLUMN ${column} SET DEFAULT ${target.notNullDefault}, ALTER COLUMN ${column} SET NOT NULL`,
        ]
      : []),
    ...commentOnField(table, changed),
    advanceWriteVersion(table),
  ];
}

/**
 * ALTER COLUMN TYPE would rebuild the indexes the service built on the column for the new type:
 * a number's raw btree becomes a raw btree on text, which long values overflow, and a text hash or
 * trigram index cannot apply to a number at all. They are dropped instead; the next upsert or
 * listing that needs one builds the index the new type needs.
 */
export function dropServiceIndexesOfColumn(table: PhysicalTable, fieldId: string): string[] {
  const indexesOnColumn = `SELECT format('DROP INDEX %I.%I', n.nspname, c.relname)
      FROM pg_depend d
      JOIN pg_class c ON c.oid = d.objid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
     WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
       AND d.refobjid = ${quoteLiteral(qualifiedTable(table.schemaName, table.id))}::regclass
       AND a.attname = ${quoteLiteral(fieldId)}
       AND c.relkind = 'i'
       AND (starts_with(c.relname, ${quoteLiteral(matchIndexPrefix(table.id))})
            OR starts_with(c.relname, ${quoteLiteral(readIndexPrefix(table.id))}))`;
  return [
    `DO $$ DECLARE drop_index text; BEGIN
       FOR drop_index IN ${indexesOnColumn} LOOP EXECUTE drop_index; END LOOP;
     END $$`,
  ];
}
