import { airtableErrorBodySchema } from '@recordbase/contracts/airtable';
import type { ApiKeyScope } from '@recordbase/contracts/api-keys';
import type { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';

export type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

/** Who may call an operation: any key with a scope (or with any one of several), the root key, or anyone. */
export type Access = { scope: ApiKeyScope } | { anyScope: readonly ApiKeyScope[] } | 'root' | 'public';

/** The scopes any one of which opens the operation to a key; none for root-only and public ones. */
export function scopesOpening(access: Access): readonly ApiKeyScope[] {
  if (access === 'root' || access === 'public') return [];
  return 'anyScope' in access ? access.anyScope : [access.scope];
}

/** Error answers an operation may give, by status; each is a shared response of the document. */
export const errorResponses = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  410: 'Gone',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  416: 'RangeNotSatisfiable',
  429: 'RateLimited',
  503: 'ServiceUnavailable',
} as const;
export type ErrorStatus = keyof typeof errorResponses;

/**
 * One route of the API as the reference shows it. Request and response schemas are the
 * contracts' own; examples are checked against them by the document's test.
 */
export interface Operation {
  method: Method;
  /** OpenAPI form: `/api/v1/bases/{databaseId}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  access: Access;
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  body?: z.ZodType;
  bodyExample?: unknown;
  /** A body other than JSON (uploads): its media type and schema. */
  rawBody?: { mediaType: string; schema: Record<string, unknown> };
  status?: number;
  response?: z.ZodType;
  responseExample?: unknown;
  /** An answer other than JSON (a file, metrics, a page); `mediaTypes` when it comes in several. */
  rawResponse?: {
    mediaType: string;
    description: string;
    schema?: Record<string, unknown>;
    /** Other media types the answer may have instead, each with its schema. */
    alternatives?: Record<string, Record<string, unknown>>;
  };
  responseDescription?: string;
  errors: ErrorStatus[];
  /** Statuses answered in Airtable's error shape (the Airtable-compatible API), with what each means. */
  airtableErrors?: Readonly<Record<number, string>>;
  /** Where the operation is served when that is not the document's server. */
  servers?: { url: string; description: string }[];
}

function accessNote(access: Access): string {
  if (access === 'public') return 'No API key needed.';
  if (access === 'root') return 'Needs the root API key.';
  const scopes = scopesOpening(access).map((scope) => `\`${scope}\``);
  return `Needs an API key with the ${scopes.join(' or the ')} scope (or the root key).`;
}

function toOperation(op: Operation): ZodOpenApiOperationObject {
  const status = String(op.status ?? 200);
  const description = [op.description, accessNote(op.access)].filter(Boolean).join('\n\n');
  const requestParams = {
    ...(op.params ? { path: op.params } : {}),
    ...(op.query ? { query: op.query } : {}),
    ...(op.headers ? { header: op.headers } : {}),
  };
  const success = op.rawResponse
    ? {
        description: op.rawResponse.description,
        content: {
          [op.rawResponse.mediaType]: { schema: op.rawResponse.schema ?? { type: 'string' } },
          ...Object.fromEntries(
            Object.entries(op.rawResponse.alternatives ?? {}).map(([type, schema]) => [type, { schema }]),
          ),
        },
      }
    : {
        description: op.responseDescription ?? 'Success',
        ...(op.response
          ? {
              content: {
                'application/json': {
                  schema: op.response,
                  ...(op.responseExample !== undefined ? { example: op.responseExample } : {}),
                },
              },
            }
          : {}),
      };
  const errors = {
    ...Object.fromEntries(
      op.errors.map((code) => [String(code), { $ref: `#/components/responses/${errorResponses[code]}` }]),
    ),
    ...Object.fromEntries(
      Object.entries(op.airtableErrors ?? {}).map(([status, description]) => [
        status,
        { description, content: { 'application/json': { schema: airtableErrorBodySchema } } },
      ]),
    ),
  };
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    description,
    ...(op.access === 'public' ? { security: [] } : {}),
    ...(op.servers ? { servers: op.servers } : {}),
    ...(Object.keys(requestParams).length > 0 ? { requestParams } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: op.body,
                ...(op.bodyExample !== undefined ? { example: op.bodyExample } : {}),
              },
            },
          },
        }
      : {}),
    ...(op.rawBody
      ? {
          requestBody: {
            required: true,
            content: { [op.rawBody.mediaType]: { schema: op.rawBody.schema } },
          },
        }
      : {}),
    responses: { [status]: success, ...errors },
  };
}

/** The paths object of a list of operations, several methods of one path together. */
export function toPaths(operations: readonly Operation[]): ZodOpenApiPathsObject {
  const paths: ZodOpenApiPathsObject = {};
  for (const op of operations) {
    paths[op.path] = { ...paths[op.path], [op.method]: toOperation(op) };
  }
  return paths;
}
