import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * What the suites read of processes and of the machine from Linux /proc: CPU ticks, resident
 * memory, and the waits before a case for a quiet machine and for the records benchmark.
 */

export const TICKS_PER_SECOND = 100;

/** The process ids in /proc now; none where there is no /proc. */
export function processIds(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries.map(Number).filter((pid) => Number.isInteger(pid));
}

/** A process as /proc showed it: its parent, its CPU ticks (user + system) so far, its command name. */
export interface ProcessSample {
  pid: number;
  ppid: number;
  ticks: number;
  comm: string;
}

/** Every process in /proc now; those that end while it reads are left out. */
export function sampleProcesses(): ProcessSample[] {
  const samples: ProcessSample[] = [];
  for (const pid of processIds()) {
    try {
      const { comm, fields } = processStat(pid);
      samples.push({ pid, ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]), comm });
    } catch {
      // ended while we looked
    }
  }
  return samples;
}

/**
 * What `owners` says of `pid` or of its nearest ancestor it names (a service's own children, such
 * as records-api's cluster workers, are the service's), following `parentOf`; undefined if none.
 */
export function ownerOf<T>(
  pid: number,
  owners: ReadonlyMap<number, T>,
  parentOf: (pid: number) => number | undefined,
): T | undefined {
  for (let at: number | undefined = pid, hops = 0; at && at > 1 && hops < 16; hops++) {
    const owner = owners.get(at);
    if (owner !== undefined) return owner;
    at = parentOf(at);
  }
  return undefined;
}

/** The command name of `pid` and the fields of its /proc/<pid>/stat after it; throws once it has ended. */
export function processStat(pid: number | 'self'): { comm: string; fields: string[] } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name is in parentheses and may contain spaces.
  return {
    comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    fields: stat.slice(stat.lastIndexOf(')') + 2).split(' '),
  };
}

/** Clock ticks (user + system) used by `pid` so far; undefined once it has ended. */
export function processTicks(pid: number): number | undefined {
  try {
    const { fields } = processStat(pid);
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** The command line of `pid`, its arguments joined by spaces; throws once it has ended. */
export const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');

/** CPU seconds (user + system) used by `pid` so far; NaN once it has ended. */
export function cpuSeconds(pid: number): number {
  return (processTicks(pid) ?? Number.NaN) / TICKS_PER_SECOND;
}

/** This process's CPU seconds, plus its children that ended (`cp`, `sync`). */
export function ourCpuSeconds(): number {
  const { fields } = processStat('self');
  return [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0) / TICKS_PER_SECOND;
}

export function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = line.slice(0, 8).reduce((sum, value) => sum + value, 0);
  return { busy: total - (line[3] ?? 0) - (line[4] ?? 0), total };
}

/** Resident set size of `pid` in bytes (VmRSS), or NaN once it has ended. */
export function rssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
    return kib === undefined ? Number.NaN : Number(kib) * 1024;
  } catch {
    return Number.NaN;
  }
}

/**
 * `rss(pid)` as plain JavaScript (0 once the process has ended), for the samplers that run in a
 * worker thread without a loader: the load generator's loop must not stretch their interval.
 */
export const RSS_SAMPLER_SOURCE = `
const { readFileSync } = require('node:fs');
const rss = (pid) => {
  try {
    const kib = /^VmRSS:\\s+(\\d+) kB$/m.exec(readFileSync('/proc/' + pid + '/status', 'utf8'));
    return kib ? Number(kib[1]) * 1024 : 0;
  } catch {
    return 0;
  }
};`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits (up to `maxWaitMs`) until the machine was less than `threshold` cores busy over a
 * second, since the benchmark shares it with whatever else runs (test suites, other benchmarks).
 * Returns the last second's busy cores and how long it waited.
 */
export async function waitForQuiet(
  threshold: number,
  maxWaitMs: number,
): Promise<{ busyCores: number; waitedMs: number }> {
  const started = performance.now();
  for (;;) {
    const before = machineTicks();
    await sleep(1000);
    const after = machineTicks();
    const busyCores = (after.busy - before.busy) / TICKS_PER_SECOND;
    const waitedMs = performance.now() - started;
    if (busyCores < threshold || waitedMs >= maxWaitMs) return { busyCores, waitedMs };
  }
}

/** The records benchmark and another suite must never measure at the same time. */
export async function waitForOtherBenchmark(): Promise<void> {
  for (let waited = 0; ; waited += 30) {
    let running = '';
    try {
      running = execFileSync('pgrep', ['-f', 'records/main.ts'], { encoding: 'utf8' }).trim();
    } catch {
      return; // pgrep exits 1 when nothing matches
    }
    console.log(
      `  the records benchmark is running (pid ${running.split('\n').join(', ')}); waiting (${waited} s)`,
    );
    await sleep(30_000);
  }
}
