import { rssBytes } from '../uploads/rss';

/**
 * What the soak records: every request's outcome and latency, in the minute it started, and each
 * process's memory sampled through the run.
 */

export interface MinuteFigures {
  minute: number;
  /** A minute of the warm-up: counted for errors, not for the memory and p99 targets. */
  warmUp: boolean;
  requests: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  /** Median RSS of each process over the minute, MiB. */
  rssMiB: Record<string, number>;
}

export interface ErrorSample {
  operation: string;
  message: string;
}

const MiB = 1024 * 1024;

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const median = (values: readonly number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

export class SoakRecorder {
  private readonly latencies: number[][] = [];
  private readonly errorCounts: number[] = [];
  private readonly rss: Record<string, number>[][] = [];
  readonly byOperation = new Map<string, { requests: number; errors: number; latencies: number[] }>();
  readonly errorSamples: ErrorSample[] = [];

  constructor(private readonly startedAt: number) {}

  private minuteOf(at: number): number {
    return Math.floor((at - this.startedAt) / 60_000);
  }

  record(operation: string, startedAt: number, durationMs: number, error?: unknown): void {
    const minute = this.minuteOf(startedAt);
    const latencies = this.latencies[minute] ?? [];
    latencies.push(durationMs);
    this.latencies[minute] = latencies;
    this.errorCounts[minute] = (this.errorCounts[minute] ?? 0) + (error ? 1 : 0);
    const op = this.byOperation.get(operation) ?? { requests: 0, errors: 0, latencies: [] };
    op.requests += 1;
    op.latencies.push(durationMs);
    if (error) {
      op.errors += 1;
      if (this.errorSamples.length < 20) {
        this.errorSamples.push({
          operation,
          message: error instanceof Error ? error.message : String(error),
        });
      }
    }
    this.byOperation.set(operation, op);
  }

  sampleRss(pids: Record<string, number>, at = performance.now()): void {
    const sample = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, rssBytes(pid) / MiB]));
    const minute = this.minuteOf(at);
    const samples = this.rss[minute] ?? [];
    samples.push(sample);
    this.rss[minute] = samples;
  }

  /** Every minute's figures; the first `warmUpCount` are the warm-up. */
  minutes(count: number, warmUpCount: number): MinuteFigures[] {
    return Array.from({ length: count }, (_, minute) => {
      const sorted = [...(this.latencies[minute] ?? [])].sort((a, b) => a - b);
      const samples = this.rss[minute] ?? [];
      const names = Object.keys(samples[0] ?? {});
      return {
        // Warm-up minutes and measured minutes are each numbered from 1.
        minute: minute < warmUpCount ? minute + 1 : minute + 1 - warmUpCount,
        warmUp: minute < warmUpCount,
        requests: sorted.length,
        errors: this.errorCounts[minute] ?? 0,
        p50Ms: percentile(sorted, 50),
        p99Ms: percentile(sorted, 99),
        rssMiB: Object.fromEntries(names.map((name) => [name, median(samples.map((s) => s[name]!))])),
      };
    });
  }
}
