import { type ErrorCode, errorBodySchema } from '@recordbase/contracts/errors';
import { createDocument, type oas31, type ZodOpenApiResponseObject } from 'zod-openapi';
import { documentationSchemas } from './doc-schemas';
import { eventWebhooks } from './events';
import { type ErrorStatus, errorResponses, type Operation, toPaths } from './operation';
import { airtableOperations } from './paths-airtable';
import { automationOperations } from './paths-automation';
import { changesOperations } from './paths-changes';
import { recordOperations } from './paths-records';
import { schemaOperations } from './paths-schema';
import { serviceOperations } from './paths-service';

/** Every operation of the reference, in the order the page shows them. */
export const operations: readonly Operation[] = [
  ...schemaOperations,
  ...recordOperations,
  ...automationOperations,
  ...changesOperations,
  ...serviceOperations,
  ...airtableOperations,
];

const errorExamples: Record<ErrorStatus, [ErrorCode, string, string]> = {
  400: ['BAD_REQUEST', 'The request is invalid', 'body.limit: must be between 1 and 2000'],
  401: [
    'UNAUTHORIZED',
    'No key, or a key that is not valid',
    'Missing Authorization header; send "Authorization: Bearer <API key>"',
  ],
  403: [
    'FORBIDDEN',
    'The key lacks the scope or the root key is needed',
    'This API key lacks the records:write scope',
  ],
  404: [
    'NOT_FOUND',
    'Nothing there, or nothing the key can reach',
    'Table "Dealz" not found (did you mean "Deals"?)',
  ],
  413: ['PAYLOAD_TOO_LARGE', 'The body is larger than the route allows', 'Request body is too large'],
  415: [
    'UNSUPPORTED_MEDIA_TYPE',
    "The file's type is not accepted",
    'Files of type application/x-msdownload are not accepted',
  ],
  410: [
    'CURSOR_EXPIRED',
    'The cursor is older than what the feed keeps',
    'query.cursor: events after this cursor were deleted by retention',
  ],
  416: ['RANGE_NOT_SATISFIABLE', 'The byte range is outside the file', 'Requested range not satisfiable'],
  429: [
    'RATE_LIMITED',
    'Too many requests for this key; retry after Retry-After seconds',
    'Rate limit exceeded',
  ],
  503: ['SERVICE_UNAVAILABLE', 'A dependency is unavailable', 'The database is unavailable'],
};

function errorResponseComponents(): Record<string, ZodOpenApiResponseObject> {
  return Object.fromEntries(
    Object.entries(errorResponses).map(([status, id]) => {
      const [code, description, message] = errorExamples[Number(status) as ErrorStatus];
      return [
        id,
        {
          description,
          content: { 'application/json': { schema: errorBodySchema, example: { error: { code, message } } } },
        },
      ];
    }),
  );
}

const introduction = [
  'recordbase: databases of typed tables, their records, webhooks, imports, uploads and read-only SQL.',
  '',
  'Authenticate with `Authorization: Bearer <key>` (the root key from ROOT_API_KEY, or a key created with ',
  'POST /api/v1/api-keys). Errors answer `{"error": {"code", "message"}}` and name what was wrong.',
  '',
  'Behind the gateway every path below is on one host; without it, `/api/v1` is records-api (port 3000) and ',
  'the upload and file routes are upload-service (port 3001).',
].join('\n');

/**
 * Drops schema components nothing refers to: the generator renders each named schema for requests
 * and for answers, and the answer form of a request-only schema would only be noise.
 */
function withoutUnusedSchemas(document: oas31.OpenAPIObject): oas31.OpenAPIObject {
  const schemas = document.components?.schemas;
  if (!schemas) return document;
  const { schemas: _all, ...otherComponents } = document.components ?? {};
  const used = new Set<string>();
  const pending = [JSON.stringify({ ...document, components: otherComponents })];
  for (let text = pending.pop(); text !== undefined; text = pending.pop()) {
    for (const [, id] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      if (id === undefined || used.has(id) || !schemas[id]) continue;
      used.add(id);
      pending.push(JSON.stringify(schemas[id]));
    }
  }
  const kept = Object.fromEntries(Object.entries(schemas).filter(([id]) => used.has(id)));
  return { ...document, components: { ...otherComponents, schemas: kept } };
}

let built: oas31.OpenAPIObject | undefined;

/** The OpenAPI 3.1 document of the whole API, generated once from the contracts. */
export function openApiDocument(): oas31.OpenAPIObject {
  built ??= generate();
  return built;
}

function generate(): oas31.OpenAPIObject {
  const document = createDocument({
    openapi: '3.1.0',
    info: { title: 'recordbase API', version: '1.0.0', description: introduction },
    servers: [{ url: '/', description: 'This host (the gateway, or the service itself)' }],
    security: [{ apiKey: [] }],
    tags: [
      { name: 'Databases' },
      { name: 'Tables' },
      {
        name: 'Fields',
        description: 'A field has a type, a template (its settings) and values of that type.',
      },
      {
        name: 'Views',
        description: 'A filter, sort, projection and search of a table kept under a name, fields kept by id.',
      },
      { name: 'Records' },
      { name: 'Webhooks' },
      { name: 'Changes', description: 'The change feed: every event of a database, from a cursor or live.' },
      { name: 'Imports' },
      { name: 'SQL' },
      { name: 'Uploads', description: 'Served by upload-service.' },
      { name: 'API keys' },
      { name: 'Reference' },
      { name: 'Operations' },
      {
        name: 'Airtable-compatible API',
        description: "Airtable's Web API for records at /v0: point Airtable.js's endpointUrl at this host.",
      },
    ],
    paths: toPaths(operations),
    webhooks: eventWebhooks(),
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'The root key or a key made with POST /api/v1/api-keys.',
        },
      },
      responses: errorResponseComponents(),
      schemas: documentationSchemas(),
    },
  });
  return withoutUnusedSchemas(document);
}
