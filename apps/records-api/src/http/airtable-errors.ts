import type { AirtableErrorBody } from '@recordbase/contracts/airtable';
import type { DomainError, InputPath } from '@recordbase/contracts/domain-errors';
import type { ErrorCode } from '@recordbase/contracts/errors';
import { AppError, httpErrorOf } from '@recordbase/server-kit/errors';
import { sendErrorAs } from '@recordbase/server-kit/http';
import type { Response } from 'express';

/**
 * Errors of the Airtable-compatible API in Airtable's shape, `{error: {type, message}}`, with
 * Airtable's statuses: a request it cannot take is 422 (Airtable.js makes an AirtableError of the
 * type and message), a base, table or record that is not there 404, a key missing or wrong 401,
 * one without the scope 403, too many requests 429 (Airtable.js waits and retries by itself).
 */

/** Airtable's status and type for each of our error codes. */
const AIRTABLE_BY_CODE: Readonly<Record<ErrorCode, readonly [number, string]>> = {
  BAD_REQUEST: [422, 'INVALID_REQUEST_UNKNOWN'],
  INVALID_RECORD_ID: [404, 'NOT_FOUND'],
  UNAUTHORIZED: [401, 'AUTHENTICATION_REQUIRED'],
  FORBIDDEN: [403, 'INVALID_PERMISSIONS'],
  NOT_FOUND: [404, 'NOT_FOUND'],
  PAYLOAD_TOO_LARGE: [413, 'REQUEST_TOO_LARGE'],
  UNSUPPORTED_MEDIA_TYPE: [415, 'UNSUPPORTED_MEDIA_TYPE'],
  RANGE_NOT_SATISFIABLE: [416, 'RANGE_NOT_SATISFIABLE'],
  CURSOR_EXPIRED: [422, 'LIST_RECORDS_ITERATOR_NOT_AVAILABLE'],
  RATE_LIMITED: [429, 'TOO_MANY_REQUESTS'],
  INTERNAL_SERVER_ERROR: [500, 'SERVER_ERROR'],
  SERVICE_UNAVAILABLE: [503, 'SERVICE_UNAVAILABLE'],
};

/** A refusal with the Airtable type that says more than its code's (UNKNOWN_FIELD_NAME rather than INVALID_REQUEST_UNKNOWN). */
export class AirtableRefusal extends AppError {
  constructor(
    code: ErrorCode,
    readonly airtableType: string,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(code, message, headers);
    this.name = 'AirtableRefusal';
  }
}

/** errorMiddleware's sender for /v0. */
export function sendAirtableError(res: Response, error: AppError): void {
  const [status, type] = AIRTABLE_BY_CODE[error.code];
  sendErrorAs(
    res,
    error,
    status,
    (message): AirtableErrorBody => ({
      error: { type: error instanceof AirtableRefusal ? error.airtableType : type, message },
    }),
  );
}

/** Where a refusal's first problem is: its path, [] for the request as a whole. */
const pathOf = (error: DomainError): InputPath => error.problems[0]?.path ?? [];

/** A field's value in a write body: `fields.<key>…` or `records[i].fields.<key>…`. */
const isFieldValue = (path: InputPath): boolean =>
  (path[0] === 'fields' && typeof path[1] === 'string') ||
  (path[0] === 'records' && path[2] === 'fields' && typeof path[3] === 'string');

/**
 * A domain refusal of an Airtable request: the type Airtable gives the same fault where it has
 * one, the parameter named from `part` (`query.filterByFormula: …`).
 */
export function airtableErrorOfDomain(error: DomainError, part: 'query' | 'body'): AppError {
  const http = httpErrorOf(error, part);
  if (error.kind !== 'invalid') return http;
  const path = pathOf(error);
  const parameter = path[0];
  const message = http.message;
  const refusal = (type: string) => new AirtableRefusal(http.code, type, message, http.headers);
  if (parameter === 'filterByFormula') return refusal('INVALID_FILTER_BY_FORMULA');
  if (parameter === 'view') return refusal('VIEW_NAME_NOT_FOUND');
  if (parameter === 'offset' || parameter === 'cursor') return refusal('INVALID_OFFSET_VALUE');
  const namesFields =
    parameter === 'fields' ||
    parameter === 'sort' ||
    parameter === 'records' ||
    parameter === 'performUpsert';
  if (namesFields && /unknown field/i.test(message)) return refusal('UNKNOWN_FIELD_NAME');
  if (parameter === 'sort') return refusal('INVALID_SORT_PARAMETER');
  if (isFieldValue(path)) return refusal('INVALID_VALUE_FOR_COLUMN');
  return http;
}
