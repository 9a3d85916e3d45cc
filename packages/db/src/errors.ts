import { KeyShareBusy } from './key-shares';

/** The PostgreSQL error behind a failure, whether it surfaced through Prisma or through pg. */
export interface DatabaseErrorInfo {
  /** SQLSTATE, such as 23505 for a unique violation. */
  code: string;
  message: string;
  /** Name of the violated constraint or index, when PostgreSQL reported one. */
  constraint?: string;
}

export function databaseErrorOf(error: unknown): DatabaseErrorInfo | null {
  if (typeof error !== 'object' || error === null) return null;
  const meta = (error as { meta?: { driverAdapterError?: { cause?: Record<string, unknown> } } }).meta;
  const cause = meta?.driverAdapterError?.cause;
  if (cause && typeof cause.originalCode === 'string') {
    const constraint = (cause.constraint as { index?: string } | undefined)?.index;
    return {
      code: cause.originalCode,
      message: String(cause.originalMessage ?? cause.message ?? ''),
      ...(constraint ? { constraint } : {}),
    };
  }
  const pgError = error as { code?: unknown; message?: unknown; constraint?: unknown };
  if (typeof pgError.code === 'string' && /^[0-9A-Z]{5}$/.test(pgError.code)) {
    return {
      code: pgError.code,
      message: String(pgError.message ?? ''),
      ...(typeof pgError.constraint === 'string' ? { constraint: pgError.constraint } : {}),
    };
  }
  return null;
}

export const isUniqueViolation = (error: unknown, constraint?: string): boolean => {
  const info = databaseErrorOf(error);
  return info?.code === '23505' && (constraint === undefined || info.constraint === constraint);
};

/** Class 22: a value that does not fit (bad cast, out of range, rb_conversion_failed). */
export const isDataException = (error: unknown): boolean =>
  databaseErrorOf(error)?.code.startsWith('22') ?? false;

/** 55P03: a lock not granted within lock_timeout (or NOWAIT). */
export const isLockNotAvailable = (error: unknown): boolean => databaseErrorOf(error)?.code === '55P03';

/** pg-pool's error when no connection frees up within `connectionTimeoutMillis`. */
const POOL_ACQUIRE_TIMEOUT_MESSAGE = 'timeout exceeded when trying to connect';

/**
 * What a failure of the database means for the request that met it. Anything not named here is a
 * bug of ours (a 500); these are the request's fault or the database being busy or away.
 */
export type DatabaseFailureKind =
  /** Class 22: the request carried a value the column or cast cannot hold. */
  | 'invalid_value'
  /** Class 54: a value or a query beyond what PostgreSQL can take (index row size, complexity). */
  | 'too_large'
  /** The statement ran past statement_timeout. */
  | 'timeout'
  /** The statement was cancelled, as we do when the client goes away. */
  | 'cancelled'
  /** No connection became free in time, a deadlock, a serialization failure, a lock timeout. */
  | 'busy'
  /** The request's API key already holds its share of the connections (key-shares.ts). */
  | 'key_busy'
  /** PostgreSQL cannot be reached, is shutting down, or is out of resources. */
  | 'unavailable';

export interface DatabaseFailure {
  kind: DatabaseFailureKind;
  /** PostgreSQL's own words, for the kinds whose message is about the request's values. */
  message: string;
}

/** Errors from another realm (Node's own, seen inside a vm or a test runner) fail `instanceof Error`. */
const isErrorLike = (value: unknown): value is Error =>
  typeof value === 'object' && value !== null && typeof (value as Error).message === 'string';

function causes(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let current = error; isErrorLike(current) && chain.length < 5; current = current.cause) {
    chain.push(current);
  }
  return chain;
}

/** Socket failures reaching PostgreSQL (Node's error codes, not SQLSTATEs). */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** pg's words for a connection that died under a query, or a client left unusable by that. */
const CONNECTION_LOST_MESSAGES = ['Connection terminated', 'is not queryable'];
/** @prisma/adapter-pg's names for the same failures. */
const ADAPTER_UNREACHABLE_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout']);

/** PostgreSQL unreachable or the connection lost (restarted, killed): no SQLSTATE reaches us then. */
function isConnectionFailure(error: unknown): boolean {
  return causes(error).some((e) => {
    const { code, message, meta } = e as Error & {
      code?: unknown;
      meta?: { driverAdapterError?: { cause?: { kind?: unknown } } };
    };
    if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
    if (CONNECTION_LOST_MESSAGES.some((words) => message.includes(words))) return true;
    const kind = meta?.driverAdapterError?.cause?.kind;
    return typeof kind === 'string' && ADAPTER_UNREACHABLE_KINDS.has(kind);
  });
}

/**
 * Prisma's interactive transactions: one that found no connection within its `maxWait`, or ran
 * past its `timeout` and was rolled back. Not a SQLSTATE, though it looks like one.
 */
const PRISMA_TRANSACTION_TIMED_OUT = 'P2028';

export function classifyDatabaseError(error: unknown): DatabaseFailure | null {
  const keyBusy = causes(error).find((e) => e instanceof KeyShareBusy);
  if (keyBusy) return { kind: 'key_busy', message: keyBusy.message };
  if (causes(error).some((e) => (e as Error).message.includes(POOL_ACQUIRE_TIMEOUT_MESSAGE))) {
    return { kind: 'busy', message: 'no database connection became free in time' };
  }
  if (causes(error).some((e) => (e as { code?: unknown }).code === PRISMA_TRANSACTION_TIMED_OUT)) {
    return { kind: 'busy', message: 'a transaction found no connection, or ran out of time' };
  }
  if (isConnectionFailure(error)) {
    return { kind: 'unavailable', message: 'the database cannot be reached or the connection was lost' };
  }
  const info = databaseErrorOf(error);
  if (!info) return null;
  const { code, message } = info;
  if (code === '57014')
    return { kind: message.includes('statement timeout') ? 'timeout' : 'cancelled', message };
  if (code.startsWith('22')) return { kind: 'invalid_value', message };
  if (code.startsWith('54')) return { kind: 'too_large', message };
  if (code === '40001' || code === '40P01' || code === '55P03') return { kind: 'busy', message };
  if (code.startsWith('08') || code.startsWith('53') || code.startsWith('57P')) {
    return { kind: 'unavailable', message };
  }
  return null;
}
