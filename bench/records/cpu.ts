import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU used by processes that are not part of the benchmark while a case runs (Linux /proc only),
 * so a figure taken on a shared machine says how shared it was. Ours are this process, the
 * records-api child, and PostgreSQL processes working for the benchmark database (backends and
 * parallel workers). Processes that start and end within the window are missed, so the figure is
 * a lower bound.
 */

const TICKS_PER_SECOND = 100;

function ticksByProcess(ourPids: ReadonlySet<number>, databaseName: string): Map<number, number> {
  const ticks = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return ticks;
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || ourPids.has(pid)) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmdline.includes(databaseName) || cmdline.includes('parallel worker')) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command name, which is in parentheses and may contain spaces.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(pid, Number(fields[11]) + Number(fields[12]));
    } catch {
      // The process ended while we looked.
    }
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
