import { type InputPath, invalid } from '@recordbase/contracts/domain-errors';
import type { FieldTemplate, FieldType, SystemFieldName } from '@recordbase/contracts/fields';
import { isComputedFieldType, systemFieldNames } from '@recordbase/contracts/fields';
import type { Filter } from '@recordbase/contracts/filters';
import type { Sort } from '@recordbase/contracts/sorts';
import type { FieldSql } from '@recordbase/db/field-types';
import { didYouMean } from '@recordbase/db/field-types';
import { fieldValueSql } from '@recordbase/db/physical';
import { nameKey } from '../access';

export interface FieldMeta {
  id: string;
  name: string;
  type: FieldType;
  template: FieldTemplate;
}

/** A table's metadata as the record paths need it, with lookups by id and by name. */
export interface TableMeta {
  databaseId: string;
  schemaName: string;
  id: string;
  name: string;
  primaryFieldId: string;
  /** In display order. */
  fields: FieldMeta[];
  /**
   * The database's schema version the metadata was read at (loaded metadata only): a listing
   * that reads another knows the metadata is stale (store.ts).
   */
  schemaVersion?: string;
  /**
   * The count, lookup and rollup fields of the database over a link to this table (this one's own
   * too, when it links to itself): a write to its records refreshes theirs (linked-refresh.ts).
   * Absent: none.
   */
  linkedReaders?: readonly LinkedReader[];
  /**
   * The table's saved views (loaded metadata only; absent: none), kept with the fields because a
   * view change NOTIFYs as a schema change does (views.ts), so both are current together.
   */
  views?: readonly ViewMeta[];
  fieldsById: ReadonlyMap<string, FieldMeta>;
  fieldsByNameKey: ReadonlyMap<string, FieldMeta>;
}

/** A saved view as a read applies it: field references by id (system fields by name). */
export interface ViewMeta {
  id: string;
  name: string;
  filter: Filter | null;
  sort: readonly Sort[];
  /** The projection; empty: every field. */
  fieldIds: readonly string[];
  search: string | null;
  /** A webhook names it: record events of the table carry its members before and after (view-members.ts). */
  watched?: boolean;
}

/** A count, lookup or rollup field reading a table through a link: its table, and the field it reads (none: a count). */
export interface LinkedReader {
  tableId: string;
  fieldId: string | null;
}

/** Metadata found older than the rows it was used on: loaded again, and the work run once more. */
export class StaleTableMeta extends Error {
  constructor() {
    super('table metadata older than the database schema');
  }
}

/**
 * The database's schema version as SQL (`databaseId` the SQL of its id), for a statement to read
 * in its own snapshot beside its work, and compare with assertCurrentMeta.
 */
export const schemaVersionSql = (databaseId: string) =>
  `(SELECT schema_version::text FROM public.databases WHERE id = ${databaseId}::uuid)`;

/** StaleTableMeta when metadata that knows its version was read at another than `version`. */
export function assertCurrentMeta(
  table: Pick<TableMeta, 'schemaVersion'>,
  version: string | null | undefined,
) {
  if (table.schemaVersion !== undefined && version !== table.schemaVersion) throw new StaleTableMeta();
}

export function buildTableMeta(input: Omit<TableMeta, 'fieldsById' | 'fieldsByNameKey'>): TableMeta {
  return {
    ...input,
    fieldsById: new Map(input.fields.map((field) => [field.id, field])),
    fieldsByNameKey: new Map(input.fields.map((field) => [nameKey(field.name), field])),
  };
}

/** A field by id, else by name (case-insensitive). */
export function findField(table: TableMeta, ref: string): FieldMeta | undefined {
  return table.fieldsById.get(ref) ?? table.fieldsByNameKey.get(nameKey(ref));
}

/** `unknown field "Nmae" (did you mean "Name"?)`: the words of every refusal of a name that is no field. */
export function unknownField(table: TableMeta, ref: string, systemNames: readonly string[] = []): string {
  const names = [...table.fields.map((field) => field.name), ...systemNames];
  return `unknown field ${JSON.stringify(ref)}${didYouMean(ref, names)}`;
}

/** The field `ref` names (id or name), or the refusal `unknown field …` at `where` with the nearest names. */
export function requireField(table: TableMeta, ref: string, where: InputPath): FieldMeta {
  const field = findField(table, ref);
  if (!field) throw invalid(where, unknownField(table, ref));
  return field;
}

/**
 * The fields a read renders: those `refs` name (ids or names), in the table's order, each once;
 * every field without a projection. `where` is the place of `refs` in the input.
 */
export function projectedFields(
  table: TableMeta,
  refs: readonly string[] | undefined,
  where: InputPath,
): readonly FieldMeta[] {
  if (refs === undefined) return table.fields;
  const chosen = new Set<string>();
  refs.forEach((ref, index) => {
    chosen.add(requireField(table, ref, [...where, index]).id);
  });
  return table.fields.filter((field) => chosen.has(field.id));
}

export type FieldOrSystem = { kind: 'field'; field: FieldMeta } | { kind: 'system'; name: SystemFieldName };

/** Sorts and filters also accept the system fields id, createdAt and updatedAt. */
export function resolveFieldOrSystem(table: TableMeta, ref: string): FieldOrSystem | undefined {
  const field = findField(table, ref);
  if (field) return { kind: 'field', field };
  const system = systemFieldNames.find((name) => name === ref);
  return system ? { kind: 'system', name: system } : undefined;
}

/**
 * A field as the registry's SQL builders see it, over a record table aliased `r`: `column` is its
 * value, its own column or what its computed type reads instead (fieldValueSql).
 */
export function fieldSql(table: Pick<TableMeta, 'schemaName'>, field: FieldMeta): FieldSql {
  return { field, schemaName: table.schemaName, column: fieldValueSql(field) };
}

/**
 * Why a write may not give the field a value, or null when it may: computed fields are read,
 * never written. The one check of every write path (record bodies, upserts' matchOn).
 */
export function unwritable(field: FieldMeta): string | null {
  if (!isComputedFieldType(field.type)) return null;
  return `field ${JSON.stringify(field.name)} is a ${field.type} field, which the service computes: it cannot be written`;
}
