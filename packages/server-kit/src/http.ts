import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { Principal, RouteAccess } from '@recordbase/contracts/api-keys';
import { DomainError } from '@recordbase/contracts/domain-errors';
import type { ErrorBody } from '@recordbase/contracts/errors';
import { classifyDatabaseError } from '@recordbase/db';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import { principalOf } from './auth';
import { AppError, badRequest, clip, httpErrorOf, notFound } from './errors';
import type { Logger } from './logger';
import { noQueryParameters, parseRequestPart } from './validate';

/** Room for the longest message of our own (twenty bad records named); anything longer is clipped. */
const MAX_ERROR_MESSAGE_CHARS = 10_000;
/** PostgreSQL's words in an answer: enough to see which value, never the whole of it. */
const MAX_DATABASE_MESSAGE_CHARS = 1000;

export function sendError(res: Response, error: AppError): void {
  sendErrorAs(res, error, error.status, (message): ErrorBody => ({ error: { code: error.code, message } }));
}

/**
 * Sends an error with its headers, at `status`, in the body `shape` makes of its message (clipped):
 * for an API whose errors have a shape of their own (the Airtable-compatible API's).
 */
export function sendErrorAs(
  res: Response,
  error: AppError,
  status: number,
  shape: (message: string) => unknown,
): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(status).json(shape(clip(error.message, MAX_ERROR_MESSAGE_CHARS)));
}

/**
 * Express, its router and body-parser mark the failures that are the request's fault with a 4xx
 * `status` (http-errors). Each becomes the contract's error with a message saying what was wrong.
 */
function fromHttpError(error: unknown): AppError | null {
  if (!(error instanceof Error)) return null;
  const { status, type, limit } = error as Error & { status?: unknown; type?: unknown; limit?: unknown };
  if (typeof status !== 'number' || status < 400 || status > 499) return null;
  switch (type) {
    case 'entity.parse.failed':
      return badRequest(`Malformed JSON in request body: ${error.message}`);
    case 'entity.too.large':
      return new AppError(
        'PAYLOAD_TOO_LARGE',
        `Request body is larger than this route accepts${typeof limit === 'number' ? ` (${limit} bytes)` : ''}`,
      );
    case 'encoding.unsupported':
      return new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        'Unsupported content-encoding; use gzip, deflate, br or none',
      );
    case 'charset.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', `Request body has an ${error.message}; use utf-8`);
    case 'request.aborted':
      return badRequest('The client aborted the request before its body arrived');
    case 'request.size.invalid':
      return badRequest('Request body length does not match its content-length header');
    default:
      break;
  }
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'Request body is too large');
  if (status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', error.message);
  // A body whose content-encoding does not decode surfaces as zlib's error with a 400 attached.
  if ('code' in error && typeof error.code === 'string' && error.code.startsWith('Z_')) {
    return badRequest(`Request body does not decode with its content-encoding: ${error.message}`);
  }
  return badRequest(error.message);
}

/**
 * The database's refusals that are the request's fault (a value it cannot hold) or a passing state
 * (busy, timed out, away): a last line of defence, so that none of them is a 500.
 */
function fromDatabaseError(error: unknown): AppError | null {
  const classified = classifyDatabaseError(error);
  if (!classified) return null;
  const failure = { ...classified, message: clip(classified.message, MAX_DATABASE_MESSAGE_CHARS) };
  switch (failure.kind) {
    case 'invalid_value':
      return badRequest(`Invalid value in the request: ${failure.message}`);
    case 'too_large':
      return badRequest(`The request asks more than the database can take or give: ${failure.message}`);
    case 'timeout':
      return new AppError(
        'SERVICE_UNAVAILABLE',
        'The database query ran past its time limit and was stopped; narrow the request (for example its filter) or retry later',
      );
    case 'cancelled':
      return new AppError('SERVICE_UNAVAILABLE', 'The database query was cancelled');
    case 'busy':
      return new AppError('SERVICE_UNAVAILABLE', 'The database is busy; retry shortly', {
        'Retry-After': '1',
      });
    case 'key_busy':
      return new AppError(
        'RATE_LIMITED',
        `Too many slow requests at once: ${failure.message}; retry after 1 s`,
        {
          'Retry-After': '1',
        },
      );
    case 'unavailable':
      return new AppError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry later', {
        'Retry-After': '5',
      });
  }
}

/** A caller's (or the gateway's) id is kept only when it is a plain token that cannot forge a log line. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const OPERATIONAL_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** The request's id as requestIds() settled it; undefined before that middleware ran. */
export const requestIdOf = (res: Response): string | undefined => res.locals.requestId;

/**
 * Every request gets an id: the X-Request-Id it came with (the gateway always sends one), or one
 * made here. It is echoed in the answer's X-Request-Id and logged with the request's outcome, so a
 * caller's id finds the gateway's line and the service's. Install it first.
 */
export function requestIds(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const received = req.get('x-request-id');
    const requestId = received && REQUEST_ID.test(received) ? received : randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    // Health checks and scrapes come every few seconds from the orchestrator: kept out of info logs.
    const level = OPERATIONAL_PATHS.has(req.path) ? 'debug' : 'info';
    res.on('finish', () => {
      logger[level](
        {
          requestId,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          durationMs: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
        },
        'request',
      );
    });
    next();
  };
}

/** How an API words an error it answers: the contract's `{error: {code, message}}` by default. */
export type ErrorSender = (res: Response, error: AppError) => void;

export function errorMiddleware(logger: Logger, send: ErrorSender = sendError): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const known =
      error instanceof AppError
        ? error
        : error instanceof DomainError
          ? httpErrorOf(error, 'body')
          : (fromHttpError(error) ?? fromDatabaseError(error));
    const context = { err: error, method: req.method, path: req.path, requestId: requestIdOf(res) };
    // Nobody is left to answer when the client went away (the cancelled query's error lands here).
    if (res.headersSent || res.destroyed) {
      if (!known && !(error instanceof ClientGone)) logger.error(context, 'unhandled error');
      return;
    }
    if (known) {
      if (known.status >= 500) logger.warn(context, known.message);
      send(res, known);
      return;
    }
    logger.error(context, 'unhandled error');
    send(res, new AppError('INTERNAL_SERVER_ERROR', 'An internal error occurred'));
  };
}

/** What routeNotFound reads of Express's router: a layer's path match, its route or its router. */
interface RouterLayer {
  match?: (path: string) => unknown;
  route?: { methods?: Record<string, boolean> };
  handle?: { stack?: readonly RouterLayer[] };
}

/** Routers mounted within routers, at most this deep: more would be a cycle. */
const MAX_ROUTER_DEPTH = 8;

/**
 * The methods the app's routes take on `path`, matched as its router matches paths: empty when
 * no route takes it. Express's router knows them but falls through to the 404 without saying so,
 * so its layers are read here (router 2's `Layer.match` has no side effects); a layer that cannot
 * be read is passed over, and the answer then names fewer methods, never a wrong one.
 */
function methodsServing(app: unknown, path: string): string[] {
  const methods = new Set<string>();
  const walk = (stack: readonly RouterLayer[], rest: string, depth: number) => {
    for (const layer of stack) {
      let matched: unknown;
      try {
        matched = layer.match?.(rest);
      } catch {
        continue; // A parameter that does not decode: that layer would refuse the path too.
      }
      if (typeof matched !== 'object' || matched === null) continue;
      if (layer.route) {
        for (const [method, handled] of Object.entries(layer.route.methods ?? {})) {
          if (handled && method !== '_all') methods.add(method.toUpperCase());
        }
        continue;
      }
      const consumed = (matched as { path?: unknown }).path;
      if (!layer.handle?.stack || typeof consumed !== 'string' || depth >= MAX_ROUTER_DEPTH) continue;
      const inner = rest.slice(consumed.length);
      walk(layer.handle.stack, inner.startsWith('/') ? inner : `/${inner}`, depth + 1);
    }
  };
  const stack = (app as { router?: { stack?: readonly RouterLayer[] } } | undefined)?.router?.stack;
  if (stack) walk(stack, path, 0);
  return [...methods];
}

/**
 * Advice for a request no route took, from the app that knows what such a request meant (for
 * example that records are listed by POST …/records/list); undefined when it has none.
 */
export type RouteHint = (request: { method: string; path: string }) => string | undefined;

/**
 * The 404 of a request no route took. When the path is served with other methods, the answer
 * names them (and sets Allow), and the app's hints may add what the caller likely wanted.
 */
export function routeNotFound(hints: readonly RouteHint[] = []): RequestHandler {
  return (req, res) => {
    const served = methodsServing(req.app, req.path);
    const methods = served.filter((method) => method !== req.method);
    if (methods.length > 0) res.setHeader('Allow', served.join(', '));
    const request = { method: req.method, path: req.path };
    const hint = hints.map((advise) => advise(request)).find((advice) => advice !== undefined);
    const parts = [
      `No route for ${req.method} ${req.path}`,
      ...(methods.length > 0 ? [`this path takes ${methods.join(', ')}`] : []),
      ...(hint ? [hint] : []),
    ];
    sendError(res, notFound(parts.join('; ')));
  };
}

export const unknownRoute: RequestHandler = routeNotFound();

/** A JSON answer already serialised (for example by PostgreSQL), sent without re-encoding. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** An answer whose status depends on the outcome (bulk writes answer 201 or 200). */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/**
 * The check of a key's right to a route (the domain's access policy), made before the request
 * body is read, so that a key without the right (or a database outside its reach) costs no
 * parsing.
 */
export type Authorize = (
  principal: Principal,
  access: RouteAccess,
  target: { databaseId?: unknown; unreachable?: () => Error },
) => void;

interface EndpointSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  access: RouteAccess;
  params?: P;
  /** The query parameters the route takes (a strict object); a route without one takes none. */
  query?: Q;
  /** The JSON body's schema; a route without one reads no body. */
  body?: B;
  /** The largest body this route accepts (bytes or a size such as '1mb'); 100 kB by default. */
  bodyLimit?: string | number;
  /**
   * The 404 for a `databaseId` outside the key's reach, when the route words it differently
   * (a webhook route answers "webhook not found", as for a webhook that does not exist).
   */
  unreachable?: (params: Parsed<P>) => Error;
  /** Status of a successful answer; 200 when omitted. */
  status?: number;
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface EndpointInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  principal: Principal;
  /** Aborts when the client goes away before the answer is sent: work for it can stop. */
  signal: AbortSignal;
  req: Request;
  res: Response;
}

const JSON_TYPES = ['application/json', 'application/*+json'];
const DEFAULT_BODY_LIMIT = '100kb';

/** Whether the request carries body bytes (an empty body means "no body", whatever its type). */
function hasBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(req.headers['content-length'] ?? 0);
  return Number.isFinite(length) && length > 0;
}

/** Reads a JSON body within `limit`. Any other media type is refused, never silently ignored. */
function readJsonBody(req: Request, res: Response, limit: string | number): Promise<unknown> {
  if (!hasBody(req)) return Promise.resolve(undefined);
  if (!req.is(JSON_TYPES)) {
    const type = req.headers['content-type'];
    return Promise.reject(
      new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        type
          ? `Request body of type ${JSON.stringify(type.slice(0, 100))} is not accepted; send application/json`
          : 'Request body has no content-type; send application/json',
      ),
    );
  }
  const parse = express.json({ limit, strict: false, type: () => true, verify: refuseInvalidUtf8 });
  return new Promise((resolve, reject) => {
    parse(req, res, (error?: unknown) => (error ? reject(error) : resolve(req.body)));
  });
}

/** Invalid UTF-8 would otherwise be decoded into replacement characters and stored as such. */
function refuseInvalidUtf8(_req: unknown, _res: unknown, bytes: Buffer, encoding: string): void {
  if (encoding.toLowerCase() === 'utf-8' && !isUtf8(bytes)) {
    throw Object.assign(new Error('Request body is not valid UTF-8'), { status: 400, expose: true });
  }
}

/** The reason a request's work is abandoned when its client goes away: nobody's fault, nothing to log. */
class ClientGone extends Error {
  constructor() {
    super('the client closed the connection');
    this.name = 'ClientGone';
  }
}

function abortSignalOf(res: Response): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort(new ClientGone());
  });
  return controller.signal;
}

/**
 * The routes of an app whose keys' rights `authorize` checks. Each route: parse the path, check the
 * key's right to it, only then read and parse the body, call the handler, and send its return
 * value as JSON. Handlers never read `req.body` themselves.
 */
export const createEndpoint =
  (authorize: Authorize) =>
  <P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType>(
    spec: EndpointSpec<P, Q, B>,
    handler: (input: EndpointInput<Parsed<P>, Parsed<Q>, Parsed<B>>) => Promise<unknown>,
  ): RequestHandler =>
  async (req, res) => {
    const signal = abortSignalOf(res);
    const params = (
      spec.params ? parseRequestPart(spec.params, req.params, 'params') : undefined
    ) as Parsed<P>;
    const principal = principalOf(res);
    authorize(principal, spec.access, {
      databaseId: (params as { databaseId?: unknown } | undefined)?.databaseId,
      unreachable: spec.unreachable ? () => spec.unreachable!(params) : undefined,
    });
    const query = parseRequestPart(spec.query ?? noQueryParameters, req.query, 'query') as Parsed<Q>;
    const rawBody = spec.body
      ? await readJsonBody(req, res, spec.bodyLimit ?? DEFAULT_BODY_LIMIT)
      : undefined;
    const body = (spec.body ? parseRequestPart(spec.body, rawBody, 'body') : undefined) as Parsed<B>;
    let result: unknown;
    try {
      result = await handler({ params, query, body, principal, signal, req, res });
    } catch (error) {
      // The use case's input is the route's body, or its query when it takes none.
      throw error instanceof DomainError ? httpErrorOf(error, spec.body ? 'body' : 'query') : error;
    }
    if (res.headersSent) return;
    const [status, payload] =
      result instanceof Reply ? [result.status, result.body] : [spec.status ?? 200, result];
    res.status(status);
    if (payload instanceof RawJson) res.type('application/json').send(payload.text);
    else res.json(payload);
  };
