import http from 'node:http';
import fc from 'fast-check';
import { openApiDocument } from '../src/http/openapi/document';
import {
  encodeComponent,
  HOSTILE_URL_PARTS,
  type Mutation,
  mutationArbitrary,
  renderBody,
} from './fuzz-hostile';
import { arbitraryOf, type JsonSchema, type SchemaContext } from './fuzz-schema';

/**
 * The routes to fuzz, read from the OpenAPI document (whose completeness against the routers
 * `openapi.routes.test.ts` checks): every operation under /api/v1, with its path and query
 * parameters and its JSON body schema. A new route is fuzzed as soon as it is documented.
 */
export interface FuzzRoute {
  method: 'get' | 'post' | 'patch' | 'delete' | 'put';
  /** The OpenAPI path, `{name}` for parameters. */
  path: string;
  pathParams: { name: string; schema: JsonSchema }[];
  queryParams: { name: string; schema: JsonSchema }[];
  body?: JsonSchema;
}

interface Parameter {
  in: string;
  name: string;
  schema?: JsonSchema;
}

interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

const METHODS = ['get', 'post', 'patch', 'delete', 'put'] as const;

/** This service's API: the upload-service's routes share the document. */
const recordsApiPath = (path: string) => path.startsWith('/api/v1/');

export function documentedRoutes(served: (path: string) => boolean = recordsApiPath): {
  routes: FuzzRoute[];
  components: Record<string, JsonSchema>;
} {
  const document = openApiDocument() as unknown as {
    paths: Record<string, Record<string, Operation> & { parameters?: Parameter[] }>;
    components: { schemas: Record<string, JsonSchema> };
  };
  const routes: FuzzRoute[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    if (!served(path)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])];
      const of = (where: string) =>
        parameters.filter((p) => p.in === where).map((p) => ({ name: p.name, schema: p.schema ?? {} }));
      routes.push({
        method,
        path,
        pathParams: of('path'),
        queryParams: of('query'),
        body: operation.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return { routes, components: document.components.schemas };
}

/** Every string under an `example`/`examples` key of the document: realistic values to try. */
export function documentExamples(): string[] {
  const found = new Set<string>();
  const collect = (value: unknown, inExample: boolean) => {
    if (typeof value === 'string') {
      if (inExample) found.add(value);
    } else if (Array.isArray(value)) {
      for (const item of value) collect(item, inExample);
    } else if (value && typeof value === 'object')
      for (const [key, item] of Object.entries(value)) {
        if (inExample) found.add(key);
        collect(item, inExample || key === 'example' || key === 'examples');
      }
  };
  collect(openApiDocument(), false);
  return [...found];
}

/** One generated request, with what it carries, for the report of a failure. */
export interface FuzzRequest {
  method: string;
  /** Raw path and query, as sent. */
  url: string;
  body?: Buffer;
  planted: string[];
}

/** Values of the fixture that a parameter of this name may take (ids and names that exist). */
export type Known = Record<string, string[]>;

function urlPartArbitrary(schema: JsonSchema, context: SchemaContext, known: string[]): fc.Arbitrary<string> {
  const generated = arbitraryOf(schema, context).map((value) => encodeComponent(String(value)));
  const options: { weight: number; arbitrary: fc.Arbitrary<string> }[] = [
    { weight: 2, arbitrary: generated },
    { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_URL_PARTS) },
  ];
  if (known.length > 0) {
    // Encoded segment by segment: a storage key's slashes stay path separators.
    const existing = fc.constantFrom(
      ...known.map((value) => value.split('/').map(encodeComponent).join('/')),
    );
    options.push({ weight: 16, arbitrary: existing });
    // An existing id with something hostile after it.
    options.push({
      weight: 1,
      arbitrary: fc.tuple(existing, fc.constantFrom(...HOSTILE_URL_PARTS)).map(([id, tail]) => id + tail),
    });
  }
  return fc.oneof(...options);
}

/** Query values: the parameter's own schema, arrays as repeated parameters, or hostile text. */
function queryArbitrary(route: FuzzRoute, context: SchemaContext, known: Known): fc.Arbitrary<string[]> {
  const one = (name: string, schema: JsonSchema) =>
    fc.option(
      fc
        .oneof(
          {
            weight: 4,
            arbitrary: arbitraryOf(schema, context).map((value) =>
              (Array.isArray(value) ? value : [value]).map(
                (item) =>
                  `${name}=${encodeComponent(typeof item === 'string' ? item : JSON.stringify(item))}`,
              ),
            ),
          },
          {
            weight: known[name]?.length ? 4 : 0,
            arbitrary: fc
              .constantFrom('', ...(known[name] ?? []))
              .map((value) => [`${name}=${encodeComponent(value)}`]),
          },
          fc.constantFrom(...HOSTILE_URL_PARTS).map((part) => [`${name}=${part}`]),
          fc.constant([`${name}[__proto__]=x`]),
          fc.constant([`${name}[]=a&${name}[]=b`]),
          fc.constant(new Array(1000).fill(`${name}=x`)),
        )
        .map((pairs) => pairs),
      { nil: [] as string[] },
    );
  const extra = fc.oneof(
    { weight: 3, arbitrary: fc.constant([] as string[]) },
    fc
      .tuple(
        fc.constantFrom('__proto__', 'constructor', 'limit', 'offset', 'filter', '%00'),
        fc.constantFrom(...HOSTILE_URL_PARTS),
      )
      .map(([name, value]) => [`${name}=${value}`]),
  );
  return fc.tuple(...route.queryParams.map((p) => one(p.name, p.schema)), extra).map((lists) => lists.flat());
}

export function requestArbitrary(
  route: FuzzRoute,
  context: SchemaContext,
  known: Known,
): fc.Arbitrary<FuzzRequest> {
  const params = fc.tuple(
    ...route.pathParams.map((p) => urlPartArbitrary(p.schema, context, known[p.name] ?? [])),
  );
  const query = queryArbitrary(route, context, known);
  const noBody = fc.constant(undefined as { valid: unknown; mutations: Mutation[] } | undefined);
  const body = route.body
    ? fc.record({
        valid: arbitraryOf(route.body, context),
        // Mostly one or two hostile values; sometimes none, so valid-shaped bodies go too.
        mutations: fc.oneof(
          { weight: 1, arbitrary: fc.constant([] as Mutation[]) },
          { weight: 6, arbitrary: fc.array(mutationArbitrary, { minLength: 1, maxLength: 2 }) },
        ),
      })
    : noBody;
  return fc.tuple(params, query, body).map(([values, pairs, generated]) => {
    let index = 0;
    const path = route.path.replace(/\{[^}]+\}/g, () => values[index++]!);
    const url = pairs.length > 0 ? `${path}?${pairs.join('&')}` : path;
    if (!generated) return { method: route.method.toUpperCase(), url, planted: [] };
    const rendered = renderBody(generated.valid, generated.mutations);
    return { method: route.method.toUpperCase(), url, body: rendered.bytes, planted: rendered.planted };
  });
}

export interface FuzzResponse {
  status: number;
  text: string;
  durationMs: number;
  retryAfter: string | undefined;
}

/**
 * Sends a request as raw bytes over a keep-alive agent; gives up after `timeoutMs` (rejecting, so
 * a hang is a failure of the property rather than of the whole test).
 */
export function send(
  origin: { host: string; port: number; agent: http.Agent },
  request: FuzzRequest,
  authorization: string,
  timeoutMs: number,
): Promise<FuzzResponse> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: origin.host,
      port: origin.port,
      agent: origin.agent,
      method: request.method,
      path: request.url,
      headers: {
        authorization,
        ...(request.body
          ? { 'content-type': 'application/json', 'content-length': request.body.length }
          : {}),
      },
    });
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      const answer = () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString('utf8'),
          durationMs: performance.now() - started,
          retryAfter: res.headers['retry-after'],
        });
      };
      // A change stream that was opened never ends by itself: its first bytes are its answer.
      const endless = String(res.headers['content-type']).startsWith('text/event-stream');
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (endless) {
          answer();
          req.destroy();
        }
      });
      res.on('end', answer);
      res.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(request.body);
  });
}

/** A request as printed in a failure: long parts cut, what was planted listed. */
export function describeRequest(request: FuzzRequest): string {
  const cut = (text: string, max: number) =>
    text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
  const body = request.body ? `\n  body: ${cut(request.body.toString('utf8'), 400)}` : '';
  const planted = request.planted.length > 0 ? `\n  planted: ${request.planted.join('; ')}` : '';
  return `${request.method} ${cut(request.url, 300)}${body}${planted}`;
}
