import type { ErrorBody } from '@recordbase/contracts/errors';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import { AppError } from './errors';
import type { Logger } from './logger';
import { parseRequestPart } from './validate';

export function sendError(res: Response, error: AppError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const body: ErrorBody = { error: { code: error.code, message: error.message } };
  res.status(error.status).json(body);
}

/** body-parser signals its failures through `type`; each becomes the contract's error, never a 500. */
function fromBodyParser(error: unknown): AppError | null {
  if (!(error instanceof Error) || !('type' in error)) return null;
  switch (error.type) {
    case 'entity.parse.failed':
      return new AppError('BAD_REQUEST', `Malformed JSON in request body: ${error.message}`);
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', 'Request body is too large');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('BAD_REQUEST', error.message);
    case 'request.aborted':
      return new AppError('BAD_REQUEST', 'Request was aborted by the client');
    default:
      return null;
  }
}

export function jsonBodyParser(limit = '10mb'): RequestHandler {
  return express.json({ limit, strict: false });
}

export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const known = error instanceof AppError ? error : fromBodyParser(error);
    if (known) {
      sendError(res, known);
      return;
    }
    logger.error({ err: error, method: req.method, path: req.path }, 'unhandled error');
    if (res.headersSent) return;
    sendError(res, new AppError('INTERNAL_SERVER_ERROR', 'An internal error occurred'));
  };
}

export const unknownRoute: RequestHandler = (req, res) => {
  sendError(res, new AppError('NOT_FOUND', `No route for ${req.method} ${req.path}`));
};

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

interface EndpointSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  params?: P;
  query?: Q;
  body?: B;
  /** Status of a successful answer; 200 when omitted. */
  status?: number;
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface EndpointInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  req: Request;
  res: Response;
}

/**
 * One validation step per route: params, query and body are parsed by the contract's schemas and
 * handed to the handler, which never reads `req.body` itself. The handler's return value is the
 * JSON answer.
 */
export function endpoint<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
>(
  spec: EndpointSpec<P, Q, B>,
  handler: (input: EndpointInput<Parsed<P>, Parsed<Q>, Parsed<B>>) => Promise<unknown>,
): RequestHandler {
  return async (req, res) => {
    const params = (
      spec.params ? parseRequestPart(spec.params, req.params, 'params') : undefined
    ) as Parsed<P>;
    const query = (spec.query ? parseRequestPart(spec.query, req.query, 'query') : undefined) as Parsed<Q>;
    const body = (spec.body ? parseRequestPart(spec.body, req.body, 'body') : undefined) as Parsed<B>;
    const result = await handler({ params, query, body, req, res });
    if (res.headersSent) return;
    const [status, payload] =
      result instanceof Reply ? [result.status, result.body] : [spec.status ?? 200, result];
    res.status(status);
    if (payload instanceof RawJson) res.type('application/json').send(payload.text);
    else res.json(payload);
  };
}
