import { resolve } from 'node:path';
import {
  commonEnvSchema,
  fileTokenEnvSchema,
  parseEnv,
  portSchema,
  publicApiEnvSchema,
} from '@recordbase/server-kit/env';
import { z } from 'zod';

/** An http(s) origin: credentials belong in the key variables, never in a URL that gets logged. */
const s3Endpoint = z.string().refine(
  (value) => {
    if (!URL.canParse(value)) return false;
    const url = new URL(value);
    return (
      ['http:', 'https:'].includes(url.protocol) &&
      !url.username &&
      !url.password &&
      url.pathname === '/' &&
      !url.search
    );
  },
  { error: 'must be an http:// or https:// URL with no path and no credentials, e.g. http://127.0.0.1:9000' },
);

/** S3's bucket naming rules (the DNS-compatible subset every S3 implementation accepts). */
const s3Bucket = z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, {
  error: 'must be 3-63 of a-z 0-9 . - (a valid S3 bucket name)',
});

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

const S3_REQUIRED = ['S3_ENDPOINT', 'S3_BUCKET', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'] as const;

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
    HOST: z.string().default('0.0.0.0'),
    ROOT_API_KEY: z.string().min(20, { error: 'must be at least 20 characters' }).optional(),
    /** Where uploaded files go: a directory (`local`) or an S3 bucket (`s3`). */
    STORAGE_DRIVER: z.enum(['local', 's3']).default('local'),
    /** Where uploaded files are kept; relative paths are taken from the working directory. */
    STORAGE_DIR: z
      .string()
      .min(1, { error: 'must not be empty' })
      .default('./.data/files')
      .transform((dir) => resolve(dir)),
    S3_ENDPOINT: s3Endpoint.optional(),
    S3_BUCKET: s3Bucket.optional(),
    // Messages about the keys never repeat their values (zod's do not).
    S3_ACCESS_KEY: z.string().min(1, { error: 'must not be empty' }).optional(),
    S3_SECRET_KEY: z.string().min(1, { error: 'must not be empty' }).optional(),
    S3_REGION: z.string().min(1, { error: 'must not be empty' }).default('us-east-1'),
    /**
     * 5 MiB part buffers shared by all S3 uploads in progress: they bound the memory uploads take
     * (4 = 20 MiB); beyond that many parts at once, uploads wait for a free buffer.
     */
    S3_UPLOAD_BUFFERS: z.coerce.number().int().min(1).max(1024).default(4),
    CORS_ORIGINS: corsOrigins,
  })
  .superRefine((env, ctx) => {
    if (env.STORAGE_DRIVER !== 's3') return;
    for (const name of S3_REQUIRED)
      if (env[name] === undefined)
        ctx.addIssue({ code: 'custom', path: [name], message: 'is required when STORAGE_DRIVER=s3' });
  });
export type UploadServiceConfig = z.infer<typeof uploadServiceEnvSchema>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): UploadServiceConfig =>
  parseEnv(uploadServiceEnvSchema, env);
