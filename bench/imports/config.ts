import { tmpdir } from 'node:os';

/** Settings of the imports benchmark, from the environment (all optional). */

export const FORMATS = ['csv', 'xlsx'] as const;
export type Format = (typeof FORMATS)[number];

export interface ImportsBenchConfig {
  /** The benchmark's own database, created, migrated and dropped by every run. */
  databaseUrl: string;
  redisUrl: string;
  /** Rows of the CSV (its header aside). */
  csvRows: number;
  /** Rows of the XLSX: more than the CSV's, since a row takes fewer bytes there (about the same file size). */
  xlsxRows: number;
  /** Seed of the generated rows: the same seed and counts give the same files. */
  seed: number;
  formats: Format[];
  /** Rounds of every format; the report shows medians. */
  repeats: number;
  /** How often VmRSS is sampled. */
  rssIntervalMs: number;
  /** How often the import's status is polled (GET …/imports/{id}). */
  pollMs: number;
  /** How long an import may take before the run gives up. */
  importTimeoutMs: number;
  /** Before each import and each COPY, wait until the machine is less busy than this many cores over a second ... */
  quietCores: number;
  /** ... but no longer than this. */
  quietWaitMs: number;
  /** Before each round, wait until the records benchmark is not running. */
  waitForOtherBench: boolean;
  /** Where the uploaded files are stored (STORAGE_DIR of upload-service and import-worker; removed at the end). */
  tmpRoot: string;
  /** LOG_LEVEL of the services (their output is shown when a round fails). */
  serviceLogLevel: string;
  /** Extra node flags of the import-worker child, such as `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
  workerExecArgv: string[];
  /** Rewrite the "## imports" section of bench/README.md and imports/results.json. */
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

/**
 * 500,000 rows make a CSV of ~49 MB (46.9 MiB); 650,000 the XLSX of ~47.6 MB (45.4 MiB): both just
 * under upload-service's limit for import files (MAX_IMPORT_FILE_BYTES, 50 MiB).
 */
export const DEFAULT_CSV_ROWS = 500_000;
export const XLSX_ROWS_PER_CSV_ROW = 1.3;

export function loadConfig(): ImportsBenchConfig {
  const formats = (process.env.BENCH_IMPORT_FORMATS || FORMATS.join(','))
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => {
      if (!(FORMATS as readonly string[]).includes(item))
        throw new Error(`BENCH_IMPORT_FORMATS: unknown format "${item}" (${FORMATS.join(', ')})`);
      return item as Format;
    });
  if (formats.length === 0) throw new Error('BENCH_IMPORT_FORMATS is empty');
  const csvRows = numberFrom('BENCH_IMPORT_ROWS', DEFAULT_CSV_ROWS);
  const overridden = ['BENCH_IMPORT_ROWS', 'BENCH_XLSX_ROWS', 'BENCH_SEED', 'BENCH_IMPORT_FORMATS'].some(
    (name) => process.env[name],
  );
  return {
    databaseUrl:
      process.env.BENCH_IMPORTS_DATABASE_URL ??
      'postgresql://postgres@127.0.0.1:5432/recordbase_bench_imports',
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    csvRows,
    xlsxRows: numberFrom('BENCH_XLSX_ROWS', Math.round(csvRows * XLSX_ROWS_PER_CSV_ROW)),
    seed: numberFrom('BENCH_SEED', 20261129),
    formats,
    repeats: numberFrom('BENCH_REPEATS', 3),
    rssIntervalMs: numberFrom('BENCH_RSS_INTERVAL_MS', 50),
    pollMs: numberFrom('BENCH_POLL_MS', 50),
    importTimeoutMs: numberFrom('BENCH_IMPORT_TIMEOUT_S', 900) * 1000,
    quietCores: Number(process.env.BENCH_QUIET_CORES || 0.3),
    quietWaitMs: numberFrom('BENCH_QUIET_WAIT_S', 60) * 1000,
    waitForOtherBench: process.env.BENCH_WAIT_FOR_RECORDS !== '0',
    tmpRoot: process.env.BENCH_TMPDIR || tmpdir(),
    serviceLogLevel: process.env.BENCH_SERVICE_LOG || 'warn',
    workerExecArgv: (process.env.BENCH_WORKER_EXEC_ARGV ?? '').split(' ').filter(Boolean),
    writeReadme: process.env.BENCH_WRITE_README !== '0' && !overridden,
  };
}
