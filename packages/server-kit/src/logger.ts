import pino from 'pino';
import { clip } from './errors';

export type Logger = pino.Logger;

/**
 * An error's texts in a log line: PostgreSQL's errors carry the values they quote (up to 1 GB) in
 * their message, detail and query, so each string of a logged error is clipped.
 */
const MAX_LOGGED_ERROR_CHARS = 4000;

/** Causes nest a few levels at most; deeper, nothing of interest is left. */
const MAX_CLIPPED_DEPTH = 4;

function clipped(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return clip(value, MAX_LOGGED_ERROR_CHARS);
  if (typeof value !== 'object' || value === null || depth >= MAX_CLIPPED_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => clipped(item, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) copy[name] = clipped(item, depth + 1);
  return copy;
}

const clippedError = (error: unknown): unknown => clipped(pino.stdSerializers.err(error as Error), 0);

/** JSON logs; credentials are redacted wherever they might appear, errors' texts clipped. */
export function createLogger(
  name: string,
  level = process.env.LOG_LEVEL ?? 'info',
  destination?: pino.DestinationStream,
): Logger {
  const options: pino.LoggerOptions = {
    name,
    level,
    serializers: { err: clippedError, error: clippedError },
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.secret', '*.key', 'secret', 'key'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
