import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, type Db } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import { stackSecrets } from '@recordbase/launcher/stack';
import { createLogger } from '@recordbase/server-kit/logger';
import { LocalDiskStorage, type ObjectStorage } from '@recordbase/storage';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import supertest from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { createApp, type UploadServiceDeps } from '../src/app';
import { createUploadLookups, type UploadLookups } from '../src/files/upload-lookups';

export interface Harness {
  api: TestAgent;
  db: Db;
  redis: Redis;
  rootKey: string;
  /** The FILE_TOKEN_SECRET the app verifies signed file links with. */
  fileTokenSecret: string;
  /** A fresh directory under the OS temp dir, removed by `close`. */
  scratchDir: string;
  /** The root of `storage`, a local-disk storage in `scratchDir`. */
  storageDir: string;
  storage: LocalDiskStorage;
  /** Another app on the same database and Redis, with configuration overrides and maybe another storage. */
  appWith(
    config: Partial<UploadServiceDeps['config']>,
    storage?: ObjectStorage,
    lookups?: UploadLookups,
  ): Express;
  /** Lookups of the harness's database that keep what they read from now on (they listen). */
  listeningLookups(): Promise<UploadLookups>;
  close(): Promise<void>;
}

/** The real app against a throwaway PostgreSQL database, the local Redis and a local-disk storage in a temporary dir. */
export async function startHarness(): Promise<Harness> {
  const testDb: TestDatabase = await createTestDatabase();
  const db = createDb(testDb.url, { maxConnections: 5 });
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    keyPrefix: `test:${randomBytes(6).toString('hex')}:`,
    maxRetriesPerRequest: 1,
  });
  const scratchDir = await mkdtemp(join(tmpdir(), 'upload-service-test-'));
  const storageDir = join(scratchDir, 'files');
  const storage = new LocalDiskStorage(storageDir);
  await storage.prepare();
  // A stack's secrets, as the launcher makes them for the services.
  const { ROOT_API_KEY: rootKey, FILE_TOKEN_SECRET: fileTokenSecret } = stackSecrets();
  const logger = createLogger('upload-service-test', 'silent');
  const appWith = (
    config: Partial<UploadServiceDeps['config']>,
    otherStorage: ObjectStorage = storage,
    lookups?: UploadLookups,
  ) =>
    createApp({
      db,
      redis,
      logger,
      storage: otherStorage,
      lookups,
      config: {
        ROOT_API_KEY: rootKey,
        FILE_TOKEN_SECRET: fileTokenSecret,
        // Tests upload in quick succession; those of the rate limits set their own.
        RATE_LIMIT_PER_SECOND: 10_000,
        RATE_LIMIT_BURST: 10_000,
        REQUESTS_IN_FLIGHT_PER_KEY: 10_000,
        UPLOAD_BYTES_PER_SECOND_PER_KEY: 1024 ** 4,
        UPLOAD_BYTES_BURST_PER_KEY: 1024 ** 4,
        ...config,
      },
    });
  return {
    api: supertest(appWith({})),
    db,
    redis,
    rootKey,
    fileTokenSecret,
    scratchDir,
    storageDir,
    storage,
    appWith,
    async listeningLookups() {
      const lookups = createUploadLookups({ prisma: db.prisma, pool: db.pool, logger });
      db.beforeClose(() => lookups.close());
      for (const giveUpAt = Date.now() + 10_000; !lookups.listening(); ) {
        if (Date.now() > giveUpAt) throw new Error('the upload lookups never listened');
        await new Promise((done) => setTimeout(done, 20));
      }
      return lookups;
    },
    async close() {
      redis.disconnect();
      await db.close();
      await testDb.drop();
      await rm(scratchDir, { recursive: true, force: true });
    },
  };
}
