import type { ApiKey as ApiKeyDto, ApiKeyScope } from '@recordbase/contracts/api-keys';
import { type Field as FieldDto, type FieldType, resultTypeOfField } from '@recordbase/contracts/fields';
import type { Database as DatabaseDto, Table as TableDto } from '@recordbase/contracts/schema';
import { shownFormulaTemplate } from './formula-fields';
import { isLinkedValues, shownLinkedTemplate } from './linked-fields';

/** Shapes of the metadata rows as Prisma returns them, narrowed to what the API shows. */
export interface FieldRow {
  id: string;
  name: string;
  type: string;
  template: unknown;
  position: number;
}
export interface TableRow {
  id: string;
  name: string;
  primaryFieldId: string | null;
  createdAt: Date;
  updatedAt: Date;
  fields: FieldRow[];
}
export interface DatabaseRow {
  id: string;
  name: string;
  createdAt: Date;
  updatedAt: Date;
  tables: TableRow[];
}

/**
 * A field as the API shows it. A formula's expression names fields by their current names, which
 * `names` (the table's fields' names by id) gives; without it, by id.
 */
export function toFieldDto(field: Omit<FieldRow, 'position'>, names?: ReadonlyMap<string, string>): FieldDto {
  const type = field.type as FieldType;
  const resultType = resultTypeOfField({ type, template: field.template });
  const template =
    type === 'formula'
      ? shownFormulaTemplate(field.template, names ?? new Map())
      : isLinkedValues(field)
        ? shownLinkedTemplate(field.template)
        : (field.template ?? {});
  return {
    id: field.id,
    name: field.name,
    type,
    template: template as Record<string, unknown>,
    ...(resultType ? { resultType } : {}),
  };
}

/** The names of a table's fields by id, as formulas are shown with them. */
export const fieldNames = (fields: readonly { id: string; name: string }[]) =>
  new Map(fields.map((field) => [field.id, field.name]));

export function toTableDto(table: TableRow): TableDto {
  const names = fieldNames(table.fields);
  return {
    id: table.id,
    name: table.name,
    primaryFieldId: table.primaryFieldId ?? table.fields[0]?.id ?? '',
    fields: [...table.fields]
      .sort((a, b) => a.position - b.position)
      .map((field) => toFieldDto(field, names)),
    createdAt: table.createdAt.toISOString(),
    updatedAt: table.updatedAt.toISOString(),
  };
}

export function toDatabaseDto(database: DatabaseRow): DatabaseDto {
  return {
    id: database.id,
    name: database.name,
    tables: [...database.tables]
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
      .map(toTableDto),
    createdAt: database.createdAt.toISOString(),
    updatedAt: database.updatedAt.toISOString(),
  };
}

export function toApiKeyDto(key: {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  databaseIds: string[];
  allDatabases: boolean;
  createdAt: Date;
  lastUsedAt: Date | null;
}): ApiKeyDto {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scopes: key.scopes as ApiKeyScope[],
    databaseIds: key.allDatabases ? null : key.databaseIds,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
  };
}

/** Metadata includes for a table with its fields in order. */
export const tableWithFields = { fields: { orderBy: { position: 'asc' } } } as const;
