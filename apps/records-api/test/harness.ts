import { randomBytes } from 'node:crypto';
import { createDb, type Db, purgeSchemaTrash } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import { stackSecrets } from '@recordbase/launcher/stack';
import { createEventPublisher, createImportQueue } from '@recordbase/queues';
import { createLogger } from '@recordbase/server-kit/logger';
import { deleteKeysUnder } from '@recordbase/server-kit/redis-keys';
import { parseCidrList } from '@recordbase/server-kit/ssrf';
import { Redis } from 'ioredis';
import supertest from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { createApp } from '../src/app';

export interface Harness {
  api: TestAgent;
  /** The Express app itself, for tests that need a real listening server. */
  app: ReturnType<typeof createApp>;
  db: Db;
  rootKey: string;
  /** The app's FILE_TOKEN_SECRET, to check the file links it signs. */
  fileTokenSecret: string;
  /** The app's WEBHOOK_SECRET_KEY (32 random bytes), to check how webhook secrets are stored. */
  webhookSecretKey: Buffer;
  /** The prefix of the app's own Redis keys (rate limits, in-flight bounds). */
  redisPrefix: string;
  /** The BullMQ prefix the app publishes its events under. */
  queuePrefix: string;
  /** `Authorization` header value for a key. */
  bearer(key: string): string;
  close(): Promise<void>;
}

export interface HarnessOptions {
  ratePerSecond?: number;
  rateBurst?: number;
  authFailureBurst?: number;
  /** LONG_STATEMENT_YIELD_MS: statements running longer yield the CPU; off unless given. */
  longStatementYieldMs?: number;
  statementTimeoutMs?: number;
  acquireTimeoutMs?: number;
  maxConnections?: number;
  /** READ_INDEX_MIN_ROWS: tables this large get indexes on what is filtered and sorted. */
  readIndexMinRows?: number;
  /** SQL_STATEMENT_TIMEOUT, SQL_MAX_CONNECTIONS and SQL_MAX_RESULT_BYTES of read-only SQL. */
  sqlStatementTimeoutMs?: number;
  sqlMaxConnections?: number;
  sqlMaxResultBytes?: number;
  /** SQL_CONNECTIONS_PER_BASE: the query role's connection limit, and this process's per database. */
  sqlConnectionsPerBase?: number;
  /** UPLOAD_PUBLIC_URL: upload-service's address, whose `/files/` urls are uploaded files. */
  uploadPublicUrl?: string;
  /** REQUESTS_IN_FLIGHT_PER_KEY (out of the way unless given). */
  requestsInFlightPerKey?: number;
  /** CHANGE_STREAMS_PER_KEY (the default unless given). */
  changeStreamsPerKey?: number;
  /** SQL_IN_FLIGHT_PER_BASE (out of the way unless given). */
  sqlInFlightPerBase?: number;
  /** DB_CONNECTIONS_PER_KEY (out of the way unless given). */
  dbConnectionsPerKey?: number;
  /** DB_SECONDS_PER_MINUTE_PER_KEY (out of the way unless given). */
  dbSecondsPerMinutePerKey?: number;
  /** IMPORT_SECONDS_PER_MINUTE_PER_KEY (out of the way unless given). */
  importSecondsPerMinutePerKey?: number;
  /** A second app instance on the database (and with the root key) of this harness, which closing leaves in place. */
  sameDatabaseAs?: Harness;
}

/**
 * The real app against a throwaway PostgreSQL database and the local Redis. Each harness gets its
 * own Redis key prefix so rate limits of parallel test files never meet.
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const shared = options.sameDatabaseAs;
  const testDb: TestDatabase = shared
    ? {
        name: 'shared',
        url: (shared.db.pool.options as { connectionString: string }).connectionString,
        drop: async () => {},
      }
    : await createTestDatabase();
  const db = createDb(testDb.url, {
    maxConnections: options.maxConnections ?? 5,
    ...(options.statementTimeoutMs ? { statementTimeoutMs: options.statementTimeoutMs } : {}),
    ...(options.acquireTimeoutMs ? { acquireTimeoutMs: options.acquireTimeoutMs } : {}),
    ...(options.longStatementYieldMs ? { longStatementYieldMs: options.longStatementYieldMs } : {}),
  });
  // Replicas share Redis, and with it rate limits and in-flight bounds.
  const redisPrefix = shared?.redisPrefix ?? `test:${randomBytes(6).toString('hex')}:`;
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    keyPrefix: redisPrefix,
    maxRetriesPerRequest: 1,
  });
  // A stack's secrets, as the launcher makes them for the services.
  const secrets = stackSecrets();
  const rootKey = shared?.rootKey ?? secrets.ROOT_API_KEY;
  // Replicas share their secrets, as they do in production.
  const webhookSecretKey = shared?.webhookSecretKey ?? Buffer.from(secrets.WEBHOOK_SECRET_KEY, 'base64');
  const fileTokenSecret = secrets.FILE_TOKEN_SECRET;
  const queuePrefix = `test-${randomBytes(6).toString('hex')}`;
  const events = createEventPublisher({
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    prefix: queuePrefix,
    logger: createLogger('records-api-test', 'silent'),
  });
  const imports = createImportQueue({
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    prefix: queuePrefix,
    logger: createLogger('records-api-test', 'silent'),
  });
  const app = createApp({
    db,
    redis,
    events,
    imports,
    logger: createLogger('records-api-test', 'silent'),
    config: {
      ROOT_API_KEY: rootKey,
      RATE_LIMIT_PER_SECOND: options.ratePerSecond ?? 10_000,
      RATE_LIMIT_BURST: options.rateBurst ?? 10_000,
      REQUESTS_IN_FLIGHT_PER_KEY: options.requestsInFlightPerKey ?? 10_000,
      ...(options.changeStreamsPerKey !== undefined
        ? { CHANGE_STREAMS_PER_KEY: options.changeStreamsPerKey }
        : {}),
      SQL_IN_FLIGHT_PER_BASE: options.sqlInFlightPerBase ?? 1000,
      DB_CONNECTIONS_PER_KEY: options.dbConnectionsPerKey ?? 10_000,
      DB_SECONDS_PER_MINUTE_PER_KEY: options.dbSecondsPerMinutePerKey ?? 1_000_000,
      IMPORT_SECONDS_PER_MINUTE_PER_KEY: options.importSecondsPerMinutePerKey ?? 1_000_000,
      ...(options.acquireTimeoutMs ? { DB_ACQUIRE_TIMEOUT_MS: options.acquireTimeoutMs } : {}),
      JSON_BODY_LIMIT: '10mb',
      WEBHOOK_SECRET_KEY: webhookSecretKey.toString('base64'),
      TRUST_PROXY: 'loopback',
      AUTH_FAILURE_BURST: options.authFailureBurst ?? 10_000,
      AUTH_FAILURES_PER_MINUTE: 60,
      FILE_TOKEN_SECRET: fileTokenSecret,
      FILE_LINK_TTL_SECONDS: 3600,
      ...(options.readIndexMinRows !== undefined ? { READ_INDEX_MIN_ROWS: options.readIndexMinRows } : {}),
      ...(options.sqlStatementTimeoutMs ? { SQL_STATEMENT_TIMEOUT: options.sqlStatementTimeoutMs } : {}),
      ...(options.sqlMaxConnections ? { SQL_MAX_CONNECTIONS: options.sqlMaxConnections } : {}),
      ...(options.sqlMaxResultBytes ? { SQL_MAX_RESULT_BYTES: options.sqlMaxResultBytes } : {}),
      ...(options.sqlConnectionsPerBase ? { SQL_CONNECTIONS_PER_BASE: options.sqlConnectionsPerBase } : {}),
      ...(options.uploadPublicUrl ? { UPLOAD_PUBLIC_URL: options.uploadPublicUrl } : {}),
      // Local receivers, as the e2e stack and the dispatcher's tests allow them.
      WEBHOOK_ALLOWED_CIDRS: parseCidrList('127.0.0.1/32'),
    },
  });
  return {
    api: supertest(app),
    app,
    db,
    rootKey,
    fileTokenSecret,
    webhookSecretKey,
    bearer: (key) => `Bearer ${key}`,
    queuePrefix,
    redisPrefix,
    async close() {
      await events.close();
      await imports.close();
      // No dispatcher consumes the events these tests publish: their queue goes with the harness.
      await deleteKeysUnder(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', queuePrefix);
      redis.disconnect();
      await db.close();
      await testDb.drop();
    },
  };
}

export async function columnsOf(
  db: Db,
  schemaName: string,
  tableId: string,
): Promise<Record<string, string>> {
  const result = await db.pool.query<{ column_name: string; data_type: string }>(
    'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
    [schemaName, tableId],
  );
  return Object.fromEntries(result.rows.map((row) => [row.column_name, row.data_type]));
}

/**
 * The retention sweep's purge of the database trash, for one database's entries only: they are
 * made a day old, and the purge takes what is older than an hour. Returns how many went.
 */
export async function purgeSchemaTrashOf(db: Db, databaseId: string): Promise<number> {
  await db.pool.query(
    `UPDATE schema_trash SET deleted_at = deleted_at - interval '1 day' WHERE database_id = $1`,
    [databaseId],
  );
  return purgeSchemaTrash(db.pool, 3_600_000, 1000);
}

export function schemaNameOf(databaseId: string): string {
  return `base_${databaseId.replace(/-/g, '')}`;
}

/** Creates a database (with tables, if the body has them) as root; the answer must be 201. */
export function createBase(h: Harness, body: object) {
  return h.api.post('/api/v1/bases').set('Authorization', h.bearer(h.rootKey)).send(body).expect(201);
}

/**
 * A fingerprint of everything the API can write: every metadata table and every physical table of
 * every database. Equal fingerprints before and after a refused request show it wrote nothing.
 * Bookkeeping that reads may touch is left out: a key's last use, and how the row-count deltas of
 * a table are folded (their sum is kept).
 */
export async function databaseSnapshot(db: Db): Promise<Record<string, string>> {
  const tables = await db.pool.query<{ schema: string; name: string }>(
    `SELECT schemaname AS schema, tablename AS name FROM pg_tables
      WHERE schemaname = 'public' OR schemaname LIKE 'base\\_%' ORDER BY 1, 2`,
  );
  const snapshot: Record<string, string> = {};
  for (const { schema, name } of tables.rows) {
    const ref = `"${schema}"."${name}"`;
    const query =
      name === 'table_row_counts'
        ? `SELECT coalesce(string_agg(table_id || '=' || total, ',' ORDER BY table_id), '') AS digest
             FROM (SELECT table_id, sum(delta) AS total FROM ${ref} GROUP BY table_id) t`
        : `SELECT md5(coalesce(string_agg((to_jsonb(t) - 'last_used_at')::text, ',' ORDER BY (to_jsonb(t) - 'last_used_at')::text), '')) AS digest FROM ${ref} t`;
    snapshot[`${schema}.${name}`] = (await db.pool.query<{ digest: string }>(query)).rows[0]!.digest;
  }
  return snapshot;
}

/** The outbox's last sequence number (0 when empty): read before a write to see its events after. */
export async function lastOutboxSeq(db: Db): Promise<string> {
  const { rows } = await db.pool.query<{ seq: string }>(
    'SELECT COALESCE(max(seq), 0)::text AS seq FROM outbox_events',
  );
  return rows[0]!.seq;
}
