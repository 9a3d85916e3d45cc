import type { Express } from 'express';
import { operations } from '../src/http/openapi/document';
import * as ex from '../src/http/openapi/examples';
import { type Operation, scopesOpening } from '../src/http/openapi/operation';

/**
 * The route table of the authorization matrices (records-api's and upload-service's): every route
 * an Express app serves, joined with its operation of the OpenAPI document for the access it
 * needs, and what the contract answers each kind of key. Taken from the app itself, so a route
 * added later is in the matrix without anyone listing it.
 */

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
  rawPath?: string | string[];
}

function joinPaths(prefix: string, route: string): string {
  const joined = `${prefix.replace(/\/$/, '')}${route}`;
  return joined === '' ? '/' : joined;
}

/** Every `METHOD /path` (OpenAPI form: `{name}`) an app routes, through its mounted routers. */
export function servedRoutes(app: Express): string[] {
  const found: string[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const routePath of paths) {
          for (const [method, handled] of Object.entries(layer.route.methods)) {
            const openApiPath = joinPaths(prefix, routePath).replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');
            if (handled) found.push(`${method.toUpperCase()} ${openApiPath}`);
          }
        }
      } else if (layer.handle.stack) {
        const mounts = Array.isArray(layer.rawPath) ? layer.rawPath : [layer.rawPath ?? '/'];
        for (const mount of mounts) walk(layer.handle.stack, joinPaths(prefix, mount === '/' ? '' : mount));
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return [...new Set(found)];
}

/**
 * The operations of the routes an app serves. A route the document does not describe throws:
 * the matrix would not know what it needs, and must not leave it out.
 */
export function routeTable(app: Express): Operation[] {
  const served = servedRoutes(app);
  const byRoute = new Map(operations.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op]));
  const unknown = served.filter((route) => !byRoute.has(route));
  if (unknown.length > 0) {
    throw new Error(`Routes without an operation in the OpenAPI document: ${unknown.join(', ')}`);
  }
  return served.map((route) => byRoute.get(route)!);
}

export const describeOperation = (op: Operation) => `${op.method.toUpperCase()} ${op.path}`;

/** The five keys every route is called with. */
export const keyCases = [
  'no key',
  'a malformed key',
  'a revoked key',
  'a key of another database',
  "a key lacking the route's scope",
] as const;
export type KeyCase = (typeof keyCases)[number];

/** `Authorization` values that carry no key at all: wrong characters, scheme, or length, or nothing. */
export const MALFORMED_AUTHORIZATIONS = [
  'Bearer rb_not*a*key',
  'Basic cm9vdDpyb290',
  'Bearer',
  `Bearer rb_${'A'.repeat(300)}`,
];

/**
 * What a refusal must be, as the contract (api-contract.md "Authentication and API keys") says:
 * 401 UNAUTHORIZED without a valid key; 403 FORBIDDEN for a valid key without the scope (root-only
 * routes: without being root); 404 NOT_FOUND for a database outside the key's reach. `null`: the
 * route admits that key, and the test says what it answers instead.
 */
export interface Refusal {
  status: 401 | 403 | 404;
  code: 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND';
  /** Text the message must contain, when the contract names it (the missing scope). */
  message?: string;
}

export function expectedRefusal(op: Operation, keyCase: KeyCase): Refusal | null {
  if (op.access === 'public') return null;
  switch (keyCase) {
    case 'no key':
    case 'a malformed key':
    case 'a revoked key':
      return { status: 401, code: 'UNAUTHORIZED' };
    case 'a key of another database':
      // That key has every scope, but is not root.
      if (op.access === 'root') return { status: 403, code: 'FORBIDDEN', message: 'root' };
      if (op.path.includes('{databaseId}')) return { status: 404, code: 'NOT_FOUND' };
      // The attachment upload names its database in a header; a file is of its database.
      if (op.operationId === 'uploadAttachment' || op.operationId === 'downloadFile') {
        return { status: 404, code: 'NOT_FOUND' };
      }
      // The contract is silent here; SECURITY.md: a key limited to some databases could never
      // reach one it created, so it creates none.
      if (op.operationId === 'createDatabase') {
        return { status: 403, code: 'FORBIDDEN', message: 'limited to specific databases' };
      }
      return null;
    case "a key lacking the route's scope":
      if (op.access === 'root') return { status: 403, code: 'FORBIDDEN', message: 'root' };
      // The contract says only who may download (a key that can read the file's database);
      // SECURITY.md "Files": anyone else gets the same 404, so no key learns which files exist.
      if (op.operationId === 'downloadFile') return { status: 404, code: 'NOT_FOUND' };
      return { status: 403, code: 'FORBIDDEN', message: scopesOpening(op.access)[0]! };
  }
}

/** Our codes of the Airtable error types the /v0 routes answer (src/http/airtable-errors.ts). */
const CODE_OF_AIRTABLE_TYPE: Readonly<Record<string, string>> = {
  AUTHENTICATION_REQUIRED: 'UNAUTHORIZED',
  INVALID_PERMISSIONS: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  TOO_MANY_REQUESTS: 'RATE_LIMITED',
  INVALID_REQUEST_UNKNOWN: 'BAD_REQUEST',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
};

/**
 * An answer's status and error code as the contract's (/api/v1) would have them: the Airtable-
 * compatible routes answer Airtable's (`{error: {type}}`, 422 for a request they cannot take),
 * read back here so that one matrix holds both.
 */
export function contractOutcome(
  op: Pick<Operation, 'path'>,
  response: { status: number; body?: { error?: { code?: string; type?: string } } },
): { status: number; code: string | undefined } {
  if (!op.path.startsWith('/v0/')) return { status: response.status, code: response.body?.error?.code };
  const type = response.body?.error?.type;
  return {
    status: response.status === 422 ? 400 : response.status,
    code: type === undefined ? undefined : (CODE_OF_AIRTABLE_TYPE[type] ?? type),
  };
}

/**
 * Checks an answer against the refusal the matrix expects for `keyCase` (`key` is the
 * Authorization value sent); false when the route admits that key and the caller checks the
 * admission. Which malformed value failed is named, when there are several (no real key is printed).
 */
export function refusedAsExpected(
  op: Operation,
  keyCase: KeyCase,
  key: string | undefined,
  response: { status: number; body?: { error?: { code?: string; type?: string; message?: string } } },
): boolean {
  const refusal = expectedRefusal(op, keyCase);
  if (!refusal) return false;
  const sent = keyCase === 'a malformed key' ? key : keyCase;
  const outcome = { sent, ...contractOutcome(op, response) };
  expect(outcome).toEqual({ sent, status: refusal.status, code: refusal.code });
  if (refusal.message) expect(response.body?.error?.message).toContain(refusal.message);
  return true;
}

/** The ids of the examples of the document, and which fixture each stands for. */
export type FixtureIds = {
  databaseId: string;
  tableId: string;
  fieldId: string;
  recordId: string;
  /** A revision of the record's history. */
  revisionId: string;
  webhookId: string;
  viewId: string;
  deliveryId: string;
  importId: string;
  apiKeyId: string;
};

/** Fills `{name}` path parameters; a parameter the fixtures cannot fill throws, naming it. */
export function fillPath(op: Operation, values: Record<string, string>): string {
  return op.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) {
      throw new Error(`${describeOperation(op)}: no fixture for the path parameter {${name}}; add one`);
    }
    return encodeURIComponent(value);
  });
}

/**
 * The operation's documented example body with the example ids swapped for the fixtures'. A body
 * the document gives no example for throws: the matrix would send nothing valid.
 */
export function exampleBody(op: Operation, ids: FixtureIds): unknown {
  if (!op.body) return undefined;
  if (op.bodyExample === undefined) {
    throw new Error(`${describeOperation(op)}: the document has no example body to send; add one`);
  }
  const swaps: [string, string][] = [
    [ex.DATABASE_ID, ids.databaseId],
    [ex.TABLE_ID, ids.tableId],
    [ex.RECORD_ID, ids.recordId],
    [ex.IMPORT_ID, ids.importId],
    [ex.API_KEY_ID, ids.apiKeyId],
  ];
  let text = JSON.stringify(op.bodyExample);
  for (const [example, fixture] of swaps) text = text.replaceAll(example, fixture);
  const body: unknown = JSON.parse(text);
  const valid = op.body.safeParse(body);
  if (!valid.success) {
    throw new Error(`${describeOperation(op)}: its example body is not valid: ${valid.error.message}`);
  }
  return body;
}
