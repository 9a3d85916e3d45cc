import {
  commonEnvSchema,
  importTimeEnvSchema,
  parseEnv,
  portSchema,
  queuePrefixSchema,
  type WithQueuePrefix,
  withQueuePrefix,
} from '@recordbase/server-kit/env';
import { refineStorageEnv, storageEnvSchema } from '@recordbase/storage/env';
import { z } from 'zod';

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
