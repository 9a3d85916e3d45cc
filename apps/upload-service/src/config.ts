import { resolve } from 'node:path';
import { commonEnvSchema, parseEnv, portSchema, publicApiEnvSchema } from '@recordbase/server-kit/env';
import { z } from 'zod';

export const uploadServiceEnvSchema = commonEnvSchema.extend(publicApiEnvSchema.shape).extend({
  PORT: portSchema(3001),
  HOST: z.string().default('0.0.0.0'),
  ROOT_API_KEY: z.string().min(20, { error: 'must be at least 20 characters' }).optional(),
  /** Where uploaded files are kept; relative paths are taken from the working directory. */
  STORAGE_DIR: z
    .string()
    .min(1, { error: 'must not be empty' })
    .default('./.data/files')
    .transform((dir) => resolve(dir)),
});
export type UploadServiceConfig = z.infer<typeof uploadServiceEnvSchema>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): UploadServiceConfig =>
  parseEnv(uploadServiceEnvSchema, env);
