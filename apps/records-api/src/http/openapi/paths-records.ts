import { successMessageSchema } from '@recordbase/contracts/errors';
import {
  DEFAULT_HISTORY_LIMIT,
  historyPageSchema,
  historyQuerySchema,
  MAX_HISTORY_LIMIT,
  MAX_RESTORED_RECORDS,
  restoreTrashRequestSchema,
  trashedRecordSchema,
  trashPageSchema,
  trashQuerySchema,
} from '@recordbase/contracts/history';
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
  exportFormats,
  exportMediaTypes,
  exportRecordsRequestSchema,
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
import { z } from 'zod';
import * as ex from './examples';
import type { Operation } from './operation';
import { recordParams, revisionParams, tableParams } from './params';

const TABLE = '/api/v1/bases/{databaseId}/tables/{tableId}';
const RECORDS = `${TABLE}/records`;
const read = { scope: 'records:read' } as const;
const write = { scope: 'records:write' } as const;

/** A quiet write: its record events are kept for history and the trash, never delivered. */
const quietWrite =
  'without telling webhooks: its record events are still appended, for record history and the ' +
  'trash, but stored as already dispatched, so no webhook hears of them.';

const suppressFlag = `\`suppressWebhooks: true\` writes ${quietWrite}`;

const writeFlags =
  '`typecast: true` converts values given as text to the field types ("42" to a number, "yes" to a ' +
  `checkbox) and adds missing select options (needs \`schema:write\`). ${suppressFlag}`;

const historyPaging =
  `Newest first, \`limit\` 1 to ${MAX_HISTORY_LIMIT} revisions a page (default ${DEFAULT_HISTORY_LIMIT}); ` +
  "`cursor` is the previous page's `nextCursor` (absent on the last page), and a cursor of another " +
  'history is 400. `changes` holds, by field id, each written field the revision changed with its value ' +
  'before and after (null when empty); computed fields (formulas, lookups, rollups and the like) are not ' +
  'listed, their values moving with what they read. `by` is the key that wrote (null for an import). ' +
  'Revisions are kept 30 days by default (the `HISTORY_RETENTION` setting).';

/** The trash's page and a restore's answer: records as the other record routes answer them. */
const trashPageDoc = trashPageSchema.extend({
  records: z.array(trashedRecordSchema.extend({ record: recordSchema })),
});
const restoredRecordsDoc = z.object({ records: z.array(recordSchema) });
// The trash pages as a history does (the same schema), and says so in its own words.
const trashQueryDoc = trashQuerySchema.extend({
  limit: trashQuerySchema.shape.limit.meta({
    description: `Deleted records per page, most recently deleted first, 1 to ${MAX_HISTORY_LIMIT}.`,
  }),
  cursor: trashQuerySchema.shape.cursor.meta({
    description: "The nextCursor of the previous page of the same table's trash.",
  }),
});

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
    path: `${RECORDS}/export`,
    operationId: 'exportRecords',
    tag: 'Records',
    summary: 'Export records',
    description:
      `Every record a list of the same \`filter\`, \`sort\`, \`fields\`, \`search\` and \`view\` matches (no limit), in the ` +
      `list's order, streamed as one file in \`format\` (${exportFormats.join(', ')}) with ` +
      '`Content-Disposition: attachment` named after the table. CSV: UTF-8, RFC 4180, a header row of field names; ' +
      "arrays joined with `, `, links as the linked records' primary values, attachments as their urls, authors as " +
      "their names; a text cell starting with `=`, `+`, `-`, `@`, tab or CR gets a leading `'`. XLSX: one sheet named " +
      'after the table, a header row, numbers, booleans and dates as typed cells. NDJSON: one record a line, as the list ' +
      'answers it. A refused body is a 400 before the file starts; a failure once it has started cuts the transfer ' +
      'short (no final chunk), so a file that arrived whole is complete.',
    access: read,
    params: tableParams,
    body: exportRecordsRequestSchema,
    bodyExample: {
      format: 'csv',
      filter: { field: 'Status', equals: 'Open' },
      sort: [{ field: 'Amount', direction: 'desc' }],
      fields: ['Name', 'Amount'],
    },
    rawResponse: {
      mediaType: exportMediaTypes.csv,
      description: 'The file, streamed (chunked, no Content-Length).',
      schema: { type: 'string', example: 'Name,Amount\r\nAcme renewal,4800.5\r\n' },
      alternatives: {
        [exportMediaTypes.xlsx]: { type: 'string', format: 'binary' },
        [exportMediaTypes.ndjson]: {
          type: 'string',
          description: 'One record a line, as the list answers it.',
        },
      },
    },
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
    description: `1 to ${MAX_RECORDS_PER_REQUEST} ids, all or nothing. The records go to their table's trash. ${suppressFlag}`,
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
    description:
      "The record goes to its table's trash (see Restore records from the trash). " +
      `\`?suppressWebhooks=true\` deletes ${quietWrite}`,
    access: write,
    params: recordParams,
    query: writeQuerySchema,
    response: successMessageSchema,
    responseExample: { success: true, message: 'Record deleted' },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'get',
    path: `${RECORDS}/{recordId}/history`,
    operationId: 'getRecordHistory',
    tag: 'Records',
    summary: "Get a record's history",
    description:
      `A revision for each write of the record. ${historyPaging} ` +
      "A deleted record's history is still answered; 404 for a record that never existed.",
    access: read,
    params: recordParams,
    query: historyQuerySchema,
    response: historyPageSchema,
    responseExample: { revisions: ex.revisions },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'post',
    path: `${RECORDS}/{recordId}/history/{revisionId}/restore`,
    operationId: 'restoreRecordRevision',
    tag: 'Records',
    summary: 'Restore a record to a revision',
    description:
      "Writes the record's fields back to their values after the revision (the fields it had then; a " +
      'field added since keeps its value; links to records deleted since are left out; select options ' +
      'deleted since come back) and answers the record. The write is a revision of its own, `restored`, ' +
      'with source `restore`, and its `record.updated` event says so. A revision that deleted the record ' +
      "has no values to restore (400): a deleted record comes back from its table's trash, and is 404 " +
      'here. 404 for a revision of another record.',
    access: write,
    params: revisionParams,
    response: recordSchema,
    responseExample: ex.record,
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'get',
    path: `${TABLE}/history`,
    operationId: 'getTableHistory',
    tag: 'Records',
    summary: "Get a table's history",
    description: `The revisions of all the table's records, deleted ones included, in one history. ${historyPaging}`,
    access: read,
    params: tableParams,
    query: historyQuerySchema,
    response: historyPageSchema,
    // `?limit=1`: the cursor reads the page after (base64url of the table, `*` and the last revision).
    responseExample: { revisions: [ex.revisions[0]], nextCursor: 'dGJscTJXOHJUNXlVN2lPOXBBLyovMTA0Mi0x' },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'get',
    path: `${TABLE}/trash`,
    operationId: 'listTrash',
    tag: 'Records',
    summary: "List a table's deleted records",
    description:
      "The table's trash: its deleted records, most recently deleted first, each as the API rendered it " +
      'when it was deleted, with when (`deletedAt`) and by which key (`deletedBy`, null when none is ' +
      `recorded). \`limit\` 1 to ${MAX_HISTORY_LIMIT} records a page (default ${DEFAULT_HISTORY_LIMIT}); \`cursor\` is ` +
      "the previous page's `nextCursor` (absent on the last page), and a cursor of another listing is 400. " +
      'A deleted record stays in the trash until it is restored, or for 7 days by default (the ' +
      '`TRASH_RETENTION` setting).',
    access: read,
    params: tableParams,
    query: trashQueryDoc,
    response: trashPageDoc,
    responseExample: { records: [ex.trashedRecord] },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'post',
    path: `${TABLE}/trash/restore`,
    operationId: 'restoreTrash',
    tag: 'Records',
    summary: 'Restore records from the trash',
    description:
      `Brings back 1 to ${MAX_RESTORED_RECORDS} deleted records exactly as they were: the same ids, ` +
      '`createdAt` and values, and their links to and from records that still exist (a link to a record ' +
      'deleted since is dropped; a field added since takes its default). Answers the records, in the order ' +
      "asked. All or nothing: an id that is not in the table's trash is 404 naming it and nothing is " +
      'restored; values that a field retyped since cannot hold are 400. Each restore appends a ' +
      '`record.created` event with `metadata.source: "restore"`, which webhooks hear, and record history ' +
      'shows it as a `restored` revision.',
    access: write,
    params: tableParams,
    body: restoreTrashRequestSchema,
    bodyExample: { ids: [ex.RECORD_ID] },
    response: restoredRecordsDoc,
    responseExample: { records: [ex.restoredRecord] },
    errors: [400, 401, 403, 404, 429],
  },
];
