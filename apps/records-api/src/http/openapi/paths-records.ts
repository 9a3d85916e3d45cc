import { successMessageSchema } from '@recordbase/contracts/errors';
import {
  aggregateFunctions,
  aggregateRecordsRequestSchema,
  aggregateRecordsResponseSchema,
  bulkDeleteRecordsRequestSchema,
  bulkDeleteRecordsResponseSchema,
  bulkRecordsRequestSchema,
  bulkRecordsResponseSchema,
  bulkUpdateRecordsRequestSchema,
  createRecordRequestSchema,
  DEFAULT_LIST_LIMIT,
  getRecordQuerySchema,
  listRecordsRequestSchema,
  listRecordsResponseSchema,
  MAX_AGGREGATE_GROUPS,
  MAX_EXPANDED_FIELDS,
  MAX_EXPANDED_LINKS,
  MAX_LIST_LIMIT,
  MAX_MATCH_ON_FIELDS,
  MAX_RECORDS_PER_REQUEST,
  MAX_SORT_ENTRIES,
  recordSchema,
  updateRecordRequestSchema,
  writeQuerySchema,
} from '@recordbase/contracts/records';
import * as ex from './examples';
import type { Operation } from './operation';
import { recordParams, tableParams } from './params';

const RECORDS = '/api/v1/bases/{databaseId}/tables/{tableId}/records';
const read = { scope: 'records:read' } as const;
const write = { scope: 'records:write' } as const;

const writeFlags =
  '`typecast: true` converts values given as text to the field types ("42" to a number, "yes" to a ' +
  'checkbox) and adds missing select options (needs `schema:write`). `suppressWebhooks: true` writes ' +
  'without telling webhooks.';

/** Records (apps/records-api/src/http/records.routes.ts). */
export const recordOperations: Operation[] = [
  {
    method: 'post',
    path: `${RECORDS}/list`,
    operationId: 'listRecords',
    tag: 'Records',
    summary: 'List records',
    description:
      `A page of records: \`limit\` 1 to ${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}), then \`offset\` or ` +
      "`cursor` (the previous page's `nextCursor`, same cost at any depth). `filter` is a condition or a group " +
      `(see Filter); \`sort\` up to ${MAX_SORT_ENTRIES} fields; \`search\` matches text in any text, email, url, ` +
      'phone or select field; `fields` projects; `expand` renders linked records (up to ' +
      `${MAX_EXPANDED_FIELDS} link fields, ${MAX_EXPANDED_LINKS} links each). An empty body lists the first page. ` +
      '`total` counts every match.',
    access: read,
    params: tableParams,
    body: listRecordsRequestSchema,
    bodyExample: {
      limit: 50,
      filter: {
        and: [
          { field: 'Status', equals: 'Open' },
          { field: 'Amount', greater_than: 1000 },
        ],
      },
      sort: [{ field: 'Amount', direction: 'desc' }],
    },
    response: listRecordsResponseSchema,
    responseExample: { records: [ex.record], total: 1, hasMore: false, nextCursor: null },
    errors: [400, 401, 403, 404, 413, 429],
  },
  {
    method: 'post',
    path: `${RECORDS}/aggregate`,
    operationId: 'aggregateRecords',
    tag: 'Records',
    summary: 'Aggregate records',
    description:
      `Groups the records matching \`filter\` and \`search\` by \`groupBy\` and computes \`aggregations\` ` +
      `(${aggregateFunctions.join(', ')}) per group; at most ${MAX_AGGREGATE_GROUPS} groups (\`truncated\` says ` +
      'when there were more).',
    access: read,
    params: tableParams,
    body: aggregateRecordsRequestSchema,
    bodyExample: {
      groupBy: ['Status'],
      aggregations: [{ fn: 'count' }, { field: 'Amount', fn: 'sum' }],
    },
    response: aggregateRecordsResponseSchema,
    responseExample: {
      groups: [
        { key: { Status: 'Open' }, values: [12, 48200] },
        { key: { Status: 'Won' }, values: [5, 91000] },
      ],
      truncated: false,
    },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'post',
    path: `${RECORDS}/bulk`,
    operationId: 'bulkCreateRecords',
    tag: 'Records',
    summary: 'Create or upsert records',
    description:
      `1 to ${MAX_RECORDS_PER_REQUEST} records, all or nothing. With \`matchOn\` (up to ${MAX_MATCH_ON_FIELDS} ` +
      'field ids) a record whose values of those fields match an existing one updates it instead: 200 then, ' +
      `201 when every record was created. ${writeFlags}`,
    access: write,
    params: tableParams,
    body: bulkRecordsRequestSchema,
    bodyExample: {
      records: [ex.recordValues, { Name: 'Globex expansion', Status: 'Won', Amount: 9800 }],
      typecast: false,
    },
    status: 201,
    response: bulkRecordsResponseSchema,
    responseExample: {
      success: true,
      records: [ex.record],
      createdRecordIds: [ex.RECORD_ID],
      updatedRecordIds: [],
    },
    errors: [400, 401, 403, 404, 413, 429],
  },
  {
    method: 'patch',
    path: `${RECORDS}/bulk`,
    operationId: 'bulkUpdateRecords',
    tag: 'Records',
    summary: 'Update records by id',
    description: `1 to ${MAX_RECORDS_PER_REQUEST} records, each changing only the fields it gives; all or nothing. ${writeFlags}`,
    access: write,
    params: tableParams,
    body: bulkUpdateRecordsRequestSchema,
    bodyExample: { records: [{ id: ex.RECORD_ID, fields: { Status: 'Won' } }] },
    response: bulkRecordsResponseSchema,
    responseExample: {
      success: true,
      records: [{ ...ex.record, fields: { ...ex.record.fields, Status: 'Won' } }],
      createdRecordIds: [],
      updatedRecordIds: [ex.RECORD_ID],
    },
    errors: [400, 401, 403, 404, 413, 429],
  },
  {
    method: 'post',
    path: `${RECORDS}/bulk-delete`,
    operationId: 'bulkDeleteRecords',
    tag: 'Records',
    summary: 'Delete records by id',
    description: `1 to ${MAX_RECORDS_PER_REQUEST} ids, all or nothing.`,
    access: write,
    params: tableParams,
    body: bulkDeleteRecordsRequestSchema,
    bodyExample: { ids: [ex.RECORD_ID] },
    response: bulkDeleteRecordsResponseSchema,
    responseExample: { success: true, deletedIds: [ex.RECORD_ID] },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'post',
    path: RECORDS,
    operationId: 'createRecord',
    tag: 'Records',
    summary: 'Create a record',
    description: `\`record\` holds field values keyed by field name or id (see RecordValues). ${writeFlags}`,
    access: write,
    params: tableParams,
    body: createRecordRequestSchema,
    bodyExample: { record: ex.recordValues },
    status: 201,
    response: recordSchema,
    responseExample: ex.record,
    errors: [400, 401, 403, 404, 413, 429],
  },
  {
    method: 'get',
    path: `${RECORDS}/{recordId}`,
    operationId: 'getRecord',
    tag: 'Records',
    summary: 'Get a record',
    description:
      'Repeat `fields` to project (`?fields=Name&fields=Status`), `expand` to render linked records beside their ids.',
    access: read,
    params: recordParams,
    query: getRecordQuerySchema,
    response: recordSchema,
    responseExample: ex.record,
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'patch',
    path: `${RECORDS}/{recordId}`,
    operationId: 'updateRecord',
    tag: 'Records',
    summary: 'Update a record',
    description: `Only the fields given change. ${writeFlags}`,
    access: write,
    params: recordParams,
    body: updateRecordRequestSchema,
    bodyExample: { record: { Status: 'Won' } },
    response: recordSchema,
    responseExample: { ...ex.record, fields: { ...ex.record.fields, Status: 'Won' } },
    errors: [400, 401, 403, 404, 413, 429],
  },
  {
    method: 'delete',
    path: `${RECORDS}/{recordId}`,
    operationId: 'deleteRecord',
    tag: 'Records',
    summary: 'Delete a record',
    description: '`?suppressWebhooks=true` deletes without telling webhooks.',
    access: write,
    params: recordParams,
    query: writeQuerySchema,
    response: successMessageSchema,
    responseExample: { success: true, message: 'Record deleted' },
    errors: [400, 401, 403, 404, 429],
  },
];
