import { rssBytes } from '../lib/proc';
import { trace } from './trace';

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
    trace(
      'load',
      operation,
      performance.timeOrigin + startedAt,
      durationMs,
      error ? (error instanceof Error ? error.message : String(error)) : 'ok',
    );
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

/** One answer that was not a refusal the attack may meet: a 5xx, no answer, or a success it must not get. */
export interface AnswerFinding {
  attack: string;
  /** The exact request, to send again. */
  request: string;
  /** The status, or why there was none. */
  answer: string;
  message: string;
  /** Seconds since the attacks started. */
  atSecond: number;
}

export interface AnswerFigures {
  /** Per attack, how many answers of each kind (`400`, `429 in flight`, `no answer: ECONNRESET`…). */
  attacks: { name: string; answers: Record<string, number>; examples: Record<string, string> }[];
  findings: number;
  /** The first of them. */
  findingSamples: AnswerFinding[];
}

/** What a hostile tenant's requests got, by attack and answer; none of it is a latency figure. */
export class AnswerCounter {
  private readonly byAttack = new Map<string, Map<string, number>>();
  /** The first message of each kind of answer, per attack: what the 400s said. */
  private readonly examples = new Map<string, Map<string, string>>();
  private findings = 0;
  private readonly findingSamples: AnswerFinding[] = [];

  constructor(private readonly startedAt: number) {}

  /** Attacks listed before any answer, so the report names each even if it never got one. */
  expect(attack: string): void {
    if (!this.byAttack.has(attack)) this.byAttack.set(attack, new Map());
    if (!this.examples.has(attack)) this.examples.set(attack, new Map());
  }

  count(attack: string, answer: string, message?: string): void {
    this.expect(attack);
    const answers = this.byAttack.get(attack)!;
    answers.set(answer, (answers.get(answer) ?? 0) + 1);
    const examples = this.examples.get(attack)!;
    if (message !== undefined && !examples.has(answer)) examples.set(answer, message.slice(0, 300));
  }

  finding(finding: Omit<AnswerFinding, 'atSecond'>): AnswerFinding {
    this.findings += 1;
    const recorded = { ...finding, atSecond: Math.round((performance.now() - this.startedAt) / 1000) };
    if (this.findingSamples.length < 20) this.findingSamples.push(recorded);
    return recorded;
  }

  figures(): AnswerFigures {
    return {
      attacks: [...this.byAttack].map(([name, answers]) => ({
        name,
        answers: Object.fromEntries([...answers].sort(([a], [b]) => a.localeCompare(b))),
        examples: Object.fromEntries(this.examples.get(name) ?? []),
      })),
      findings: this.findings,
      findingSamples: this.findingSamples,
    };
  }
}
