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
