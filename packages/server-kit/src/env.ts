import { z } from 'zod';
import { DEFAULT_REQUESTS_IN_FLIGHT_PER_KEY } from './in-flight';
import { parseCidrList } from './ssrf';

/**
 * Parses environment variables once at start-up. A bad value stops the process with a message
 * naming the variable, never a stack trace from deep inside.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
  throw new Error(`Invalid configuration:\n${problems.join('\n')}`);
}

export const portSchema = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

const postgresUrl = z.string().refine((value) => /^postgres(ql)?:\/\//.test(value), {
  error: 'must be a postgres:// or postgresql:// URL',
});
const redisUrl = z
  .string()
  .refine((value) => /^rediss?:\/\//.test(value), { error: 'must be a redis:// or rediss:// URL' });

const milliseconds = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

/** Variables every service reads. */
export const commonEnvSchema = z.object({
  DATABASE_URL: postgresUrl.default('postgresql://postgres@127.0.0.1:5432/recordbase'),
  REDIS_URL: redisUrl.default('redis://127.0.0.1:6379'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Longest any database statement may run (schema changes get longer). */
  STATEMENT_TIMEOUT_MS: milliseconds(15_000),
  /**
   * A statement running longer than this yields the CPU to quick ones until it ends, where
   * PostgreSQL runs on this machine and the service may lower its backends' priority (the db
   * package's long-statements.ts). 0: never.
   */
  LONG_STATEMENT_YIELD_MS: z.coerce.number().int().min(0).default(100),
  /** Longest a request waits for a free database connection before a 503. */
  DB_ACQUIRE_TIMEOUT_MS: milliseconds(5_000),
  /**
   * The address each service binds. Loopback by default, so `npm start` on a laptop exposes
   * nothing; the images set 0.0.0.0, the container's network being the boundary there.
   */
  HOST: z.string().min(1, { error: 'must not be empty' }).default('127.0.0.1'),
  /**
   * How long a client may take to send a request's headers, and its whole request: a client
   * trickling either (slowloris) holds a connection no longer than this. Node's own defaults.
   */
  HTTP_HEADERS_TIMEOUT_MS: milliseconds(60_000),
  HTTP_REQUEST_TIMEOUT_MS: milliseconds(300_000),
});

/**
 * BullMQ key prefix in Redis: records-api publishes events and imports under it, the dispatcher
 * and the import worker consume them. Unset, it is derived from the database name (see
 * `defaultQueuePrefix`), so two installations sharing one Redis never take each other's jobs.
 */
export const queuePrefixSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.-]+$/, { error: 'must be letters, digits, _ . or -' })
  .optional();

/**
 * `rb-<database name>`: every service of one installation reads the same DATABASE_URL, so they
 * agree on it without further settings, and installations on different databases differ. The
 * name is PostgreSQL's: the URL's path, or the user name when the path is empty.
 */
export function defaultQueuePrefix(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const name =
    decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username) || 'postgres';
  // Redis keys take anything, but BullMQ splits them on ':'; keep to the characters QUEUE_PREFIX allows.
  return `rb-${name.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
}

/** A parsed config with QUEUE_PREFIX filled in from DATABASE_URL when it was not set. */
export type WithQueuePrefix<T extends { QUEUE_PREFIX?: string | undefined }> = Omit<T, 'QUEUE_PREFIX'> & {
  QUEUE_PREFIX: string;
};

export function withQueuePrefix<T extends { DATABASE_URL: string; QUEUE_PREFIX?: string | undefined }>(
  config: T,
): WithQueuePrefix<T> {
  return { ...config, QUEUE_PREFIX: config.QUEUE_PREFIX ?? defaultQueuePrefix(config.DATABASE_URL) };
}

/**
 * Variables of the services that take API keys. TRUST_PROXY is Express's `trust proxy` setting:
 * which hops' X-Forwarded-For to believe when telling clients apart (the default believes only a
 * proxy on this machine, such as the nginx gateway).
 */
export const publicApiEnvSchema = z.object({
  TRUST_PROXY: z.string().default('loopback'),
  AUTH_FAILURE_BURST: z.coerce.number().int().positive().default(20),
  AUTH_FAILURES_PER_MINUTE: z.coerce.number().positive().default(60),
  /** Requests of one API key in flight at once, across every replica (in-flight.ts). */
  REQUESTS_IN_FLIGHT_PER_KEY: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(DEFAULT_REQUESTS_IN_FLIGHT_PER_KEY),
});

/** Express's `trust proxy` value from TRUST_PROXY: true/false, a hop count, or addresses/names. */
export function trustProxySetting(value: string): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  return /^\d+$/.test(value) ? Number(value) : value;
}
export type CommonEnv = z.infer<typeof commonEnvSchema>;

/** 32 bytes, base64: the key that encrypts webhook signing secrets at rest. */
export const webhookSecretKeySchema = z
  .string({ error: 'is required (32 random bytes, base64; `npm start` generates one)' })
  .refine((value) => Buffer.from(value, 'base64').length === 32, {
    error: 'must be 32 bytes, base64-encoded',
  });

/**
 * WEBHOOK_ALLOWED_CIDRS: ranges webhooks may reach although private, loopback or link-local (a
 * comma list; tests use 127.0.0.1/32). records-api checks a URL against it when a webhook is
 * registered, the dispatcher on every delivery: both must read it the same way.
 */
export const webhookAllowedCidrsSchema = z
  .string()
  .default('')
  .transform((text, context) => {
    try {
      return parseCidrList(text);
    } catch (error) {
      context.addIssue({ code: 'custom', message: error instanceof Error ? error.message : String(error) });
      return z.NEVER;
    }
  });

/** Shared by records-api (signs file links) and upload-service (honours them). */
export const fileTokenEnvSchema = z.object({
  FILE_TOKEN_SECRET: z
    .string({ error: 'is required (32 random characters or more; `npm start` generates one)' })
    .min(32, { error: 'must be at least 32 characters' }),
  /** How long a signed file link works (seconds; short values serve tests of expiry). */
  FILE_LINK_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .default(3600),
});

/**
 * A sixth of the worker's time, on average, for one key: a file of a few megabytes a minute, or a
 * 50 MB one now and then, with the rest of the worker's time for every other key.
 */
export const DEFAULT_IMPORT_SECONDS_PER_MINUTE_PER_KEY = 10;

/**
 * Seconds of the import worker's time one API key's imports may take a minute (the root key's
 * aside): records-api refuses to start an import of a key that has spent them, the worker spends
 * them as its runs end. The same in both.
 */
export const importTimeEnvSchema = z.object({
  IMPORT_SECONDS_PER_MINUTE_PER_KEY: z.coerce
    .number()
    .positive()
    .max(1_000_000)
    .default(DEFAULT_IMPORT_SECONDS_PER_MINUTE_PER_KEY),
});
