import { percentile } from '../lib/stats';

/**
 * Closed loop over a fixed number of operations: `concurrency` workers take the next operation
 * as soon as their previous one has finished, until `count` have been started. The window runs
 * from the first start to the last finish.
 */

export type Operation = (index: number) => Promise<void>;

export interface LoadRun {
  count: number;
  concurrency: number;
  seconds: number;
  /** Per operation, in completion order. */
  latenciesMs: number[];
  p50Ms: number;
  p99Ms: number;
  errors: number;
  firstError?: string;
}

export async function closedLoop(count: number, concurrency: number, operation: Operation): Promise<LoadRun> {
  const latenciesMs: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < count) {
      const index = next++;
      const begun = performance.now();
      try {
        await operation(index);
        latenciesMs.push(performance.now() - begun);
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  const seconds = (performance.now() - started) / 1000;
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return {
    count,
    concurrency,
    seconds,
    latenciesMs,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    errors,
    ...(firstError === undefined ? {} : { firstError }),
  };
}
