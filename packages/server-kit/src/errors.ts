import type { DomainError, DomainErrorKind } from '@recordbase/contracts/domain-errors';
import { type ErrorCode, errorStatusByCode } from '@recordbase/contracts/errors';

/** The one error type services throw; the error middleware turns it into the contract's body. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers, such as Retry-After. */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = errorStatusByCode[code];
    this.headers = headers;
  }
}

export { clip } from '@recordbase/contracts/domain-errors';

export const badRequest = (message: string) => new AppError('BAD_REQUEST', message);
export const notFound = (message: string) => new AppError('NOT_FOUND', message);
export const forbidden = (message: string) => new AppError('FORBIDDEN', message);
export const unauthorized = (message = 'Missing or invalid API key') => new AppError('UNAUTHORIZED', message);

/** The answer to each kind of domain refusal. */
const CODE_BY_KIND: Record<DomainErrorKind, ErrorCode> = {
  invalid: 'BAD_REQUEST',
  invalid_record_id: 'INVALID_RECORD_ID',
  not_found: 'NOT_FOUND',
  forbidden: 'FORBIDDEN',
  too_many: 'RATE_LIMITED',
  busy: 'SERVICE_UNAVAILABLE',
  expired: 'CURSOR_EXPIRED',
};

/**
 * A domain refusal as the HTTP answer: the status its kind calls for, its places named from the
 * part of the request the use case's input came from (`body`, `query`), and when to retry.
 */
export function httpErrorOf(error: DomainError, part: 'body' | 'query'): AppError {
  const headers: Record<string, string> =
    error.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(error.retryAfterSeconds) };
  return new AppError(CODE_BY_KIND[error.kind], error.words(part), headers);
}
