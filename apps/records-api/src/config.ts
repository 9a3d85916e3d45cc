import {
  commonEnvSchema,
  fileTokenEnvSchema,
  parseEnv,
  portSchema,
  publicApiEnvSchema,
  queuePrefixSchema,
  webhookSecretKeySchema,
} from '@recordbase/server-kit/env';
import { z } from 'zod';
import { DEFAULT_READ_INDEX_MIN_ROWS } from './domain/records/read-indexes';

export const recordsApiEnvSchema = commonEnvSchema
  .extend(publicApiEnvSchema.shape)
  .extend(fileTokenEnvSchema.shape)
  .extend({
    PORT: portSchema(3000),
    HOST: z.string().default('0.0.0.0'),
    ROOT_API_KEY: z.string().min(20, { error: 'must be at least 20 characters' }).optional(),
    RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(50),
    RATE_LIMIT_BURST: z.coerce.number().int().positive().default(100),
    /** The largest body of a record write (bulk, create, update); other routes have their own. */
    JSON_BODY_LIMIT: z.string().default('10mb'),
    WEBHOOK_SECRET_KEY: webhookSecretKeySchema,
    QUEUE_PREFIX: queuePrefixSchema,
    /** Tables with at least this many records get indexes on what their listings filter and sort. */
    READ_INDEX_MIN_ROWS: z.coerce.number().int().min(0).default(DEFAULT_READ_INDEX_MIN_ROWS),
  });
export type RecordsApiConfig = z.infer<typeof recordsApiEnvSchema>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): RecordsApiConfig =>
  parseEnv(recordsApiEnvSchema, env);
