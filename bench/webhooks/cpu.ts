import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { machineTicks, ownerOf, type ProcessSample, sampleProcesses, TICKS_PER_SECOND } from '../lib/proc';

/**
 * CPU used per process group over a window (Linux /proc): the load generator, the receiver,
 * records-api, webhook-dispatcher, the PostgreSQL backends serving each of them (found by
 * application_name in pg_stat_activity), the rest of PostgreSQL, Redis, and everything else.
 * Sampled every second: a process that ends within the window counts up to its last sample.
 */

export const CPU_GROUPS = [
  'load generator',
  'receiver',
  'records-api',
  'PG for records-api',
  'dispatcher',
  'PG for dispatcher',
  'PG other',
  'redis',
  'other',
] as const;
export type CpuGroup = (typeof CPU_GROUPS)[number];

export interface CpuUsage {
  /** Average cores busy per group over the window. */
  cores: Record<CpuGroup, number>;
  /** The whole machine (from /proc/stat), in cores. */
  machineBusy: number;
  seconds: number;
}

interface Snapshot {
  at: number;
  ticks: Map<number, ProcessSample>;
  machine: { busy: number; total: number };
}

function snapshot(): Snapshot {
  const ticks = new Map(sampleProcesses().map((s) => [s.pid, s]));
  return { at: performance.now(), ticks, machine: machineTicks() };
}

async function backends(pool: pg.Pool | undefined): Promise<Map<number, CpuGroup>> {
  if (!pool) return new Map();
  const rows = await pool.query<{ pid: number; application_name: string }>(
    'SELECT pid, application_name FROM pg_stat_activity WHERE datname = current_database()',
  );
  const groups = new Map<number, CpuGroup>();
  for (const row of rows.rows) {
    if (row.application_name === 'records-api') groups.set(row.pid, 'PG for records-api');
    else if (row.application_name === 'webhook-dispatcher') groups.set(row.pid, 'PG for dispatcher');
  }
  return groups;
}

export interface CpuProbe {
  stop(): Promise<CpuUsage>;
}

/**
 * Samples /proc every second (and pg_stat_activity), so a process that ends within the window
 * (a pool connection closed when idle) still counts up to its last sample, and one that starts
 * within it counts from zero.
 */
export async function probeCpu(
  pool: pg.Pool | undefined,
  pids: Partial<Record<CpuGroup, number>>,
): Promise<CpuProbe> {
  const first = snapshot();
  const base = new Map<number, number>();
  for (const [pid, { ticks }] of first.ticks) base.set(pid, ticks);
  const last = new Map<number, ProcessSample>(first.ticks);
  const backendGroups = await backends(pool);
  let latest = first;
  const sample = async () => {
    latest = snapshot();
    for (const [pid, entry] of latest.ticks) {
      if (!base.has(pid)) base.set(pid, 0);
      last.set(pid, entry);
    }
    for (const [pid, group] of await backends(pool)) backendGroups.set(pid, group);
  };
  let sampling: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    sampling = sampling.then(sample).catch(() => {});
  }, 1000);
  return {
    async stop() {
      clearInterval(timer);
      await sampling;
      await sample();
      const byPid = new Map<number, CpuGroup>();
      for (const [group, pid] of Object.entries(pids)) if (pid) byPid.set(pid, group as CpuGroup);
      const seconds = (latest.at - first.at) / 1000;
      const cores = Object.fromEntries(CPU_GROUPS.map((group) => [group, 0])) as Record<CpuGroup, number>;
      for (const [pid, { ticks, comm }] of last) {
        const used = ticks - (base.get(pid) ?? 0);
        if (used <= 0) continue;
        const group: CpuGroup =
          // A service's own processes (records-api's cluster workers) are its group too.
          ownerOf(pid, byPid, (child) => last.get(child)?.ppid) ??
          backendGroups.get(pid) ??
          (comm === 'postgres' ? 'PG other' : comm.startsWith('redis-server') ? 'redis' : 'other');
        cores[group] += used / TICKS_PER_SECOND / seconds;
      }
      const totalTicks = latest.machine.total - first.machine.total;
      const cpus = readFileSync('/proc/stat', 'utf8')
        .split('\n')
        .filter((line) => /^cpu\d/.test(line)).length;
      const machineBusy =
        totalTicks > 0 ? ((latest.machine.busy - first.machine.busy) / totalTicks) * cpus : 0;
      return { cores, machineBusy, seconds };
    },
  };
}
