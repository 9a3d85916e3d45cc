import {
  commonEnvSchema,
  parseEnv,
  portSchema,
  queuePrefixSchema,
  type WithQueuePrefix,
  withQueuePrefix,
} from '@recordbase/server-kit/env';
import { refineStorageEnv, storageEnvSchema } from '@recordbase/storage/env';
import { z } from 'zod';

/**
 * A sixth of the worker's time, on average, for one key: a file of a few megabytes a minute, or a
 * 50 MB one now and then, with the rest of the worker's time for every other key.
 */
export const DEFAULT_IMPORT_SECONDS_PER_MINUTE_PER_KEY = 10;

/**
 * Seconds of the import worker's time one API key's imports may take a minute (the root key's
 * aside): records-api refuses to start an import of a key that has spent them, the worker spends
 * them as its runs end. The same in both.
 */
export const importTimeEnvSchema = z.object({
  IMPORT_SECONDS_PER_MINUTE_PER_KEY: z.coerce
    .number()
    .positive()
    .max(1_000_000)
    .default(DEFAULT_IMPORT_SECONDS_PER_MINUTE_PER_KEY),
});

/** The import worker's environment: the database, Redis, the job queue's prefix and the file storage. */
export const importWorkerEnvSchema = commonEnvSchema
  .extend(storageEnvSchema.shape)
  .extend(importTimeEnvSchema.shape)
  .extend({
    /** Health, readiness and metrics only. */
    PORT: portSchema(3003),
    QUEUE_PREFIX: queuePrefixSchema,
    /** How long a job's lock lasts unrenewed: a killed worker's import is taken up again after it. */
    IMPORT_JOB_LOCK_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
    /** The worker's CPU priority (Unix niceness, 0 to 19): 10 yields to the services answering requests. */
    IMPORT_WORKER_NICENESS: z.coerce.number().int().min(0).max(19).default(10),
  })
  .superRefine(refineStorageEnv);
export type ImportWorkerConfig = WithQueuePrefix<z.infer<typeof importWorkerEnvSchema>>;

export const loadImportWorkerConfig = (env: NodeJS.ProcessEnv = process.env): ImportWorkerConfig =>
  withQueuePrefix(parseEnv(importWorkerEnvSchema, env));
