import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import { REPO_ROOT } from '@recordbase/launcher';
import { type RunningStack, stackEnv, startStack } from '@recordbase/launcher/stack';
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
  const storageDir = join(REPO_ROOT, '.data', 'client-tests', randomBytes(6).toString('hex'));
  let stack: RunningStack;
  try {
    stack = await startStack({
      env: stackEnv({
        databaseUrl: database.url,
        storageDir,
        queuePrefix: `client-${randomBytes(6).toString('hex')}`,
        unbounded: true,
        env,
      }),
      services: ['records-api', 'upload-service'],
    });
  } catch (error) {
    await database.drop();
    throw error;
  }
  const { rootKey, apiUrl } = stack;
  const uploadUrl = `http://127.0.0.1:${stack.ports['upload-service']}`;
  return {
    rootKey,
    apiUrl,
    uploadUrl,
    client: (options = {}) => new RecordbaseClient({ apiUrl, uploadUrl, apiKey: rootKey, ...options }),
    async stop() {
      await stack.stopAll();
      await database.drop();
      await rm(storageDir, { recursive: true, force: true });
    },
  };
}
