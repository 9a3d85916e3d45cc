import type pg from 'pg';
import { sourceFingerprint as fingerprint, type Host, host, loadAverage } from '../lib/machine';
import type { BenchConfig } from './config';
import type { Dataset } from './dataset';
import type { Measurement } from './measure';
import type { AggregateBody, ListBody } from './queries';

/** What the suites measure and keep: a case's figures, the machine's, and the deals suite's run. */

export interface ReadResult {
  id: string;
  title: string;
  /** `aggregate` for records/aggregate (Q8a, Q8b); absent for records/list. */
  endpoint?: 'list' | 'aggregate';
  /** The case whose page this one reshapes (Q7p and Q7e: Q7). */
  sameAs?: string;
  body: ListBody | AggregateBody;
  concurrency: number;
  api: Measurement;
  raw: Measurement;
  rawWithTotal?: Measurement;
}

export interface WriteResult {
  id: string;
  title: string;
  concurrency: number;
  /** When a suite runs its writes more than once (people: before and after the reads). */
  phase?: string;
  api: Measurement;
  /** The same rows written in raw SQL, on the raw table with its read indexes. */
  raw?: Measurement;
  /** The same on a raw table without the read indexes. */
  rawBare?: Measurement;
}

export interface Machine extends Host {
  postgres: string;
  postgresSettings: string;
  /** 1, 5 and 15 minute load averages when the benchmark started. */
  loadAverage: string;
  /** The code under test changes; this names the version that was measured. */
  source: string;
}

export interface Results {
  config: BenchConfig;
  machine: Machine;
  data: { rows: number; companies: number; load: Dataset['load'] };
  serverMode: string;
  startedAt: string;
  reads: ReadResult[];
  writes: WriteResult[];
}

const SOURCE_DIRS = [
  'apps/records-api/src',
  'packages/contracts/src',
  'packages/db/src',
  'packages/db/migrations',
  'packages/domain/src',
  'packages/server-kit/src',
];

/** sha256 over the server-side sources, and the time the newest of them changed. */
export const sourceFingerprint = () => fingerprint(SOURCE_DIRS);

export async function machineInfo(pool: pg.Pool, source: string): Promise<Machine> {
  const version = await pool.query<{ version: string }>('SELECT version()');
  const settings = await pool.query<{ name: string; setting: string }>(
    `SELECT name, current_setting(name) AS setting FROM pg_settings
      WHERE name IN ('shared_buffers', 'work_mem', 'max_parallel_workers_per_gather', 'jit') ORDER BY name`,
  );
  return {
    ...host(),
    postgres: version.rows[0]?.version ?? 'unknown',
    postgresSettings: settings.rows.map((s) => `${s.name}=${s.setting}`).join(', '),
    loadAverage: loadAverage(),
    source,
  };
}
