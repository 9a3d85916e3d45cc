import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { newSecretKey } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import { freePort, REPO_ROOT, type RunningService, startService, stopAll } from '@recordbase/launcher';
import { RecordbaseClient, type RecordbaseClientOptions } from '../src/index';

/**
 * records-api and upload-service as real processes (started as `npm start` starts them) on free
 * ports against a throwaway database: what the client's own tests talk to.
 */
export interface Services {
  rootKey: string;
  apiUrl: string;
  uploadUrl: string;
  client(options?: Partial<RecordbaseClientOptions>): RecordbaseClient;
  stop(): Promise<void>;
}

export async function startServices(env: Record<string, string> = {}): Promise<Services> {
  const database: TestDatabase = await createTestDatabase();
  const rootKey = `root_${randomBytes(24).toString('hex')}`;
  const storageDir = join(REPO_ROOT, '.data', 'client-tests', randomBytes(6).toString('hex'));
  const ports = { api: await freePort(), upload: await freePort() };
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    ROOT_API_KEY: rootKey,
    WEBHOOK_SECRET_KEY: newSecretKey(),
    FILE_TOKEN_SECRET: randomBytes(32).toString('base64url'),
    STORAGE_DIR: storageDir,
    QUEUE_PREFIX: `client-${randomBytes(6).toString('hex')}`,
    RATE_LIMIT_PER_SECOND: '100000',
    RATE_LIMIT_BURST: '100000',
    REQUESTS_IN_FLIGHT_PER_KEY: '100000',
    DB_CONNECTIONS_PER_KEY: '10000',
    DB_SECONDS_PER_MINUTE_PER_KEY: '1000000',
    IMPORT_SECONDS_PER_MINUTE_PER_KEY: '1000000',
    SQL_IN_FLIGHT_PER_BASE: '1000',
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    ...env,
  };
  const services: RunningService[] = [];
  try {
    services.push(
      ...(await Promise.all([
        startService({ name: 'records-api', port: ports.api, env: childEnv, output: 'pipe' }),
        startService({ name: 'upload-service', port: ports.upload, env: childEnv, output: 'pipe' }),
      ])),
    );
  } catch (error) {
    await database.drop();
    throw error;
  }
  const apiUrl = `http://127.0.0.1:${ports.api}/api/v1`;
  const uploadUrl = `http://127.0.0.1:${ports.upload}`;
  return {
    rootKey,
    apiUrl,
    uploadUrl,
    client: (options = {}) => new RecordbaseClient({ apiUrl, uploadUrl, apiKey: rootKey, ...options }),
    async stop() {
      await stopAll(services);
      await database.drop();
      await rm(storageDir, { recursive: true, force: true });
    },
  };
}
