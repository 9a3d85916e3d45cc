import { resolve } from 'node:path';
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

const S3_REQUIRED = ['S3_ENDPOINT', 'S3_BUCKET', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'] as const;

/**
 * The variables `createStorage` reads, for a service's env schema to extend. The S3 variables a
 * STORAGE_DRIVER=s3 needs are checked by `refineStorageEnv`, which the extending schema applies
 * with `.superRefine(refineStorageEnv)` (`.shape` carries no refinement).
 */
export const storageEnvSchema = z.object({
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
});
export type StorageConfig = z.infer<typeof storageEnvSchema>;

/** STORAGE_DRIVER=s3 requires the S3 endpoint, bucket and keys, each named when missing. */
export function refineStorageEnv(env: StorageConfig, ctx: z.RefinementCtx<StorageConfig>): void {
  if (env.STORAGE_DRIVER !== 's3') return;
  for (const name of S3_REQUIRED)
    if (env[name] === undefined)
      ctx.addIssue({ code: 'custom', path: [name], message: 'is required when STORAGE_DRIVER=s3' });
}
