import { ApiClient } from '../records/api';
import { recreateDatabase } from '../webhooks/database';
import {
  newQueuePrefix,
  newRootKey,
  type Service,
  type ServiceSettings,
  serviceEnv,
  startService,
} from '../webhooks/services';
import type { UploadsBenchConfig } from './config';

/**
 * The services of the run, started as `npm start` runs them (../webhooks/services.ts): records-api
 * once, to create the base the uploads are for, and the upload-service once per case, with the
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
  settings: ServiceSettings;
  /** The environment every service of the run shares (one ROOT_API_KEY, one FILE_TOKEN_SECRET). */
  env: NodeJS.ProcessEnv;
  target: AttachmentTarget;
  databaseSeconds: number;
}

/**
 * Creates and migrates the benchmark database, then creates a base with a table `Docs` (Title,
 * Files: attachments) through records-api, which is stopped again: the uploads need only the rows.
 */
export async function prepareStack(config: UploadsBenchConfig): Promise<Stack> {
  const databaseSeconds = await recreateDatabase(config.databaseUrl);
  const settings: ServiceSettings = {
    databaseUrl: config.databaseUrl,
    redisUrl: config.redisUrl,
    rootApiKey: newRootKey(),
    queuePrefix: newQueuePrefix(),
    logLevel: config.serviceLogLevel,
    tuning: {},
    execArgv: { 'upload-service': config.serviceExecArgv },
  };
  const env = serviceEnv(settings);
  const api = await startService('records-api', settings, env);
  try {
    const client = new ApiClient(`http://127.0.0.1:${api.port}`, settings.rootApiKey);
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
      settings,
      env,
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
  return startService('upload-service', stack.settings, { ...stack.env, ...storageVars });
}
