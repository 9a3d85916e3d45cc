import type { FieldType } from '@recordbase/contracts/fields';

export interface ColumnSpec {
  /** PostgreSQL type of the column. */
  sqlType: string;
  /** NOT NULL with this default, for types whose empty value is not null. */
  notNullDefault?: string;
}

/**
 * One typed column per field, so filters and sorts run on real types. Linked records have no
 * column: they live in a junction table (see linkTableName).
 */
export const columnSpecByType: Record<Exclude<FieldType, 'linked_record'>, ColumnSpec> = {
  single_line_text: { sqlType: 'text' },
  long_text: { sqlType: 'text' },
  email: { sqlType: 'text' },
  url: { sqlType: 'text' },
  phone_number: { sqlType: 'text' },
  number: { sqlType: 'double precision' },
  currency: { sqlType: 'double precision' },
  percent: { sqlType: 'double precision' },
  rating: { sqlType: 'smallint' },
  duration: { sqlType: 'double precision' },
  date: { sqlType: 'date' },
  datetime: { sqlType: 'timestamptz' },
  single_select: { sqlType: 'text' },
  multiple_select: { sqlType: 'text[]', notNullDefault: "'{}'::text[]" },
  checkbox: { sqlType: 'boolean', notNullDefault: 'false' },
  attachments: { sqlType: 'jsonb', notNullDefault: "'[]'::jsonb" },
};

export function hasColumn(type: FieldType): type is Exclude<FieldType, 'linked_record'> {
  return type !== 'linked_record';
}

export function columnDefinition(type: Exclude<FieldType, 'linked_record'>): string {
  const spec = columnSpecByType[type];
  return spec.notNullDefault ? `${spec.sqlType} NOT NULL DEFAULT ${spec.notNullDefault}` : spec.sqlType;
}
