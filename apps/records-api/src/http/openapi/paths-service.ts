import {
  attachmentUploadHeaders,
  attachmentUploadResultSchema,
  importFileUploadResultSchema,
  MAX_ATTACHMENT_BYTES,
  MAX_IMPORT_FILE_BYTES,
  supportedAttachmentMimeTypes,
  UPLOAD_FORM_FIELD,
  uploadRoutes,
} from '@recordbase/contracts/uploads';
import { z } from 'zod';
import * as ex from './examples';
import type { Operation } from './operation';

const MB = 1024 * 1024;

/** Upload-service is beside records-api behind the gateway, on its own port without it. */
const uploadServers = [
  { url: '/', description: 'This host, through the gateway' },
  {
    url: 'http://localhost:3001',
    description:
      'upload-service on its default port, without the gateway (its CORS_ORIGINS must list this page)',
  },
];
const filesWrite = { scope: 'files:write' } as const;

const multipart = (maxBytes: number, what: string) => ({
  mediaType: 'multipart/form-data',
  schema: {
    type: 'object',
    required: [UPLOAD_FORM_FIELD],
    properties: {
      [UPLOAD_FORM_FIELD]: {
        type: 'string',
        contentMediaType: 'application/octet-stream',
        description: `${what}, at most ${maxBytes / MB} MB.`,
      },
    },
  },
});

const attachmentHeaders = z.object({
  [attachmentUploadHeaders.databaseId]: z
    .string()
    .meta({ description: 'The database the file is for.', example: ex.DATABASE_ID }),
  [attachmentUploadHeaders.tableId]: z
    .string()
    .max(255)
    .meta({ description: 'Id or name of the table.', example: ex.TABLE_ID }),
  [attachmentUploadHeaders.fieldId]: z
    .string()
    .max(255)
    .meta({ description: 'Id or name of the attachments field.', example: 'Contract' }),
});

const fileParams = z.object({
  key: z.string().meta({
    description: 'The storage key from an upload answer; it may hold slashes.',
    example: `attachments/${ex.DATABASE_ID}/contract.pdf`,
  }),
});
const fileQuery = z.object({
  token: z.string().optional().meta({
    description: "A signed link's token (a record's attachment `signedUrl`): opens the file without a key.",
  }),
});

/**
 * Upload-service's routes (apps/upload-service/src/app.ts, served beside the API by the
 * gateway), this service's own, and the operational routes both services answer.
 */
export const serviceOperations: Operation[] = [
  {
    method: 'post',
    path: uploadRoutes.attachment,
    operationId: 'uploadAttachment',
    servers: uploadServers,
    tag: 'Uploads',
    summary: 'Upload a file for an attachments field',
    description:
      `multipart/form-data with the file in the form field \`${UPLOAD_FORM_FIELD}\` (FilePond's), at most ` +
      `${MAX_ATTACHMENT_BYTES / MB} MB. The headers name the attachments field. Types, judged by the bytes: ` +
      `${supportedAttachmentMimeTypes.join(', ')}. Write the answer's \`url\` into the field: ` +
      '`{"record": {"Contract": [{"url": "..."}]}}`. The operator may bound the bytes of each ' +
      "database's files: a file that would take them past it is refused with 413, naming the quota.",
    access: filesWrite,
    headers: attachmentHeaders,
    rawBody: multipart(MAX_ATTACHMENT_BYTES, 'The file'),
    status: 201,
    response: attachmentUploadResultSchema,
    responseExample: {
      url: `/files/attachments/${ex.DATABASE_ID}/contract.pdf`,
      fileName: 'contract.pdf',
      size: 48213,
      mimeType: 'application/pdf',
    },
    errors: [400, 401, 403, 404, 413, 415, 429],
  },
  {
    method: 'post',
    path: uploadRoutes.csv,
    operationId: 'uploadCsv',
    servers: uploadServers,
    tag: 'Uploads',
    summary: 'Upload a CSV file to import',
    description: "The answer's `s3Key` is what POST /api/v1/bases/{databaseId}/imports takes.",
    access: filesWrite,
    rawBody: multipart(MAX_IMPORT_FILE_BYTES, 'A CSV file (UTF-8)'),
    status: 201,
    response: importFileUploadResultSchema,
    responseExample: { url: '/files/imports/deals.csv', fileName: 'deals.csv', s3Key: 'imports/deals.csv' },
    errors: [400, 401, 403, 413, 415, 429],
  },
  {
    method: 'post',
    path: uploadRoutes.xlsx,
    operationId: 'uploadXlsx',
    servers: uploadServers,
    tag: 'Uploads',
    summary: 'Upload an Excel (.xlsx) file to import',
    description: "The answer's `s3Key` is what POST /api/v1/bases/{databaseId}/imports takes.",
    access: filesWrite,
    rawBody: multipart(MAX_IMPORT_FILE_BYTES, 'An .xlsx workbook'),
    status: 201,
    response: importFileUploadResultSchema,
    responseExample: {
      url: '/files/imports/deals.xlsx',
      fileName: 'deals.xlsx',
      s3Key: 'imports/deals.xlsx',
    },
    errors: [400, 401, 403, 413, 415, 429],
  },
  {
    method: 'get',
    path: `${uploadRoutes.files}/{key}`,
    operationId: 'downloadFile',
    servers: uploadServers,
    tag: 'Uploads',
    summary: 'Download a stored file',
    description:
      "With an API key that reaches the file's database, or with `?token=` from a signed link. Byte ranges " +
      '(`Range`) are answered with 206. A key that may not read the file (another database, no ' +
      '`records:read`, or an import file another key uploaded) gets the same 404 as a file that does not exist, ' +
      'and so does a link that opens nothing (malformed, forged, expired, for another file, of a revoked key). ' +
      'Past `AUTH_FAILURE_BURST` refused links or keys from one address: 429 with `Retry-After`.',
    access: { scope: 'records:read' },
    params: fileParams,
    query: fileQuery,
    rawResponse: { mediaType: 'application/octet-stream', description: 'The file (206 for a range).' },
    errors: [401, 404, 416, 429],
  },
  {
    method: 'get',
    path: '/api/v1/openapi.json',
    operationId: 'getOpenApiDocument',
    tag: 'Reference',
    summary: 'This document',
    description: 'The OpenAPI 3.1 document of the whole API, generated from the contracts.',
    access: 'public',
    rawResponse: {
      mediaType: 'application/json',
      description: 'An OpenAPI 3.1 document.',
      schema: { type: 'object', required: ['openapi', 'info'] },
    },
    errors: [],
  },
  {
    method: 'get',
    path: '/docs',
    operationId: 'getReferencePage',
    tag: 'Reference',
    summary: 'The API reference page',
    description: 'Renders this document, and can send requests with a key you enter.',
    access: 'public',
    rawResponse: { mediaType: 'text/html', description: 'An HTML page.' },
    errors: [],
  },
  {
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    tag: 'Operations',
    summary: 'Liveness',
    description: 'Each service answers it on its own port; the gateway answers its own.',
    access: 'public',
    response: z.object({ status: z.literal('ok') }),
    responseExample: { status: 'ok' },
    errors: [],
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'readiness',
    tag: 'Operations',
    summary: 'Readiness (database, Redis, storage)',
    description: "On each service's own port only; not exposed by the gateway.",
    access: 'public',
    response: z.object({
      status: z.enum(['ready', 'unavailable']),
      checks: z
        .record(z.string(), z.enum(['ok', 'unavailable']))
        .meta({ description: 'Per dependency, whether it answered; what failed is in the service log.' }),
    }),
    responseExample: { status: 'ready', checks: { postgres: 'ok', redis: 'ok' } },
    responseDescription: 'Every dependency answered (503 with the same shape when one did not).',
    errors: [],
  },
  {
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    tag: 'Operations',
    summary: 'Prometheus metrics',
    description: "On each service's own port only; not exposed by the gateway.",
    access: 'public',
    rawResponse: { mediaType: 'text/plain', description: 'Prometheus text format.' },
    errors: [],
  },
];
