import type { ApiKey as ApiKeyDto, ApiKeyScope } from '@recordbase/contracts/api-keys';
import { type Field as FieldDto, type FieldType, resultTypeOfFieldType } from '@recordbase/contracts/fields';
import type { Database as DatabaseDto, Table as TableDto } from '@recordbase/contracts/schema';

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

export function toFieldDto(field: FieldRow): FieldDto {
  const resultType = resultTypeOfFieldType(field.type as FieldType);
  return {
    id: field.id,
    name: field.name,
    type: field.type as FieldType,
    template: (field.template ?? {}) as Record<string, unknown>,
    ...(resultType ? { resultType } : {}),
  };
}

export function toTableDto(table: TableRow): TableDto {
  return {
    id: table.id,
    name: table.name,
    primaryFieldId: table.primaryFieldId ?? table.fields[0]?.id ?? '',
    fields: [...table.fields].sort((a, b) => a.position - b.position).map(toFieldDto),
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
