import {
  apiKeyListSchema,
  apiKeyScopes,
  createApiKeyRequestSchema,
  createdApiKeySchema,
} from '@recordbase/contracts/api-keys';
import { successMessageSchema } from '@recordbase/contracts/errors';
import {
  createFieldRequestSchema,
  fieldSchema,
  updateFieldRequestSchema,
} from '@recordbase/contracts/fields';
import {
  MAX_RESTORED_SCHEMA_ITEMS,
  restoredSchemaSchema,
  restoreSchemaTrashRequestSchema,
  schemaTrashSchema,
} from '@recordbase/contracts/history';
import {
  createDatabaseRequestSchema,
  createTableRequestSchema,
  databaseListSchema,
  databaseSchema,
  MAX_FIELDS_PER_TABLE,
  MAX_TABLES_PER_DATABASE,
  tableListSchema,
  tableSchema,
  updateDatabaseRequestSchema,
  updateTableRequestSchema,
} from '@recordbase/contracts/schema';
import {
  createViewRequestSchema,
  MAX_VIEWS_PER_TABLE,
  updateViewRequestSchema,
  viewListSchema,
  viewSchema,
} from '@recordbase/contracts/views';
import * as ex from './examples';
import type { Operation } from './operation';
import { apiKeyParams, baseParams, fieldParams, tableParams, viewParams } from './params';

const V1 = '/api/v1';
const schemaRead = { scope: 'schema:read' } as const;
const schemaWrite = { scope: 'schema:write' } as const;

const deleted = (message: string) => ({
  response: successMessageSchema,
  responseExample: { success: true, message },
});

/** API keys, databases, tables and fields (apps/records-api/src/http/schema.routes.ts). */
export const schemaOperations: Operation[] = [
  {
    method: 'post',
    path: `${V1}/api-keys`,
    operationId: 'createApiKey',
    tag: 'API keys',
    summary: 'Create an API key',
    description:
      `Scopes: ${apiKeyScopes.join(', ')}. \`databaseIds\` limits the key to those databases; left out, ` +
      'the key reaches every database, including later ones. The answer carries the key itself, once.',
    access: 'root',
    body: createApiKeyRequestSchema,
    bodyExample: {
      name: 'CRM sync',
      scopes: ['records:read', 'records:write'],
      databaseIds: [ex.DATABASE_ID],
    },
    status: 201,
    response: createdApiKeySchema,
    responseExample: { ...ex.apiKey, key: 'rb_live_4f9a0c1e7d2b8a6f5e3c9d1b7a2f4e6c' },
    errors: [400, 401, 403, 429],
  },
  {
    method: 'get',
    path: `${V1}/api-keys`,
    operationId: 'listApiKeys',
    tag: 'API keys',
    summary: 'List API keys',
    description: 'Every key, without the keys themselves.',
    access: 'root',
    response: apiKeyListSchema,
    responseExample: { apiKeys: [ex.apiKey] },
    errors: [401, 403, 429],
  },
  {
    method: 'delete',
    path: `${V1}/api-keys/{apiKeyId}`,
    operationId: 'revokeApiKey',
    tag: 'API keys',
    summary: 'Revoke an API key',
    description: 'Requests with the key are refused from then on, in every process.',
    access: 'root',
    params: apiKeyParams,
    ...deleted('API key revoked'),
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'post',
    path: `${V1}/bases`,
    operationId: 'createDatabase',
    tag: 'Databases',
    summary: 'Create a database',
    description: 'A database (base) with, optionally, its tables and their fields in one request.',
    access: schemaWrite,
    body: createDatabaseRequestSchema,
    bodyExample: {
      name: 'Sales',
      tables: [
        {
          name: 'Deals',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            {
              name: 'Status',
              type: 'single_select',
              template: { options: [{ name: 'Open' }, { name: 'Won' }] },
            },
            { name: 'Amount', type: 'currency', template: { decimalPlaces: 2, currencySymbol: '€' } },
          ],
        },
      ],
    },
    status: 201,
    response: databaseSchema,
    responseExample: ex.database,
    errors: [400, 401, 403, 413, 429],
  },
  {
    method: 'get',
    path: `${V1}/bases`,
    operationId: 'listDatabases',
    tag: 'Databases',
    summary: 'List databases',
    description: 'The databases the key can reach, with their tables and fields.',
    access: schemaRead,
    response: databaseListSchema,
    responseExample: { bases: [ex.database] },
    errors: [401, 403, 429],
  },
  {
    method: 'get',
    path: `${V1}/bases/{databaseId}`,
    operationId: 'getDatabase',
    tag: 'Databases',
    summary: 'Get a database',
    access: schemaRead,
    params: baseParams,
    response: databaseSchema,
    responseExample: ex.database,
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'patch',
    path: `${V1}/bases/{databaseId}`,
    operationId: 'renameDatabase',
    tag: 'Databases',
    summary: 'Rename a database',
    access: schemaWrite,
    params: baseParams,
    body: updateDatabaseRequestSchema,
    bodyExample: { name: 'Sales 2026' },
    response: databaseSchema,
    responseExample: { ...ex.database, name: 'Sales 2026' },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'delete',
    path: `${V1}/bases/{databaseId}`,
    operationId: 'deleteDatabase',
    tag: 'Databases',
    summary: 'Delete a database',
    description: 'With its tables, records, webhooks and imports.',
    access: schemaWrite,
    params: baseParams,
    ...deleted('Database deleted'),
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'get',
    path: `${V1}/bases/{databaseId}/trash`,
    operationId: 'listDatabaseTrash',
    tag: 'Databases',
    summary: "List a database's deleted tables and fields",
    description:
      "The database's trash, most recently deleted first: its deleted tables, each as it was when it was " +
      'deleted with its fields, and the fields deleted on their own, each with the id of its table ' +
      '(`tableId`); each with when (`deletedAt`) and by which key (`deletedBy`, null when none is ' +
      'recorded). At most the newest 100 tables and 1,000 fields. While in the trash a table or field ' +
      "is out of every listing and SQL view, and a field does not count against its table's " +
      `${MAX_FIELDS_PER_TABLE} fields. It stays there, with its data, until it is restored, or for 7 days by ` +
      'default (the `TRASH_RETENTION` setting), after which it and its data are purged for good.',
    access: schemaRead,
    params: baseParams,
    response: schemaTrashSchema,
    responseExample: ex.schemaTrash,
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'post',
    path: `${V1}/bases/{databaseId}/trash/restore`,
    operationId: 'restoreDatabaseTrash',
    tag: 'Databases',
    summary: 'Restore tables and fields from the trash',
    description:
      `Brings back up to ${MAX_RESTORED_SCHEMA_ITEMS} deleted tables (\`tableIds\`) and up to ` +
      `${MAX_RESTORED_SCHEMA_ITEMS} deleted fields (\`fieldIds\`), at least one in all, as they were: the same ids, ` +
      'names, types and templates. A table comes back with its records, their links, its record trash, ' +
      'and the link fields of other tables that were deleted with it (answered in `fields`); a field ' +
      'comes back into its table with its values, formulas, lookups, rollups and counts computed again ' +
      'from what they read now. Answers the tables and the fields as they are now. All or nothing: an id ' +
      "that is not in the database's trash is 404 naming it and nothing is restored; what stands in the " +
      'way is 400 naming it (a table or field of the same name there now, a field whose table is in ' +
      'the trash, a link field whose linked table is in the trash, a formula or lookup that reads a field ' +
      `deleted since, a table holding ${MAX_FIELDS_PER_TABLE} fields), and nothing is restored. Each table ` +
      'restored appends a `table.created` event and each field a `field.created` event, which webhooks hear.',
    access: schemaWrite,
    params: baseParams,
    body: restoreSchemaTrashRequestSchema,
    bodyExample: { tableIds: [ex.CONTACTS_TABLE_ID], fieldIds: [ex.STAGE_FIELD_ID] },
    response: restoredSchemaSchema,
    responseExample: ex.restoredSchema,
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'post',
    path: `${V1}/bases/{databaseId}/tables`,
    operationId: 'createTable',
    tag: 'Tables',
    summary: 'Create a table',
    description:
      `A table with its fields (1 to ${MAX_FIELDS_PER_TABLE}; the first is the primary field). A database ` +
      `holds at most ${MAX_TABLES_PER_DATABASE} tables.`,
    access: schemaWrite,
    params: baseParams,
    body: createTableRequestSchema,
    bodyExample: {
      name: 'Deals',
      fields: [
        { name: 'Name', type: 'single_line_text' },
        { name: 'Status', type: 'single_select', template: { options: [{ name: 'Open' }, { name: 'Won' }] } },
        { name: 'Amount', type: 'currency', template: { decimalPlaces: 2, currencySymbol: '€' } },
      ],
    },
    status: 201,
    response: tableSchema,
    responseExample: ex.table,
    errors: [400, 401, 403, 404, 413, 429],
  },
  {
    method: 'get',
    path: `${V1}/bases/{databaseId}/tables`,
    operationId: 'listTables',
    tag: 'Tables',
    summary: 'List tables',
    access: schemaRead,
    params: baseParams,
    response: tableListSchema,
    responseExample: { tables: [ex.table] },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'get',
    path: `${V1}/bases/{databaseId}/tables/{tableId}`,
    operationId: 'getTable',
    tag: 'Tables',
    summary: 'Get a table',
    description: 'The table with its fields, their types and templates.',
    access: schemaRead,
    params: tableParams,
    response: tableSchema,
    responseExample: ex.table,
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'patch',
    path: `${V1}/bases/{databaseId}/tables/{tableId}`,
    operationId: 'updateTable',
    tag: 'Tables',
    summary: 'Rename a table or change its primary field',
    access: schemaWrite,
    params: tableParams,
    body: updateTableRequestSchema,
    bodyExample: { name: 'Open deals' },
    response: tableSchema,
    responseExample: { ...ex.table, name: 'Open deals' },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'delete',
    path: `${V1}/bases/{databaseId}/tables/{tableId}`,
    operationId: 'deleteTable',
    tag: 'Tables',
    summary: 'Delete a table',
    description:
      "The table goes to the database's trash with its records, and so do the other tables' link " +
      'fields to it (see Restore tables and fields from the trash).',
    access: schemaWrite,
    params: tableParams,
    ...deleted('Table deleted'),
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'post',
    path: `${V1}/bases/{databaseId}/tables/{tableId}/fields`,
    operationId: 'createField',
    tag: 'Fields',
    summary: 'Add a field',
    description:
      "The field's `type` decides its `template` (settings) and the shape of its values: see the FieldInput, " +
      'Template_<type> and FieldValue_<type> schemas.',
    access: schemaWrite,
    params: tableParams,
    body: createFieldRequestSchema,
    bodyExample: {
      name: 'Stage',
      type: 'single_select',
      template: {
        options: [
          { name: 'Lead', color: 'gray' },
          { name: 'Proposal', color: 'yellow' },
        ],
      },
    },
    status: 201,
    response: fieldSchema,
    responseExample: {
      id: 'fldSt4g3Qw8Er5Ty1',
      name: 'Stage',
      type: 'single_select',
      template: {
        options: [
          { name: 'Lead', color: 'gray' },
          { name: 'Proposal', color: 'yellow' },
        ],
      },
    },
    errors: [400, 401, 403, 404, 413, 429],
  },
  {
    method: 'get',
    path: `${V1}/bases/{databaseId}/tables/{tableId}/fields/{fieldId}`,
    operationId: 'getField',
    tag: 'Fields',
    summary: 'Get a field',
    access: schemaRead,
    params: fieldParams,
    response: fieldSchema,
    responseExample: ex.fields[1],
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'patch',
    path: `${V1}/bases/{databaseId}/tables/{tableId}/fields/{fieldId}`,
    operationId: 'updateField',
    tag: 'Fields',
    summary: 'Rename a field or change its type or template',
    description: 'Only what the body gives changes; a new type takes its template (or its defaults).',
    access: schemaWrite,
    params: fieldParams,
    body: updateFieldRequestSchema,
    bodyExample: { template: { options: [{ name: 'Open' }, { name: 'Won' }, { name: 'Lost' }] } },
    response: fieldSchema,
    responseExample: {
      ...ex.fields[1],
      template: { options: [{ name: 'Open' }, { name: 'Won' }, { name: 'Lost' }] },
    },
    errors: [400, 401, 403, 404, 413, 429],
  },
  {
    method: 'delete',
    path: `${V1}/bases/{databaseId}/tables/{tableId}/fields/{fieldId}`,
    operationId: 'deleteField',
    tag: 'Fields',
    summary: 'Delete a field',
    description:
      "The primary field cannot be deleted. The field goes to the database's trash with its values (see " +
      'Restore tables and fields from the trash).',
    access: schemaWrite,
    params: fieldParams,
    ...deleted('Field deleted'),
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'post',
    path: `${V1}/bases/{databaseId}/tables/{tableId}/views`,
    operationId: 'createView',
    tag: 'Views',
    summary: 'Save a view',
    description:
      'A filter, sort, projection and search kept under a name, checked as a list body is. Fields are given ' +
      'by name or id and kept by id, so renames follow; a field a view uses cannot be deleted, nor retyped ' +
      `so that the view's filter or sort no longer holds. At most ${MAX_VIEWS_PER_TABLE} views per table.`,
    access: schemaWrite,
    params: tableParams,
    body: createViewRequestSchema,
    bodyExample: {
      name: 'Open deals',
      filter: {
        and: [
          { field: 'Status', equals: 'Open' },
          { field: 'Amount', greater_than: 1000 },
        ],
      },
      sort: [{ field: 'Amount', direction: 'desc' }],
      fields: ['Name', 'Status', 'Amount'],
    },
    status: 201,
    response: viewSchema,
    responseExample: ex.view,
    errors: [400, 401, 403, 404, 413, 429],
  },
  {
    method: 'get',
    path: `${V1}/bases/{databaseId}/tables/{tableId}/views`,
    operationId: 'listViews',
    tag: 'Views',
    summary: "List a table's views",
    description: 'Oldest first.',
    access: schemaRead,
    params: tableParams,
    response: viewListSchema,
    responseExample: { views: [ex.view] },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'get',
    path: `${V1}/bases/{databaseId}/tables/{tableId}/views/{viewId}`,
    operationId: 'getView',
    tag: 'Views',
    summary: 'Get a view',
    access: schemaRead,
    params: viewParams,
    response: viewSchema,
    responseExample: ex.view,
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'patch',
    path: `${V1}/bases/{databaseId}/tables/{tableId}/views/{viewId}`,
    operationId: 'updateView',
    tag: 'Views',
    summary: 'Rename a view or change its parts',
    description: 'Only what the body gives changes; `null` takes a filter, sort, projection or search away.',
    access: schemaWrite,
    params: viewParams,
    body: updateViewRequestSchema,
    bodyExample: { name: 'Large open deals', search: null },
    response: viewSchema,
    responseExample: { ...ex.view, name: 'Large open deals' },
    errors: [400, 401, 403, 404, 413, 429],
  },
  {
    method: 'delete',
    path: `${V1}/bases/{databaseId}/tables/{tableId}/views/{viewId}`,
    operationId: 'deleteView',
    tag: 'Views',
    summary: 'Delete a view',
    access: schemaWrite,
    params: viewParams,
    ...deleted('View deleted'),
    errors: [400, 401, 403, 404, 429],
  },
];
