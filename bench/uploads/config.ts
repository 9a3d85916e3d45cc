import { tmpdir } from 'node:os';
import { MAX_ATTACHMENT_BYTES } from '@recordbase/contracts/uploads';

/** Settings of the uploads benchmark, from the environment (all optional). */

/**
 * What receives the file. `local` and `s3` are the upload-service with either storage driver; the
 * others are ceilings measured in the same run: `cp` (the file copied on the same disk, then
 * fsynced), `stream` (the same bytes sent over HTTP to a trivial Node server that writes them to
 * disk and fsyncs) and `s3rver` (the same bytes PUT straight into the same kind of s3rver).
 */
export const TARGETS = ['cp', 'stream', 'local', 's3', 's3rver'] as const;
export type Target = (typeof TARGETS)[number];

export interface UploadsBenchConfig {
  /** The benchmark's own database, created, migrated and dropped by every run. */
  databaseUrl: string;
  redisUrl: string;
  /** Size of the attachment, bytes. */
  fileBytes: number;
  /** Measured uploads of one case (split among its workers). */
  uploadsPerCase: number;
  /** Uploads at concurrency 1 before each case, not measured (the first is downloaded and compared). */
  warmupUploads: number;
  /** Rounds of every case; the report shows medians. */
  repeats: number;
  concurrencies: number[];
  targets: Target[];
  /** How often VmRSS is sampled. */
  rssIntervalMs: number;
  /** Before each case, wait until the machine is less busy than this many cores over a second ... */
  quietCores: number;
  /** ... but no longer than this. */
  quietWaitMs: number;
  /** Before each case, wait until the records benchmark is not running. */
  waitForOtherBench: boolean;
  /** Where the file, the stored uploads and s3rver's files go (one directory, removed at the end). */
  tmpRoot: string;
  /** LOG_LEVEL of the services (their output is shown when a case fails). */
  serviceLogLevel: string;
  /** Extra node flags of the upload-service child, such as `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
  serviceExecArgv: string[];
  /** Rewrite the "## uploads" section of bench/README.md and uploads/results.json. */
  writeReadme: boolean;
}

function numberFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}

function listFrom<T>(name: string, fallback: string, parse: (item: string) => T): T[] {
  const items = (process.env[name] || fallback)
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  if (items.length === 0) throw new Error(`${name} is empty`);
  return items.map(parse);
}

/**
 * The contract's limit: 20 MB, i.e. MAX_ATTACHMENT_BYTES = 20 MiB, inclusive (multer gives busboy
 * the limit + 1, so a file of exactly the limit is accepted; the run checks that one byte more is
 * refused). The largest file accepted is the one measured.
 */
export const DEFAULT_FILE_BYTES = MAX_ATTACHMENT_BYTES;

export function loadConfig(): UploadsBenchConfig {
  const targets = listFrom('BENCH_UPLOADS_TARGETS', TARGETS.join(','), (item) => {
    if (!(TARGETS as readonly string[]).includes(item))
      throw new Error(`BENCH_UPLOADS_TARGETS: unknown target "${item}" (${TARGETS.join(', ')})`);
    return item as Target;
  });
  const concurrencies = listFrom('BENCH_CONCURRENCY', '1,8', (item) => {
    const value = Number(item);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`BENCH_CONCURRENCY: bad value "${item}"`);
    return value;
  });
  const overridden = ['BENCH_UPLOADS_TARGETS', 'BENCH_CONCURRENCY', 'BENCH_FILE_BYTES'].some(
    (name) => process.env[name],
  );
  return {
    databaseUrl:
      process.env.BENCH_UPLOADS_DATABASE_URL ??
      'postgresql://postgres@127.0.0.1:5432/recordbase_bench_uploads',
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    fileBytes: numberFrom('BENCH_FILE_BYTES', DEFAULT_FILE_BYTES),
    uploadsPerCase: numberFrom('BENCH_UPLOADS_PER_CASE', 24),
    warmupUploads: numberFrom('BENCH_WARMUP_UPLOADS', 2),
    repeats: numberFrom('BENCH_REPEATS', 3),
    concurrencies,
    targets,
    rssIntervalMs: numberFrom('BENCH_RSS_INTERVAL_MS', 20),
    quietCores: Number(process.env.BENCH_QUIET_CORES || 0.3),
    quietWaitMs: numberFrom('BENCH_QUIET_WAIT_S', 60) * 1000,
    waitForOtherBench: process.env.BENCH_WAIT_FOR_RECORDS !== '0',
    tmpRoot: process.env.BENCH_TMPDIR || tmpdir(),
    serviceLogLevel: process.env.BENCH_SERVICE_LOG || 'warn',
    serviceExecArgv: (process.env.BENCH_UPLOAD_EXEC_ARGV ?? '').split(' ').filter(Boolean),
    writeReadme: process.env.BENCH_WRITE_README !== '0' && !overridden,
  };
}
