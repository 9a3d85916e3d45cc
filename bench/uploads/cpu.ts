import { readFileSync } from 'node:fs';

/** CPU time from Linux /proc, and a wait for a quiet machine before a case. */

export const TICKS_PER_SECOND = 100;

function statFields(pid: number | 'self'): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU seconds (user + system) used by `pid` so far; NaN once it has ended. */
export function cpuSeconds(pid: number): number {
  try {
    const fields = statFields(pid);
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/** This process's CPU seconds, plus its children that ended (`cp`, `sync`). */
export function ourCpuSeconds(): number {
  const fields = statFields('self');
  return [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0) / TICKS_PER_SECOND;
}

export function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = line.slice(0, 8).reduce((sum, value) => sum + value, 0);
  return { busy: total - (line[3] ?? 0) - (line[4] ?? 0), total };
}

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
