import type { ErrorCode } from '@recordbase/contracts/errors';

/**
 * Everything the client throws is a RecordbaseError whose `code` says what went wrong: the
 * service's own error codes, or one of the client's for what never got a usable answer.
 */
export type ClientErrorCode =
  /** The answer was not what the contract promises (a proxy's page, a newer or older service). */
  | 'INVALID_RESPONSE'
  /** No answer arrived: the connection failed or was reset. */
  | 'NETWORK_ERROR'
  /** Input the client refuses before sending (an upload over the route's limit). */
  | 'INVALID_INPUT'
  /** A webhook delivery whose headers, signature or body do not verify. */
  | 'INVALID_WEBHOOK';

export type RecordbaseErrorCode = ErrorCode | ClientErrorCode;

export class RecordbaseError extends Error {
  override readonly name: string = 'RecordbaseError';
  constructor(
    readonly code: RecordbaseErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The service answered with an error body: `code` and `message` are the service's own. */
export class RecordbaseApiError extends RecordbaseError {
  override readonly name = 'RecordbaseApiError';
  constructor(
    override readonly code: ErrorCode,
    message: string,
    readonly status: number,
    /** How long the service asked to wait (429, 503), when it said so. */
    readonly retryAfterMs: number | undefined,
    /** The method and URL of the request, without the query string. */
    readonly request: string,
  ) {
    super(code, message);
  }
}

/** The service's answer did not match the contract, or was no answer a client can read. */
export class RecordbaseResponseError extends RecordbaseError {
  override readonly name = 'RecordbaseResponseError';
  constructor(
    message: string,
    readonly status: number,
    readonly request: string,
  ) {
    super('INVALID_RESPONSE', message);
  }
}

export class RecordbaseNetworkError extends RecordbaseError {
  override readonly name = 'RecordbaseNetworkError';
  constructor(
    message: string,
    readonly request: string,
    cause: unknown,
  ) {
    super('NETWORK_ERROR', message, { cause });
  }
}

/** Narrows an unknown error to a RecordbaseError, of one code when given. */
export function isRecordbaseError<Code extends RecordbaseErrorCode>(
  error: unknown,
  code?: Code,
): error is RecordbaseError & { code: Code } {
  return error instanceof RecordbaseError && (code === undefined || error.code === code);
}
