import type { Principal } from '@recordbase/contracts/api-keys';
import type { FieldType } from '@recordbase/contracts/fields';
import type { Table } from '@recordbase/contracts/schema';

type Field = Table['fields'][number];

import type { PrismaClient } from '@recordbase/db';
import { reachableDatabases } from '../access';
import { listTables } from '../tables';

/**
 * The meta routes of the Airtable-compatible API (api-contract "The Airtable-compatible API"):
 * the bases a key reaches, and a base's tables with their fields and views, in Airtable's shapes
 * and with Airtable's names of the field types, so a program that reads a base's schema before
 * its records finds what it expects.
 */

/** Airtable's name of each of our field types. */
const AIRTABLE_TYPES: Readonly<Record<FieldType, string>> = {
  single_line_text: 'singleLineText',
  long_text: 'multilineText',
  email: 'email',
  url: 'url',
  phone_number: 'phoneNumber',
  number: 'number',
  currency: 'currency',
  percent: 'percent',
  rating: 'rating',
  duration: 'duration',
  date: 'date',
  datetime: 'dateTime',
  single_select: 'singleSelect',
  multiple_select: 'multipleSelects',
  checkbox: 'checkbox',
  attachments: 'multipleAttachments',
  linked_record: 'multipleRecordLinks',
  autonumber: 'autoNumber',
  created_time: 'createdTime',
  last_modified_time: 'lastModifiedTime',
  created_by: 'createdBy',
  last_modified_by: 'lastModifiedBy',
  formula: 'formula',
  count: 'count',
  lookup: 'multipleLookupValues',
  rollup: 'rollup',
};

export interface AirtableBase {
  id: string;
  name: string;
  permissionLevel: 'read' | 'edit' | 'create';
}

export interface AirtableField {
  id: string;
  name: string;
  type: string;
  options?: Record<string, unknown>;
}

export interface AirtableTable {
  id: string;
  name: string;
  primaryFieldId: string;
  fields: AirtableField[];
  views: { id: string; name: string; type: 'grid' }[];
}

/** What the key may do in a base, in Airtable's words: change its schema, write records, or read. */
function permissionLevel(principal: Principal): AirtableBase['permissionLevel'] {
  if (principal.keyId === null || principal.scopes.has('schema:write')) return 'create';
  return principal.scopes.has('records:write') ? 'edit' : 'read';
}

/** GET /v0/meta/bases: every base the key reaches, oldest first. */
export async function airtableBases(
  prisma: PrismaClient,
  principal: Principal,
): Promise<{ bases: AirtableBase[] }> {
  const rows = await prisma.database.findMany({
    where: reachableDatabases(principal),
    select: { id: true, name: true },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const level = permissionLevel(principal);
  return { bases: rows.map((row) => ({ id: row.id, name: row.name, permissionLevel: level })) };
}

/** A field's settings as Airtable names those it shares with ours. */
function optionsOf(field: Field): Record<string, unknown> | undefined {
  const template = field.template as Record<string, unknown>;
  switch (field.type) {
    case 'single_select':
    case 'multiple_select':
      return { choices: (template.options as { name: string; color?: string }[] | undefined) ?? [] };
    case 'linked_record':
      return { linkedTableId: template.tableId };
    case 'number':
    case 'percent':
      return template.decimalPlaces === undefined ? undefined : { precision: template.decimalPlaces };
    case 'currency':
      return {
        ...(template.decimalPlaces === undefined ? {} : { precision: template.decimalPlaces }),
        ...(template.currencySymbol === undefined ? {} : { symbol: template.currencySymbol }),
      };
    case 'rating':
      return { max: template.max ?? 5 };
    case 'formula':
      return {
        formula: template.expression,
        ...(field.resultType ? { result: { type: field.resultType } } : {}),
      };
    default:
      return undefined;
  }
}

function airtableTableOf(table: Table, views: { id: string; name: string }[]): AirtableTable {
  return {
    id: table.id,
    name: table.name,
    primaryFieldId: table.primaryFieldId,
    fields: table.fields.map((field) => {
      const options = optionsOf(field);
      return {
        id: field.id,
        name: field.name,
        type: AIRTABLE_TYPES[field.type],
        ...(options ? { options } : {}),
      };
    }),
    views: views.map((view) => ({ id: view.id, name: view.name, type: 'grid' as const })),
  };
}

/** GET /v0/meta/bases/{baseId}/tables: the base's tables, oldest first, with fields and views. */
export async function airtableTables(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
): Promise<{ tables: AirtableTable[] }> {
  const tables = await listTables(prisma, principal, databaseId);
  const views = await prisma.view.findMany({
    where: { tableId: { in: tables.map((table) => table.id) } },
    select: { id: true, name: true, tableId: true },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return {
    tables: tables.map((table) =>
      airtableTableOf(
        table,
        views.filter((view) => view.tableId === table.id),
      ),
    ),
  };
}
