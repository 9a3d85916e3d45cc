import {
  AIRTABLE_MAX_PAGE_SIZE,
  airtableListParamsSchema,
  airtableListResponseSchema,
  airtableRecordSchema,
} from '@recordbase/contracts/airtable';
import { z } from 'zod';
import * as ex from './examples';
import type { Operation } from './operation';
import { recordParams, tableParams } from './params';

/** The Airtable-compatible API (apps/records-api/src/http/airtable.routes.ts), at /v0 beside /api/v1. */

const AIRTABLE = '/v0/{databaseId}/{tableId}';
const read = { scope: 'records:read' } as const;

/** The statuses these routes answer in Airtable's error shape, and when. */
const airtableErrors = {
  401: 'AUTHENTICATION_REQUIRED: no key, or a key that is not valid',
  403: 'INVALID_PERMISSIONS: the key lacks records:read',
  404: 'NOT_FOUND: no such base, table or record, or none the key can reach',
  422: 'INVALID_REQUEST_UNKNOWN, INVALID_FILTER_BY_FORMULA, UNKNOWN_FIELD_NAME, VIEW_NAME_NOT_FOUND, INVALID_SORT_PARAMETER, INVALID_OFFSET_VALUE: the request cannot be taken, named in the message',
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
];
