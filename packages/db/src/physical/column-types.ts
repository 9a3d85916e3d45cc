import { fieldTypeModule } from '../field-types';
import type { ColumnSpec, FieldShape } from '../field-types/types';
import { quoteIdent } from './naming';

export type { ColumnSpec, FieldShape } from '../field-types/types';

/**
 * One typed column per field, so filters and sorts run on real types; each type's module
 * declares it, for some types from the field itself (its template), so every decision looks at
 * the field, never at the type alone. Linked records have no column: they live in a junction
 * table (see linkTableName); nor do computed fields read from the record's own columns
 * (created_time).
 */
export function columnSpecOf(field: FieldShape): ColumnSpec | undefined {
  const module = fieldTypeModule(field.type);
  return module.columnOf ? module.columnOf(field) : module.column;
}

export function hasColumn(field: FieldShape): boolean {
  return columnSpecOf(field) !== undefined;
}

/** The column of a field that has one; asking for one of a field without is a bug. */
export function requireColumnSpec(field: FieldShape): ColumnSpec {
  const spec = columnSpecOf(field);
  if (!spec) throw new Error(`a ${field.type} field has no column`);
  return spec;
}

export function columnDefinition(field: FieldShape): string {
  const spec = requireColumnSpec(field);
  if (spec.generated) return `${spec.sqlType} GENERATED ALWAYS AS (${spec.generated}) STORED`;
  return spec.notNullDefault ? `${spec.sqlType} NOT NULL DEFAULT ${spec.notNullDefault}` : spec.sqlType;
}

/**
 * The field's value as SQL over the record table aliased `r`: its column, or what its computed
 * type reads instead (created_time: the record's created_at). The one source of a field's value
 * for every SQL consumer (the records' JSON, filters, sorts, aggregates, the read-only SQL
 * views); '' for a link field, whose values its type reads from the junction table.
 */
export function fieldValueSql(field: FieldShape): string {
  if (hasColumn(field)) return `r.${quoteIdent(field.id)}`;
  return fieldTypeModule(field.type).valueSql?.(field) ?? '';
}
