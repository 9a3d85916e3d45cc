import {
  AIRTABLE_MAX_PAGE_SIZE,
  AIRTABLE_MAX_RECORDS_PER_WRITE,
  airtableBasesResponseSchema,
  airtableCreateBodySchema,
  airtableDeletedSchema,
  airtableDeleteResponseSchema,
  airtableListParamsSchema,
  airtableListResponseSchema,
  airtableRecordSchema,
  airtableTablesResponseSchema,
  airtableUpdateBodySchema,
  airtableUpdateOneBodySchema,
  airtableWriteResponseSchema,
} from '@recordbase/contracts/airtable';
import { z } from 'zod';
import * as ex from './examples';
import type { Operation } from './operation';
import { baseParams, recordParams, tableParams } from './params';

/** The Airtable-compatible API (apps/records-api/src/http/airtable.routes.ts), at /v0 beside /api/v1. */

const AIRTABLE = '/v0/{databaseId}/{tableId}';
const read = { scope: 'records:read' } as const;
const write = { scope: 'records:write' } as const;
const schemaRead = { scope: 'schema:read' } as const;

/** The statuses these routes answer in Airtable's error shape, and when. */
const airtableErrors = {
  401: 'AUTHENTICATION_REQUIRED: no key, or a key that is not valid',
  403: 'INVALID_PERMISSIONS: the key lacks records:read',
  404: 'NOT_FOUND: no such base, table or record, or none the key can reach',
  413: 'REQUEST_TOO_LARGE: the body is larger than the route takes',
  422: 'INVALID_REQUEST_UNKNOWN, INVALID_FILTER_BY_FORMULA, UNKNOWN_FIELD_NAME, INVALID_VALUE_FOR_COLUMN, VIEW_NAME_NOT_FOUND, INVALID_SORT_PARAMETER, INVALID_OFFSET_VALUE: the request cannot be taken, named in the message',
  429: 'TOO_MANY_REQUESTS: the key is over its rate limit (Retry-After)',
} as const;

const airtableRecordExample = {
  id: ex.RECORD_ID,
  createdTime: ex.record.createdAt,
  fields: { Name: 'Acme renewal', Status: 'Open', Amount: 1250.5 },
};

/** The listing's query as Airtable.js writes it: the parameters of POST …/listRecords, arrays and objects spelt out. */
const listQueryDoc = z.object({
  pageSize: airtableListParamsSchema.shape.pageSize.meta({
    description: `Records per page, 1 to ${AIRTABLE_MAX_PAGE_SIZE} (default ${AIRTABLE_MAX_PAGE_SIZE}).`,
  }),
  maxRecords: airtableListParamsSchema.shape.maxRecords.meta({
    description: 'The most records to list over all pages.',
  }),
  offset: airtableListParamsSchema.shape.offset.meta({
    description: "The previous page's offset, unchanged.",
  }),
  'fields[]': z
    .array(z.string())
    .optional()
    .meta({ description: 'A field to return (name or id), one parameter each; all when absent.' }),
  filterByFormula: airtableListParamsSchema.shape.filterByFormula.meta({
    description:
      'A formula of the computed fields\' language: a record is listed when it is true (not 0, "", blank or false).',
    example: "AND({Status} = 'Open', {Amount} > 1000)",
  }),
  'sort[0][field]': z
    .string()
    .optional()
    .meta({ description: 'The first field to sort by; sort[1][field] the next.' }),
  'sort[0][direction]': z.enum(['asc', 'desc']).optional().meta({ description: 'asc (default) or desc.' }),
  view: airtableListParamsSchema.shape.view.meta({
    description: 'A saved view (id or name): its filter and search apply, its sort and fields unless given.',
  }),
  cellFormat: airtableListParamsSchema.shape.cellFormat.meta({ description: 'json, the only format given.' }),
  returnFieldsByFieldId: z
    .enum(['true', 'false'])
    .optional()
    .meta({ description: "Key each record's fields by field id instead of name." }),
});

const errorsIntro =
  'Errors are Airtable\'s: `{"error": {"type", "message"}}` with its statuses, so Airtable.js makes an AirtableError of them.';

export const airtableOperations: Operation[] = [
  {
    method: 'get',
    path: AIRTABLE,
    operationId: 'airtableListRecords',
    tag: 'Airtable-compatible API',
    summary: 'List records (Airtable)',
    description: `Airtable's list records: a page of \`{id, createdTime, fields}\`, empty fields left out, and \`offset\` while more follow. ${errorsIntro}`,
    access: read,
    params: tableParams,
    query: listQueryDoc,
    response: airtableListResponseSchema,
    responseExample: { records: [airtableRecordExample] },
    errors: [],
    airtableErrors,
  },
  {
    method: 'post',
    path: `${AIRTABLE}/listRecords`,
    operationId: 'airtableListRecordsPost',
    tag: 'Airtable-compatible API',
    summary: 'List records with a body (Airtable)',
    description: `The same listing with its parameters in a JSON body, as Airtable.js sends a long one. ${errorsIntro}`,
    access: read,
    params: tableParams,
    body: airtableListParamsSchema,
    bodyExample: {
      pageSize: 50,
      filterByFormula: "{Status} = 'Open'",
      sort: [{ field: 'Amount', direction: 'desc' }],
    },
    response: airtableListResponseSchema,
    responseExample: { records: [airtableRecordExample] },
    errors: [],
    airtableErrors,
  },
  {
    method: 'get',
    path: `${AIRTABLE}/{recordId}`,
    operationId: 'airtableGetRecord',
    tag: 'Airtable-compatible API',
    summary: 'Get a record (Airtable)',
    description: `One record as Airtable answers it. ${errorsIntro}`,
    access: read,
    params: recordParams,
    query: z.object({ returnFieldsByFieldId: listQueryDoc.shape.returnFieldsByFieldId }),
    response: airtableRecordSchema,
    responseExample: airtableRecordExample,
    errors: [],
    airtableErrors,
  },
  {
    method: 'post',
    path: AIRTABLE,
    operationId: 'airtableCreateRecords',
    tag: 'Airtable-compatible API',
    summary: 'Create records (Airtable)',
    description: `Creates up to ${AIRTABLE_MAX_RECORDS_PER_WRITE} records, \`{records: [{fields}]}\` (answered as \`{records}\`) or one as \`{fields}\` (answered as the record); all or none. \`typecast\` converts text values. ${errorsIntro}`,
    access: write,
    params: tableParams,
    body: airtableCreateBodySchema,
    bodyExample: { records: [{ fields: { Name: 'Acme renewal', Amount: 1250.5 } }], typecast: false },
    response: airtableWriteResponseSchema,
    responseExample: { records: [airtableRecordExample] },
    errors: [],
    airtableErrors,
  },
  ...(['patch', 'put'] as const).flatMap((method): Operation[] => {
    const verb = method === 'patch' ? 'Update' : 'Replace';
    const how =
      method === 'patch'
        ? 'the fields given change, the others stay'
        : 'the fields given are set, every other writable field is cleared';
    return [
      {
        method,
        path: AIRTABLE,
        operationId: `airtable${verb}Records`,
        tag: 'Airtable-compatible API',
        summary: `${verb} records (Airtable)`,
        description: `Up to ${AIRTABLE_MAX_RECORDS_PER_WRITE} records by id (${how}), all or none; with \`performUpsert: {fieldsToMergeOn}\` records without ids are matched on those fields, updated when one matches and created otherwise (answered with \`createdRecords\` and \`updatedRecords\`). ${errorsIntro}`,
        access: write,
        params: tableParams,
        body: airtableUpdateBodySchema,
        bodyExample: { records: [{ id: ex.RECORD_ID, fields: { Amount: 1300 } }] },
        response: airtableWriteResponseSchema,
        responseExample: { records: [airtableRecordExample] },
        errors: [],
        airtableErrors,
      },
      {
        method,
        path: `${AIRTABLE}/{recordId}`,
        operationId: `airtable${verb}Record`,
        tag: 'Airtable-compatible API',
        summary: `${verb} a record (Airtable)`,
        description: `One record: ${how}. ${errorsIntro}`,
        access: write,
        params: recordParams,
        body: airtableUpdateOneBodySchema,
        bodyExample: { fields: { Amount: 1300 } },
        response: airtableRecordSchema,
        responseExample: airtableRecordExample,
        errors: [],
        airtableErrors,
      },
    ];
  }),
  {
    method: 'delete',
    path: AIRTABLE,
    operationId: 'airtableDeleteRecords',
    tag: 'Airtable-compatible API',
    summary: 'Delete records (Airtable)',
    description: `Deletes up to ${AIRTABLE_MAX_RECORDS_PER_WRITE} records given as \`records[]=<id>\`, all or none (to the trash, as /api/v1's deletes). ${errorsIntro}`,
    access: write,
    params: tableParams,
    query: z.object({
      'records[]': z.array(z.string()).meta({ description: 'A record id, one parameter each.' }),
    }),
    response: airtableDeleteResponseSchema,
    responseExample: { records: [{ id: ex.RECORD_ID, deleted: true }] },
    errors: [],
    airtableErrors,
  },
  {
    method: 'delete',
    path: `${AIRTABLE}/{recordId}`,
    operationId: 'airtableDeleteRecord',
    tag: 'Airtable-compatible API',
    summary: 'Delete a record (Airtable)',
    description: `Deletes one record (to the trash). ${errorsIntro}`,
    access: write,
    params: recordParams,
    response: airtableDeletedSchema,
    responseExample: { id: ex.RECORD_ID, deleted: true },
    errors: [],
    airtableErrors,
  },
  {
    method: 'get',
    path: '/v0/meta/bases',
    operationId: 'airtableListBases',
    tag: 'Airtable-compatible API',
    summary: 'List bases (Airtable)',
    description: `Every base the key reaches, oldest first, with \`permissionLevel\`: create (schema:write or root), edit (records:write) or read. ${errorsIntro}`,
    access: schemaRead,
    response: airtableBasesResponseSchema,
    responseExample: { bases: [{ id: ex.DATABASE_ID, name: 'Sales', permissionLevel: 'create' }] },
    errors: [],
    airtableErrors,
  },
  {
    method: 'get',
    path: '/v0/meta/bases/{databaseId}/tables',
    operationId: 'airtableListTables',
    tag: 'Airtable-compatible API',
    summary: "List a base's tables (Airtable)",
    description: `The base's tables, oldest first, each with its fields (Airtable's type names: singleLineText, multipleRecordLinks…, and the options both share) and its views. ${errorsIntro}`,
    access: schemaRead,
    params: baseParams,
    response: airtableTablesResponseSchema,
    responseExample: {
      tables: [
        {
          id: ex.TABLE_ID,
          name: 'Deals',
          primaryFieldId: ex.FIELD_IDS.name,
          fields: [
            { id: ex.FIELD_IDS.name, name: 'Name', type: 'singleLineText' },
            {
              id: ex.FIELD_IDS.status,
              name: 'Status',
              type: 'singleSelect',
              options: { choices: [{ name: 'Open' }] },
            },
          ],
          views: [{ id: 'viwOp3nD34ls7Qx2', name: 'Open pipeline', type: 'grid' }],
        },
      ],
    },
    errors: [],
    airtableErrors,
  },
];
