import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { recreateDatabase } from '../webhooks/database';
import {
  newQueuePrefix,
  newRootKey,
  type Service,
  type ServiceSettings,
  serviceEnv,
  startService,
} from '../webhooks/services';
import type { ImportsBenchConfig } from './config';

/**
 * The services of a run, started by @recordbase/launcher as `npm start` starts them (through
 * ../webhooks/services.ts): records-api and upload-service for the whole run, the import worker
 * afresh for every round (so that its idle RSS, the base of the growth measured, is the same each
 * time), all sharing one environment: the database, Redis, the queue prefix, ROOT_API_KEY,
 * FILE_TOKEN_SECRET and STORAGE_DIR (local disk), which upload-service writes and the worker reads.
 */

export interface Stack {
  settings: ServiceSettings;
  env: NodeJS.ProcessEnv;
  api: Service;
  uploads: Service;
  storageDir: string;
  databaseSeconds: number;
  databaseName: string;
}

export async function startStack(config: ImportsBenchConfig, scratch: string): Promise<Stack> {
  const databaseSeconds = await recreateDatabase(config.databaseUrl);
  const storageDir = join(scratch, 'files');
  await mkdir(storageDir, { recursive: true });
  const settings: ServiceSettings = {
    databaseUrl: config.databaseUrl,
    redisUrl: config.redisUrl,
    rootApiKey: newRootKey(),
    queuePrefix: newQueuePrefix().replace('webhooks', 'imports'),
    logLevel: config.serviceLogLevel,
    tuning: { STORAGE_DRIVER: 'local', STORAGE_DIR: storageDir },
    execArgv: { 'import-worker': config.workerExecArgv },
  };
  const env = serviceEnv(settings);
  const api = await startService('records-api', settings, env);
  let uploads: Service;
  try {
    uploads = await startService('upload-service', settings, env);
  } catch (error) {
    await api.stop();
    throw error;
  }
  return {
    settings,
    env,
    api,
    uploads,
    storageDir,
    databaseSeconds,
    databaseName: decodeURIComponent(new URL(config.databaseUrl).pathname.slice(1)),
  };
}

/** A fresh import worker; it logs at info (its "import finished" line) unless BENCH_WORKER_LOG says otherwise. */
export function startWorker(stack: Stack): Promise<Service> {
  return startService('import-worker', stack.settings, {
    ...stack.env,
    LOG_LEVEL: process.env.BENCH_WORKER_LOG || 'info',
  });
}

export async function stopStack(stack: Stack): Promise<void> {
  await Promise.all([stack.api.stop(), stack.uploads.stop()]);
}
