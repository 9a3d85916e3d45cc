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

/**
 * The first `maxChars` of a text that may be huge (PostgreSQL quotes a value whole in its errors),
 * saying how much was left out; never splits a surrogate pair.
 */
export function clip(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = maxChars;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}

export const badRequest = (message: string) => new AppError('BAD_REQUEST', message);
export const notFound = (message: string) => new AppError('NOT_FOUND', message);
export const forbidden = (message: string) => new AppError('FORBIDDEN', message);
export const unauthorized = (message = 'Missing or invalid API key') => new AppError('UNAUTHORIZED', message);
