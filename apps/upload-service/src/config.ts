import {
  commonEnvSchema,
  fileTokenEnvSchema,
  parseEnv,
  portSchema,
  publicApiEnvSchema,
} from '@recordbase/server-kit/env';
import { refineStorageEnv, storageEnvSchema } from '@recordbase/storage/env';
import { z } from 'zod';
import { DEFAULT_UPLOAD_BANDWIDTH, LARGEST_UPLOAD_BYTES } from './uploads/bandwidth';

/**
 * CORS_ORIGINS: the browser origins whose pages may call the upload and file routes (a FilePond
 * widget on a customer's site), comma-separated and compared exactly as browsers send them, or
 * `*` for any. Unset or empty allows none: no CORS headers at all.
 */
const corsOrigins = z
  .string()
  .default('')
  .transform((value, ctx): CorsOrigins => {
    const entries = value
      .split(',')
      .map((entry) => entry.trim())
      // A trailing comma or a blank entry is a slip of the pen, not an origin.
      .filter((entry) => entry.length > 0);
    if (entries.length === 1 && entries[0] === '*') return '*';
    for (const entry of entries) {
      const problem = originProblem(entry);
      if (problem) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(entry)} ${problem}` });
    }
    return [...new Set(entries)];
  });

export type CorsOrigins = '*' | readonly string[];

/** Why `entry` is not an origin as a browser's Origin header spells it, or null when it is one. */
function originProblem(entry: string): string | null {
  const example = 'scheme://host[:port] with no path, e.g. https://app.example.com';
  if (entry === '*') return 'cannot be listed with other origins: use * alone to allow any';
  if (!URL.canParse(entry)) return `is not an origin: use ${example}`;
  const url = new URL(entry);
  if (!['http:', 'https:'].includes(url.protocol)) return `is not an http(s) origin: use ${example}`;
  // Browsers send the lowercase host, no default port and no trailing slash; anything else would
  // silently never match.
  if (url.origin !== entry) return `is not an origin: use ${example} (did you mean ${url.origin}?)`;
  return null;
}

export const uploadServiceEnvSchema = commonEnvSchema
  .extend(publicApiEnvSchema.shape)
  .extend(fileTokenEnvSchema.shape)
  .extend({
    PORT: portSchema(3001),
    /**
     * This service's address as clients reach it (the gateway's, behind one), for the urls the
     * uploads answer; taken from each request when unset.
     */
    PUBLIC_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    /** Attachments no record refers to are deleted this long after their upload. */
    ORPHAN_FILE_GRACE_HOURS: z.coerce.number().positive().default(24),
    ROOT_API_KEY: z.string().min(20, { error: 'must be at least 20 characters' }).optional(),
    /**
     * Requests per API key, as records-api reads them: both count in the same Redis bucket per key,
     * so a key's budget is one for the whole installation (the README row checks the defaults agree).
     */
    RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(50),
    RATE_LIMIT_BURST: z.coerce.number().int().positive().default(100),
    /**
     * The bytes one API key may upload: a sustained rate and a burst, over every replica (in Redis).
     * The burst holds the largest upload, or an import file that size could never be sent.
     */
    UPLOAD_BYTES_PER_SECOND_PER_KEY: z.coerce
      .number({ error: 'must be a number of bytes' })
      .int({ error: 'must be a whole number of bytes' })
      .positive({ error: 'must be a positive number of bytes' })
      .default(DEFAULT_UPLOAD_BANDWIDTH.bytesPerSecond),
    UPLOAD_BYTES_BURST_PER_KEY: z.coerce
      .number({ error: 'must be a number of bytes' })
      .int({ error: 'must be a whole number of bytes' })
      .min(LARGEST_UPLOAD_BYTES, {
        error: `must be at least ${LARGEST_UPLOAD_BYTES} bytes, the largest upload (an import file and its multipart framing)`,
      })
      .max(Number.MAX_SAFE_INTEGER)
      .default(DEFAULT_UPLOAD_BANDWIDTH.burstBytes),
    /**
     * The most bytes one database's attachments may take in storage, or unset for no bound. Import
     * files belong to no database and are not counted.
     */
    STORAGE_QUOTA_BYTES_PER_DATABASE: z.preprocess(
      // An empty value (`STORAGE_QUOTA_BYTES_PER_DATABASE=` in a compose file) is no quota.
      (value) => (value === '' ? undefined : value),
      z.coerce
        .number({ error: 'must be a number of bytes' })
        .int({ error: 'must be a whole number of bytes' })
        .positive({ error: 'must be a positive number of bytes' })
        .max(Number.MAX_SAFE_INTEGER)
        .optional(),
    ),
    ...storageEnvSchema.shape,
    CORS_ORIGINS: corsOrigins,
  })
  .superRefine(refineStorageEnv);
export type UploadServiceConfig = z.infer<typeof uploadServiceEnvSchema>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): UploadServiceConfig =>
  parseEnv(uploadServiceEnvSchema, env);
