import type { Metrics } from '@recordbase/server-kit/metrics';
import client from 'prom-client';
import type { ImportOutcome } from './job';

/** What became of an import run: the outcomes an operator watches (a run that lost its import is none). */
export type FinishedImport = Exclude<ImportOutcome, 'not-ours'>;

export interface ImportMetrics {
  /** Records one finished run, its outcome and how long it ran (claim to commit or failure). */
  finished(outcome: FinishedImport, seconds: number): void;
}

/** `imports_total{outcome}` and `import_duration_seconds{outcome}` on the worker's `/metrics`. */
export function createImportMetrics(metrics: Pick<Metrics, 'registry'>): ImportMetrics {
  const total = new client.Counter({
    name: 'imports_total',
    help: 'Import runs finished, by outcome (succeeded, failed)',
    labelNames: ['outcome'] as const,
    registers: [metrics.registry],
  });
  const duration = new client.Histogram({
    name: 'import_duration_seconds',
    help: 'Duration of import runs, by outcome',
    labelNames: ['outcome'] as const,
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
    registers: [metrics.registry],
  });
  // Both outcomes appear from the start, so a rate over them is defined before the first import.
  for (const outcome of ['succeeded', 'failed'] as const) total.inc({ outcome }, 0);
  return {
    finished(outcome, seconds) {
      total.inc({ outcome });
      duration.observe({ outcome }, seconds);
    },
  };
}
