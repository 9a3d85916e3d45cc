import { importStartedBy, releaseImport } from '@recordbase/db';
import { openQueue, openWorker, workerConnection } from '@recordbase/queues';
import { createLoop } from '@recordbase/server-kit/periodic';
import { MAX_IMPORT_RUNS, runImport } from './job';
import type { ImportMetrics } from './metrics';
import type { ImportContext } from './run-context';
import { sweepLostImports } from './sweeps/lost-imports';

/**
 * The import worker: one import at a time per process (scale by running more), taken from the
 * BullMQ queue. A worker killed mid-import loses its job's lock; BullMQ hands the stalled job to
 * another worker (or this one, restarted), which runs the import again from the start, since
 * nothing of the dead run was committed, up to MAX_IMPORT_RUNS runs in all (job.ts): a file that
 * kills the worker fails then. A worker shut down gracefully hands its import back uncounted. Its
 * sweep (sweeps/lost-imports.ts) runs on server-kit's loop.
 */

export interface ImportWorkerOptions {
  ctx: ImportContext;
  redisUrl: string;
  prefix: string;
  /** How often the sweep runs; the first runs at start. */
  sweepEveryMs?: number;
  /** A running import that reported nothing for this long is taken to be a dead run's. */
  staleAfterMs?: number;
  /** How long a job's lock lasts without renewal: a dead worker's job is taken over after it. */
  lockDurationMs?: number;
  /** Told of every run that finished its import (for the worker's metrics). */
  metrics?: ImportMetrics;
  /** Where each run's time is spent from its key's budget (IMPORT_SECONDS_PER_MINUTE_PER_KEY). */
  importTime?: { spend(keyId: string, ms: number): void };
}

export interface ImportWorker {
  /** True while the worker is connected to Redis. */
  isRunning(): boolean;
  close(): Promise<void>;
}

const DEFAULT_SWEEP_MS = 30_000;
const DEFAULT_STALE_MS = 5 * 60_000;

/** The run's time, from the budget of the key that started the import (the root key has none). */
async function spendImportTime(
  ctx: ImportContext,
  options: ImportWorkerOptions,
  importId: string,
  ms: number,
): Promise<void> {
  if (!options.importTime) return;
  try {
    const keyId = await importStartedBy(ctx.db.pool, importId);
    if (keyId) options.importTime.spend(keyId, ms);
  } catch (error) {
    ctx.logger.warn({ err: error, importId }, 'the import time of a run could not be spent');
  }
}

export function startImportWorker(options: ImportWorkerOptions): ImportWorker {
  const { ctx } = options;
  const connection = workerConnection(options.redisUrl, 'import-worker');
  connection.on('error', (error) => ctx.logger.warn({ err: error }, 'import worker: redis error'));
  /** The run in progress, handed back if the worker is closed before it ends. */
  let current: { importId: string; attempt: string } | null = null;
  const worker = openWorker(
    'imports',
    connection,
    options.prefix,
    async ({ importId }) => {
      const started = performance.now();
      try {
        const outcome = await runImport(ctx, importId, {
          claimed: (attempt) => {
            current = { importId, attempt };
          },
        });
        if (outcome !== 'not-ours') {
          const spentMs = performance.now() - started;
          options.metrics?.finished(outcome, spentMs / 1000);
          await spendImportTime(ctx, options, importId, spentMs);
        }
        ctx.logger.info({ importId, outcome }, 'import finished');
      } finally {
        current = null;
      }
    },
    {
      concurrency: 1,
      lockDuration: options.lockDurationMs ?? 30_000,
      // A job whose worker died is run again rather than failed at the first stall; past
      // MAX_IMPORT_RUNS runs, the run fails the import itself.
      maxStalledCount: MAX_IMPORT_RUNS + 2,
      stalledInterval: options.lockDurationMs ?? 30_000,
    },
  );
  worker.on('error', (error) => ctx.logger.warn({ err: error }, 'import worker error'));
  const queue = openQueue('imports', connection, options.prefix);

  const sweep = () => sweepLostImports(ctx.db.pool, queue, options.staleAfterMs ?? DEFAULT_STALE_MS);
  const sweeps = createLoop('import sweep', options.sweepEveryMs ?? DEFAULT_SWEEP_MS, sweep, ctx.logger);
  sweeps.start();

  return {
    isRunning: () => worker.isRunning(),
    async close() {
      await sweeps.stop();
      // Not waiting for the import in progress: handed back, it is taken up again from the start
      // (by another worker once this one's lock on its job expires), and the run is not counted.
      await worker.close(true);
      const running = current as { importId: string; attempt: string } | null;
      if (running) {
        await releaseImport(ctx.db.pool, running.importId, running.attempt).catch((error: unknown) =>
          ctx.logger.warn({ err: error, importId: running.importId }, 'import not handed back'),
        );
      }
      await queue.close();
      connection.disconnect();
    },
  };
}
