import { ApiClient } from '../lib/api';
import { recreateDatabase } from '../lib/database';
import { type BenchStack, newQueuePrefix, type Service, startBenchStack } from '../lib/stack';
import type { UploadsBenchConfig } from './config';

/**
 * The services of the run, started as `npm start` runs them (../lib/stack.ts): records-api once,
 * to create the base the uploads are for, and the upload-service once per case, with the
 * local-disk or the S3 driver.
 */

export const S3_BUCKET = 'recordbase-bench';
/** s3rver's one account. */
export const S3_KEYS = { accessKey: 'S3RVER', secretKey: 'S3RVER' };

/** Where the attachments go: the headers of `POST /fileupload`. */
export interface AttachmentTarget {
  baseId: string;
  tableId: string;
  fieldId: string;
}

export interface Stack {
  /** The services of the run, which share one environment (one ROOT_API_KEY, one FILE_TOKEN_SECRET). */
  services: BenchStack;
  rootKey: string;
  target: AttachmentTarget;
  databaseSeconds: number;
}

/**
 * Creates and migrates the benchmark database, then creates a base with a table `Docs` (Title,
 * Files: attachments) through records-api, which is stopped again: the uploads need only the rows.
 */
export async function prepareStack(config: UploadsBenchConfig): Promise<Stack> {
  const databaseSeconds = await recreateDatabase(config.databaseUrl);
  const services = await startBenchStack({
    databaseUrl: config.databaseUrl,
    redisUrl: config.redisUrl,
    queuePrefix: newQueuePrefix('uploads'),
    logLevel: config.serviceLogLevel,
    tuning: {},
    execArgv: { 'upload-service': config.serviceExecArgv },
    services: ['records-api'],
  });
  const api = services.service('records-api');
  try {
    const client = new ApiClient(`http://127.0.0.1:${api.port}`, services.rootKey);
    const base = await client.expect<{ id: string; tables: { id: string; fields: { id: string }[] }[] }>(
      201,
      'POST',
      '/bases',
      {
        name: 'uploads bench',
        tables: [
          {
            name: 'Docs',
            fields: [
              { name: 'Title', type: 'single_line_text' },
              { name: 'Files', type: 'attachments' },
            ],
          },
        ],
      },
    );
    const table = base.tables[0]!;
    return {
      services,
      rootKey: services.rootKey,
      target: { baseId: base.id, tableId: table.id, fieldId: table.fields[1]!.id },
      databaseSeconds,
    };
  } catch (error) {
    console.error(`--- records-api output (last 3000 characters):\n${api.output().slice(-3000)}`);
    throw error;
  } finally {
    await api.stop();
  }
}

export type StorageEnv = { driver: 'local'; dir: string } | { driver: 's3'; endpoint: string };

/** The upload-service with the given storage (the variables of apps/upload-service/src/config.ts). */
export function startUploadService(stack: Stack, storage: StorageEnv): Promise<Service> {
  const storageVars =
    storage.driver === 'local'
      ? { STORAGE_DRIVER: 'local', STORAGE_DIR: storage.dir }
      : {
          STORAGE_DRIVER: 's3',
          S3_ENDPOINT: storage.endpoint,
          S3_BUCKET,
          S3_ACCESS_KEY: S3_KEYS.accessKey,
          S3_SECRET_KEY: S3_KEYS.secretKey,
          S3_REGION: 'us-east-1',
        };
  return stack.services.start('upload-service', storageVars);
}
