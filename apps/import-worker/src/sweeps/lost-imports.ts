import { importsToRequeue } from '@recordbase/db';
import { addImportJob, type Queue } from '@recordbase/queues';
import type pg from 'pg';
import { sweepStaging } from '../staging';

/**
 * The import worker's sweep: queues again the imports Redis lost (queued and never taken, or
 * running with no progress for a while: a dead run's) and drops the staging tables of dead runs.
 * PostgreSQL holds every import's state, so the sweep needs nothing Redis kept.
 */

/** An import that waits this long without being taken is queued again (Redis may have lost it). */
const QUEUED_GRACE_MS = 30_000;
/** Imports queued again per sweep at most. */
const SWEEP_BATCH = 100;

/** Queues the import again unless its job still waits or runs. */
async function requeue(queue: Queue, importId: string): Promise<void> {
  const job = await queue.getJob(importId);
  if (job && !(await job.isCompleted()) && !(await job.isFailed())) return;
  await job?.remove();
  await addImportJob(queue, importId);
}

/** One sweep; `staleAfterMs` is how long a running import may report nothing before it is a dead run's. */
export async function sweepLostImports(pool: pg.Pool, queue: Queue, staleAfterMs: number): Promise<void> {
  const lost = await importsToRequeue(pool, QUEUED_GRACE_MS, staleAfterMs, SWEEP_BATCH);
  for (const id of lost) await requeue(queue, id);
  await sweepStaging(pool);
}
