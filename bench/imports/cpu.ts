import { commandLine, machineTicks, processIds, processTicks, TICKS_PER_SECOND } from '../lib/proc';

/**
 * Where the CPU went over a window (Linux /proc): the import worker, the PostgreSQL backends of the
 * benchmark database (and parallel workers), PostgreSQL's shared background processes
 * (checkpointer, WAL writer, background writer, autovacuum), the benchmark and its other services,
 * and everything else, which is other work on a shared machine ("other load", as in
 * lib/cpu.ts). /proc is read every `intervalMs`, so a process that ends within the window (a
 * backend whose connection is closed after its COPY) counts up to its last reading.
 */

export type CpuClass = 'worker' | 'postgres' | 'postgresShared' | 'ours' | 'other';

export interface CpuFigures {
  seconds: number;
  /** CPU seconds per class over the window. */
  cpuSeconds: Record<CpuClass, number>;
  /** Cores the whole machine kept busy (/proc/stat). */
  machineBusyCores: number;
  /** cpuSeconds.other / seconds. */
  otherCores: number;
}

const SHARED_POSTGRES =
  /checkpointer|background writer|walwriter|autovacuum|logical replication|stats|archiver/;

export function watchCpu(
  roles: { worker?: number; ours: readonly number[] },
  databaseName: string,
  intervalMs = 200,
) {
  const seen = new Map<number, { cls: CpuClass; first: number; last: number }>();
  const classify = (pid: number): CpuClass => {
    if (pid === roles.worker) return 'worker';
    if (pid === process.pid || roles.ours.includes(pid)) return 'ours';
    let cmdline = '';
    try {
      cmdline = commandLine(pid);
    } catch {
      return 'other';
    }
    if (cmdline.startsWith('postgres: ')) {
      if (cmdline.includes(` ${databaseName} `) || cmdline.includes('parallel worker')) return 'postgres';
      if (SHARED_POSTGRES.test(cmdline)) return 'postgresShared';
    }
    return 'other';
  };
  let firstScan = true;
  const scan = () => {
    for (const pid of processIds()) {
      const ticks = processTicks(pid);
      if (ticks === undefined) continue;
      const known = seen.get(pid);
      if (known) known.last = ticks;
      // A process first seen after the first scan started within the window: all its CPU counts.
      else seen.set(pid, { cls: classify(pid), first: firstScan ? ticks : 0, last: ticks });
    }
    firstScan = false;
  };
  scan();
  const machineStart = machineTicks();
  const started = performance.now();
  const timer = setInterval(scan, intervalMs);
  const totals = (): Record<CpuClass, number> => {
    const cpuSeconds: Record<CpuClass, number> = {
      worker: 0,
      postgres: 0,
      postgresShared: 0,
      ours: 0,
      other: 0,
    };
    for (const { cls, first, last } of seen.values()) cpuSeconds[cls] += (last - first) / TICKS_PER_SECOND;
    return cpuSeconds;
  };
  return {
    /** CPU seconds per class since the window started, read now. */
    snapshot(): Record<CpuClass, number> {
      scan();
      return totals();
    },
    stop(): CpuFigures {
      clearInterval(timer);
      scan();
      const seconds = (performance.now() - started) / 1000;
      const machineEnd = machineTicks();
      const cpuSeconds = totals();
      return {
        seconds,
        cpuSeconds,
        machineBusyCores: (machineEnd.busy - machineStart.busy) / TICKS_PER_SECOND / seconds,
        otherCores: cpuSeconds.other / seconds,
      };
    },
  };
}
