import { successMessageSchema } from '@recordbase/contracts/errors';
import {
  importListResponseSchema,
  importStatusSchema,
  startImportRequestSchema,
  startImportResponseSchema,
} from '@recordbase/contracts/imports';
import {
  DEFAULT_SQL_ROW_LIMIT,
  MAX_SQL_ROW_LIMIT,
  sqlQueryRequestSchema,
  sqlQueryResponseSchema,
  sqlSchemaResponseSchema,
} from '@recordbase/contracts/sql';
import {
  createdWebhookSchema,
  createWebhookRequestSchema,
  listWebhookDeliveriesQuerySchema,
  MAX_WEBHOOKS_PER_DATABASE,
  retryWebhookDeliveryResponseSchema,
  updateWebhookRequestSchema,
  webhookDeliveryListSchema,
  webhookEventTypes,
  webhookListSchema,
  webhookSchema,
} from '@recordbase/contracts/webhooks';
import * as ex from './examples';
import type { Operation } from './operation';
import { baseParams, deliveryParams, importParams, webhookParams } from './params';

const BASE = '/api/v1/bases/{databaseId}';
const manage = { scope: 'webhooks:manage' } as const;
const recordsWrite = { scope: 'records:write' } as const;
const sqlRead = { scope: 'sql:read' } as const;

/** Webhooks, imports and read-only SQL (webhooks, imports and sql .routes.ts). */
export const automationOperations: Operation[] = [
  {
    method: 'post',
    path: `${BASE}/webhooks`,
    operationId: 'createWebhook',
    tag: 'Webhooks',
    summary: 'Subscribe a URL to events',
    description:
      `Events: ${webhookEventTypes.join(', ')} (payloads: see the webhooks section). \`tableId\` limits the ` +
      'webhook to one table, `fieldIds` (with `tableId`) hears only updates that changed those fields, and `viewId` ' +
      '(with `tableId`) only the records inside that saved view before or after each write, each record with ' +
      '`view: {before, after}`. The answer ' +
      'carries the signing secret (`whsec_...`), once: deliveries are signed as Standard Webhooks ' +
      `(webhook-id, webhook-timestamp, webhook-signature). At most ${MAX_WEBHOOKS_PER_DATABASE} webhooks per database.`,
    access: manage,
    params: baseParams,
    body: createWebhookRequestSchema,
    bodyExample: {
      url: 'https://hooks.example.com/recordbase',
      events: ['record.created', 'record.updated'],
      tableId: ex.TABLE_ID,
    },
    status: 201,
    response: createdWebhookSchema,
    responseExample: { ...ex.webhook, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'get',
    path: `${BASE}/webhooks`,
    operationId: 'listWebhooks',
    tag: 'Webhooks',
    summary: 'List webhooks',
    access: manage,
    params: baseParams,
    response: webhookListSchema,
    responseExample: { webhooks: [ex.webhook] },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'get',
    path: `${BASE}/webhooks/{webhookId}`,
    operationId: 'getWebhook',
    tag: 'Webhooks',
    summary: 'Get a webhook',
    access: manage,
    params: webhookParams,
    response: webhookSchema,
    responseExample: ex.webhook,
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'patch',
    path: `${BASE}/webhooks/{webhookId}`,
    operationId: 'updateWebhook',
    tag: 'Webhooks',
    summary: 'Change a webhook',
    description:
      '`active: true` reactivates a webhook deactivated after repeated failures. A new `url` or `tableId` ' +
      'also needs the read scope of every event type the webhook still has deliveries open for ' +
      '(`records:read` for record events, `schema:read` for table and field events), else 403.',
    access: manage,
    params: webhookParams,
    body: updateWebhookRequestSchema,
    bodyExample: { events: ['record.created', 'record.updated', 'record.deleted'], active: true },
    response: webhookSchema,
    responseExample: { ...ex.webhook, events: ['record.created', 'record.updated', 'record.deleted'] },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'delete',
    path: `${BASE}/webhooks/{webhookId}`,
    operationId: 'deleteWebhook',
    tag: 'Webhooks',
    summary: 'Delete a webhook',
    access: manage,
    params: webhookParams,
    response: successMessageSchema,
    responseExample: { success: true, message: 'Webhook deleted' },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'get',
    path: `${BASE}/webhooks/{webhookId}/deliveries`,
    operationId: 'listWebhookDeliveries',
    tag: 'Webhooks',
    summary: 'Delivery log of a webhook',
    description: 'Its most recent delivery attempts, newest first.',
    access: manage,
    params: webhookParams,
    query: listWebhookDeliveriesQuerySchema,
    response: webhookDeliveryListSchema,
    responseExample: { deliveries: [ex.deliveryAttempt] },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'post',
    path: `${BASE}/webhooks/{webhookId}/deliveries/{deliveryId}/retry`,
    operationId: 'retryWebhookDelivery',
    tag: 'Webhooks',
    summary: 'Retry a delivery',
    description:
      'The delivery is due again at once. 400 if the webhook is inactive or no longer subscribes to the ' +
      "delivery's event (its type, table or watched fields).",
    access: manage,
    params: deliveryParams,
    status: 202,
    response: retryWebhookDeliveryResponseSchema,
    responseExample: { id: '1093', status: 'pending' },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'post',
    path: `${BASE}/imports`,
    operationId: 'startImport',
    tag: 'Imports',
    summary: 'Import a CSV or Excel file',
    description:
      'Upload the file with POST /csvupload or /xlsxupload first and pass its `s3Key`. With `tableId` the rows ' +
      'are added to that table (columns matched to fields by header name); else a new table is created. ' +
      'The import runs in the background: poll GET .../imports/{importId}.',
    access: recordsWrite,
    params: baseParams,
    body: startImportRequestSchema,
    bodyExample: { s3Key: `imports/${ex.DATABASE_ID}/deals.csv`, tableName: 'Deals', firstRowIsHeader: true },
    status: 202,
    response: startImportResponseSchema,
    responseExample: { id: ex.IMPORT_ID, status: 'queued' },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'get',
    path: `${BASE}/imports`,
    operationId: 'listImports',
    tag: 'Imports',
    summary: 'List imports',
    description:
      'The most recent imports of the database, newest first. A key without `records:read` lists only the ' +
      'imports it started.',
    access: recordsWrite,
    params: baseParams,
    response: importListResponseSchema,
    responseExample: { imports: [ex.importStatus] },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'get',
    path: `${BASE}/imports/{importId}`,
    operationId: 'getImport',
    tag: 'Imports',
    summary: 'Progress of an import',
    description:
      'Its status, progress and `errors`, which quote the cells that did not fit. A key without `records:read` ' +
      "sees only the imports it started: another key's import is 404, as one that does not exist.",
    access: recordsWrite,
    params: importParams,
    response: importStatusSchema,
    responseExample: ex.importStatus,
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'delete',
    path: `${BASE}/imports/{importId}`,
    operationId: 'cancelImport',
    tag: 'Imports',
    summary: 'Cancel an import',
    description:
      'A queued or running import is marked failed ("Cancelled") and writes nothing; a finished one answers 400. ' +
      'A key without `records:read` cancels only the imports it started (any other is 404).',
    access: recordsWrite,
    params: importParams,
    response: importStatusSchema,
    responseExample: {
      ...ex.importStatus,
      status: 'failed',
      errors: [{ row: null, column: null, message: 'Cancelled' }],
    },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'get',
    path: `${BASE}/sql/schema`,
    operationId: 'describeSqlSchema',
    tag: 'SQL',
    summary: 'Tables and columns visible to SQL',
    access: sqlRead,
    params: baseParams,
    response: sqlSchemaResponseSchema,
    responseExample: {
      tables: [
        {
          name: 'Deals',
          tableId: ex.TABLE_ID,
          columns: [
            { name: 'id', fieldId: null, fieldType: null, sqlType: 'uuid' },
            { name: 'Amount', fieldId: ex.FIELD_IDS.amount, fieldType: 'currency', sqlType: 'numeric' },
          ],
        },
      ],
    },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'post',
    path: `${BASE}/sql`,
    operationId: 'runSqlQuery',
    tag: 'SQL',
    summary: 'Run a read-only SQL query',
    description:
      `One SELECT over the database's tables, named as GET .../sql/schema lists them; \`params\` fill $1, $2...; ` +
      `\`limit\` rows 1 to ${MAX_SQL_ROW_LIMIT} (default ${DEFAULT_SQL_ROW_LIMIT}). Writes are refused.`,
    access: sqlRead,
    params: baseParams,
    body: sqlQueryRequestSchema,
    bodyExample: {
      query: 'SELECT "Status", sum("Amount") FROM "Deals" WHERE "Amount" > $1 GROUP BY 1',
      params: [100],
    },
    response: sqlQueryResponseSchema,
    responseExample: {
      columns: [
        { name: 'Status', type: 'text' },
        { name: 'sum', type: 'numeric' },
      ],
      rows: [
        ['Open', 48200],
        ['Won', 91000],
      ],
      rowCount: 2,
      truncated: false,
    },
    errors: [400, 401, 403, 404, 413, 429],
  },
];
