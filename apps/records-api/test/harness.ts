import { randomBytes } from 'node:crypto';
import { createDb, type Db } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import { createLogger } from '@recordbase/server-kit/logger';
import { Redis } from 'ioredis';
import supertest from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { createApp } from '../src/app';

export interface Harness {
  api: TestAgent;
  db: Db;
  rootKey: string;
  /** The app's WEBHOOK_SECRET_KEY (32 random bytes), to check how webhook secrets are stored. */
  webhookSecretKey: Buffer;
  /** `Authorization` header value for a key. */
  bearer(key: string): string;
  close(): Promise<void>;
}

export interface HarnessOptions {
  ratePerSecond?: number;
  rateBurst?: number;
}

/**
 * The real app against a throwaway PostgreSQL database and the local Redis. Each harness gets its
 * own Redis key prefix so rate limits of parallel test files never meet.
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const testDb: TestDatabase = await createTestDatabase();
  const db = createDb(testDb.url, { maxConnections: 5 });
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    keyPrefix: `test:${randomBytes(6).toString('hex')}:`,
    maxRetriesPerRequest: 1,
  });
  const rootKey = `root_${randomBytes(24).toString('hex')}`;
  const webhookSecretKey = randomBytes(32);
  const app = createApp({
    db,
    redis,
    logger: createLogger('records-api-test', 'silent'),
    config: {
      ROOT_API_KEY: rootKey,
      RATE_LIMIT_PER_SECOND: options.ratePerSecond ?? 10_000,
      RATE_LIMIT_BURST: options.rateBurst ?? 10_000,
      JSON_BODY_LIMIT: '10mb',
      WEBHOOK_SECRET_KEY: webhookSecretKey.toString('base64'),
    },
  });
  return {
    api: supertest(app),
    db,
    rootKey,
    webhookSecretKey,
    bearer: (key) => `Bearer ${key}`,
    async close() {
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

export function schemaNameOf(databaseId: string): string {
  return `base_${databaseId.replace(/-/g, '')}`;
}

/** Creates a database (with tables, if the body has them) as root; the answer must be 201. */
export function createBase(h: Harness, body: object) {
  return h.api.post('/api/v1/bases').set('Authorization', h.bearer(h.rootKey)).send(body).expect(201);
}
