import { commonEnvSchema, parseEnv, portSchema, webhookSecretKeySchema } from '@recordbase/server-kit/env';
import { z } from 'zod';

export const webhookDispatcherEnvSchema = commonEnvSchema.extend({
  PORT: portSchema(3002),
  HOST: z.string().default('0.0.0.0'),
  WEBHOOK_SECRET_KEY: webhookSecretKeySchema,
});
export type WebhookDispatcherConfig = z.infer<typeof webhookDispatcherEnvSchema>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): WebhookDispatcherConfig =>
  parseEnv(webhookDispatcherEnvSchema, env);
