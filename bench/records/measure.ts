import { CPU_ROLES, type CpuProbe, type CpuRole } from '../lib/cpu';
import { median, percentile } from '../lib/stats';

/**
 * The closed-loop load generator shared by the HTTP and raw SQL runners: `concurrency` workers
 * each run the operation back to back until the duration is over (requests in flight at the end
 * complete and count). A warm-up with the same workers runs first and is discarded.
 */

export interface OpOutcome {
  /** Size of the response body or result text. */
  bytes: number;
  /** Records written (bulk cases); 0 for reads. */
  items: number;
}

/** One operation: `worker` is 0..concurrency-1, `sequence` counts that worker's operations. */
export type Op = (worker: number, sequence: number) => Promise<OpOutcome>;

export interface Measurement {
  concurrency: number;
  requests: number;
  errors: number;
  firstError?: string;
  seconds: number;
  requestsPerSecond: number;
  itemsPerSecond: number;
  p50Ms: number;
  /** Not in results files written before the sql suite (which reports it). */
  p95Ms: number;
  p99Ms: number;
  bytesPerRequest: number;
  /** Cores kept busy by processes outside the benchmark during the measurement (see cpu.ts). */
  foreignCores: number;
  /**
   * CPU milliseconds per request of each part of the machine (see cpu.ts); absent in results
   * files written before it was measured.
   */
  cpuMsPerRequest?: Record<CpuRole, number>;
}

export interface MeasureOptions {
  concurrency: number;
  durationMs: number;
  warmupMs: number;
  /** Starts a probe of the processes' CPU; its reading is taken when the measurement ends. */
  probe?: () => CpuProbe;
}

interface Run {
  latencies: number[];
  errors: number;
  firstError?: string;
  bytes: number;
  items: number;
  seconds: number;
}

let sequence = 0;

async function run(op: Op, concurrency: number, durationMs: number): Promise<Run> {
  const result: Run = { latencies: [], errors: 0, bytes: 0, items: 0, seconds: 0 };
  const started = performance.now();
  const deadline = started + durationMs;
  const worker = async (index: number) => {
    while (performance.now() < deadline) {
      const before = performance.now();
      try {
        const outcome = await op(index, sequence++);
        result.latencies.push(performance.now() - before);
        result.bytes += outcome.bytes;
        result.items += outcome.items;
      } catch (error) {
        result.errors += 1;
        result.firstError ??= error instanceof Error ? error.message : String(error);
        // A failing target must not turn the loop into a busy spin.
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, index) => worker(index)));
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

export async function measure(op: Op, options: MeasureOptions): Promise<Measurement> {
  if (options.warmupMs > 0) await run(op, options.concurrency, options.warmupMs);
  const probe = options.probe?.();
  const result = await run(op, options.concurrency, options.durationMs);
  const cpu = probe?.stop();
  const sorted = result.latencies.sort((a, b) => a - b);
  const requests = sorted.length;
  const foreignCores = cpu && cpu.seconds > 0 ? cpu.coreSeconds.other / cpu.seconds : Number.NaN;
  const cpuMsPerRequest =
    cpu && requests > 0
      ? (Object.fromEntries(
          CPU_ROLES.map((role) => [role, (cpu.coreSeconds[role] * 1000) / requests]),
        ) as Record<CpuRole, number>)
      : undefined;
  return {
    concurrency: options.concurrency,
    requests,
    errors: result.errors,
    ...(result.firstError ? { firstError: result.firstError } : {}),
    seconds: result.seconds,
    requestsPerSecond: requests / result.seconds,
    itemsPerSecond: result.items / result.seconds,
    p50Ms: percentile(sorted, 50),
    p95Ms: percentile(sorted, 95),
    p99Ms: percentile(sorted, 99),
    bytesPerRequest: requests > 0 ? result.bytes / requests : 0,
    foreignCores,
    ...(cpuMsPerRequest ? { cpuMsPerRequest } : {}),
  };
}

/** The median of each figure over repeated measurements of the same case. */
export function medianOf(runs: readonly Measurement[]): Measurement {
  const first = runs[0];
  if (!first) throw new Error('no measurements');
  if (runs.length === 1) return first;
  const pickMedian = (key: keyof Measurement) => median(runs.map((r) => r[key] as number));
  return {
    concurrency: first.concurrency,
    requests: pickMedian('requests'),
    errors: pickMedian('errors'),
    ...(runs.find((r) => r.firstError) ? { firstError: runs.find((r) => r.firstError)!.firstError! } : {}),
    seconds: pickMedian('seconds'),
    requestsPerSecond: pickMedian('requestsPerSecond'),
    itemsPerSecond: pickMedian('itemsPerSecond'),
    p50Ms: pickMedian('p50Ms'),
    p95Ms: pickMedian('p95Ms'),
    p99Ms: pickMedian('p99Ms'),
    bytesPerRequest: pickMedian('bytesPerRequest'),
    foreignCores: pickMedian('foreignCores'),
    ...(first.cpuMsPerRequest
      ? {
          cpuMsPerRequest: Object.fromEntries(
            CPU_ROLES.map((role) => [role, median(runs.map((r) => r.cpuMsPerRequest?.[role] ?? Number.NaN))]),
          ) as Record<CpuRole, number>,
        }
      : {}),
  };
}

/**
 * Medians over rounds of cases each measured along several paths (`keys`: sql's three, airtable's
 * two APIs), case by case and path by path; the rounds hold the same cases in the same order.
 */
export function mediansOfRounds<K extends string, T extends Record<K, Measurement>>(
  rounds: readonly T[][],
  keys: readonly K[],
): T[] {
  return rounds[0]!.map((first, index) => ({
    ...first,
    ...Object.fromEntries(keys.map((key) => [key, medianOf(rounds.map((round) => round[index]![key]))])),
  }));
}
