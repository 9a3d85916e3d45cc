import type { FieldType } from '@recordbase/contracts/fields';
import { fieldTypeModule } from '../field-types';
import type { ColumnSpec } from '../field-types/types';

export type { ColumnSpec } from '../field-types/types';

/**
 * One typed column per field, so filters and sorts run on real types; each type's module
 * declares it. Linked records have no column: they live in a junction table (see linkTableName).
 */
export function columnSpecOf(type: FieldType): ColumnSpec | undefined {
  return fieldTypeModule(type).column;
}

export function hasColumn(type: FieldType): boolean {
  return columnSpecOf(type) !== undefined;
}

/** The column of a type that has one; asking for one of a type without is a bug. */
export function requireColumnSpec(type: FieldType): ColumnSpec {
  const spec = columnSpecOf(type);
  if (!spec) throw new Error(`a ${type} field has no column`);
  return spec;
}

export function columnDefinition(type: FieldType): string {
  const spec = requireColumnSpec(type);
  return spec.notNullDefault ? `${spec.sqlType} NOT NULL DEFAULT ${spec.notNullDefault}` : spec.sqlType;
}
