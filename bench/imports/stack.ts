import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { recreateDatabase } from '../lib/database';
import { type BenchStack, newQueuePrefix, type Service, startBenchStack } from '../lib/stack';
import type { ImportsBenchConfig } from './config';

/**
 * The services of a run (../lib/stack.ts): records-api and upload-service for the whole run, the
 * import worker afresh for every round (so that its idle RSS, the base of the growth measured, is
 * the same each time), all sharing one environment: the database, Redis, the queue prefix,
 * ROOT_API_KEY, FILE_TOKEN_SECRET and STORAGE_DIR (local disk), which upload-service writes and
 * the worker reads.
 */

export interface Stack {
  services: BenchStack;
  rootKey: string;
  queuePrefix: string;
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
  const queuePrefix = newQueuePrefix('imports');
  const services = await startBenchStack({
    databaseUrl: config.databaseUrl,
    redisUrl: config.redisUrl,
    queuePrefix,
    logLevel: config.serviceLogLevel,
    tuning: { STORAGE_DRIVER: 'local', STORAGE_DIR: storageDir },
    execArgv: { 'import-worker': config.workerExecArgv },
    services: ['records-api', 'upload-service'],
  });
  return {
    services,
    rootKey: services.rootKey,
    queuePrefix,
    api: services.service('records-api'),
    uploads: services.service('upload-service'),
    storageDir,
    databaseSeconds,
    databaseName: decodeURIComponent(new URL(config.databaseUrl).pathname.slice(1)),
  };
}

/** A fresh import worker; it logs at info (its "import finished" line) unless BENCH_WORKER_LOG says otherwise. */
export function startWorker(stack: Stack): Promise<Service> {
  return stack.services.start('import-worker', { LOG_LEVEL: process.env.BENCH_WORKER_LOG || 'info' });
}

export async function stopStack(stack: Stack): Promise<void> {
  await stack.services.stop();
}
