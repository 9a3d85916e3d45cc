import { commandLine, processIds, processTicks, TICKS_PER_SECOND } from '../lib/proc';

/**
 * CPU used by processes that are not part of the benchmark while a case runs (Linux /proc only),
 * so a figure taken on a shared machine says how shared it was. Ours are this process, the
 * records-api child, and PostgreSQL processes working for the benchmark database (backends and
 * parallel workers). Processes that start and end within the window are missed, so the figure is
 * a lower bound.
 */

function ticksByProcess(ourPids: ReadonlySet<number>, databaseName: string): Map<number, number> {
  const ticks = new Map<number, number>();
  for (const pid of processIds()) {
    if (ourPids.has(pid)) continue;
    try {
      const cmdline = commandLine(pid);
      if (cmdline.includes(databaseName) || cmdline.includes('parallel worker')) continue;
    } catch {
      continue; // The process ended while we looked.
    }
    const used = processTicks(pid);
    if (used !== undefined) ticks.set(pid, used);
  }
  return ticks;
}

export interface ForeignCpuProbe {
  /** Average number of cores other processes kept busy since the probe started. */
  stop(): number;
}

export function probeForeignCpu(ourPids: ReadonlySet<number>, databaseName: string): ForeignCpuProbe {
  const before = ticksByProcess(ourPids, databaseName);
  const started = performance.now();
  return {
    stop() {
      const seconds = (performance.now() - started) / 1000;
      let used = 0;
      for (const [pid, ticks] of ticksByProcess(ourPids, databaseName))
        used += ticks - (before.get(pid) ?? 0);
      return seconds > 0 ? used / TICKS_PER_SECOND / seconds : 0;
    },
  };
}
