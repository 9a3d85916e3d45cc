import { DEFAULT_READ_INDEX_MIN_ROWS } from '@recordbase/domain/records/read-indexes';
import { SQL_DEFAULTS } from '@recordbase/domain/sql/query';
import {
  commonEnvSchema,
  fileTokenEnvSchema,
  importTimeEnvSchema,
  parseEnv,
  portSchema,
  publicApiEnvSchema,
  queuePrefixSchema,
  type WithQueuePrefix,
  webhookAllowedCidrsSchema,
  webhookSecretKeySchema,
  withQueuePrefix,
} from '@recordbase/server-kit/env';
import { z } from 'zod';
import { DEFAULT_STREAMS_PER_KEY } from './http/changes.routes';

/**
 * Two at once: a key's slow statements take at most two of PostgreSQL's CPUs' turns, and its
 * quick ones queue for a few milliseconds.
 */
export const DEFAULT_DB_CONNECTIONS_PER_KEY = 2;

/**
 * A quarter of a connection's time, on average: a key's slow statements take at most that of the
 * database's CPUs once it has spent the minute's budget, which a key paging or writing at human
 * or even script speed never does (at its rate limit of 50 requests a second, a request may hold
 * a connection 5 ms on average). On a machine of two cores, half a connection let one tenant's
 * slow statements more than double every other tenant's p99 (bench/soak with a hostile tenant).
 */
export const DEFAULT_DB_SECONDS_PER_MINUTE_PER_KEY = 15;

export const recordsApiEnvSchema = commonEnvSchema
  .extend(publicApiEnvSchema.shape)
  .extend(importTimeEnvSchema.shape)
  .extend(fileTokenEnvSchema.shape)
  .extend({
    PORT: portSchema(3000),
    /**
     * Processes sharing the port; unset, one per core (defaultProcesses). The per-process bounds
     * below (DB_CONNECTIONS_PER_KEY, SQL_MAX_CONNECTIONS, the pool) are divided among them.
     */
    RECORDS_API_PROCESSES: z.coerce.number().int().min(1).max(16).optional(),
    ROOT_API_KEY: z.string().min(20, { error: 'must be at least 20 characters' }).optional(),
    RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(50),
    RATE_LIMIT_BURST: z.coerce.number().int().positive().default(100),
    /**
     * upload-service's address as clients reach it (its PUBLIC_URL): only attachment urls of
     * `{it}/files/` are uploaded files, whose readers get signed links. Unset: those of the host
     * each request reached, on any port.
     */
    UPLOAD_PUBLIC_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    /** Change streams (GET …/changes/stream) one API key may hold open at once, every replica together. */
    CHANGE_STREAMS_PER_KEY: z.coerce.number().int().min(1).max(100_000).default(DEFAULT_STREAMS_PER_KEY),
    /** The largest body of a record write (bulk, create, update); other routes have their own. */
    JSON_BODY_LIMIT: z.string().default('10mb'),
    WEBHOOK_SECRET_KEY: webhookSecretKeySchema,
    /** Ranges a webhook's URL may resolve to although private (the dispatcher's setting, read alike). */
    WEBHOOK_ALLOWED_CIDRS: webhookAllowedCidrsSchema,
    QUEUE_PREFIX: queuePrefixSchema,
    /** Tables with at least this many records get indexes on what their listings filter and sort. */
    READ_INDEX_MIN_ROWS: z.coerce.number().int().min(0).default(DEFAULT_READ_INDEX_MIN_ROWS),
    /** Longest a read-only SQL query may run, in milliseconds. */
    SQL_STATEMENT_TIMEOUT: z.coerce
      .number()
      .int()
      .min(100)
      .max(600_000)
      .default(SQL_DEFAULTS.statementTimeoutMs),
    /** Connections this process holds for SQL queries, across all databases. */
    SQL_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1000).default(SQL_DEFAULTS.maxConnections),
    /** Connections one database's queries may hold at once, across all processes (its role's limit). */
    SQL_CONNECTIONS_PER_BASE: z.coerce
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(SQL_DEFAULTS.connectionsPerBase),
    /**
     * Connections of this process one API key's record requests and SQL queries hold at once;
     * its further requests wait their turn (DB_ACQUIRE_TIMEOUT_MS, then 429).
     */
    DB_CONNECTIONS_PER_KEY: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(DEFAULT_DB_CONNECTIONS_PER_KEY),
    /**
     * Seconds of database time (connections held by its record requests and SQL queries) one API
     * key may spend a minute, across every replica: all at once, then as it refills.
     */
    DB_SECONDS_PER_MINUTE_PER_KEY: z.coerce
      .number()
      .positive()
      .max(1_000_000)
      .default(DEFAULT_DB_SECONDS_PER_MINUTE_PER_KEY),
    /** SQL queries of one database, and of one API key, in flight at once across every replica. */
    SQL_IN_FLIGHT_PER_BASE: z.coerce.number().int().min(1).max(1000).default(SQL_DEFAULTS.inFlightPerBase),
    /** Largest result of one SQL query (the values' text); rows past it are left out, `truncated`. */
    SQL_MAX_RESULT_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .default(10 * 1024 * 1024),
  });
export type RecordsApiConfig = WithQueuePrefix<z.infer<typeof recordsApiEnvSchema>>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): RecordsApiConfig =>
  withQueuePrefix(parseEnv(recordsApiEnvSchema, env));
