import { commandLine, ownerOf, type ProcessSample, sampleProcesses, TICKS_PER_SECOND } from './proc';

/**
 * Where the CPU went while a case ran (Linux /proc only): the records-api processes (its cluster
 * primary and workers), the stack's other services (upload-service, webhook-dispatcher,
 * import-worker, the gateway, with their children), the PostgreSQL processes working for the
 * benchmark database (backends and parallel workers), this process (the load generator), and
 * every other process — so a figure taken on a shared machine says how shared it was. Processes
 * that start and end within the window are missed, so each figure is a lower bound.
 */

export type CpuRole = 'recordsApi' | 'services' | 'postgres' | 'loadGenerator' | 'other';
export const CPU_ROLES: readonly CpuRole[] = ['recordsApi', 'services', 'postgres', 'loadGenerator', 'other'];

/** The stack's root processes by role (each with its descendants). */
export interface StackRoots {
  recordsApi: readonly number[];
  services: readonly number[];
}

function classify(samples: ProcessSample[], roots: StackRoots, databaseName: string): Map<number, CpuRole> {
  const parent = new Map(samples.map((s) => [s.pid, s.ppid]));
  const rootRole = new Map<number, CpuRole>([
    ...roots.recordsApi.map((pid): [number, CpuRole] => [pid, 'recordsApi']),
    ...roots.services.map((pid): [number, CpuRole] => [pid, 'services']),
  ]);
  const roles = new Map<number, CpuRole>();
  for (const s of samples) {
    if (s.pid === process.pid) {
      roles.set(s.pid, 'loadGenerator');
      continue;
    }
    const stackRole = ownerOf(s.pid, rootRole, (pid) => parent.get(pid));
    if (stackRole) {
      roles.set(s.pid, stackRole);
      continue;
    }
    let role: CpuRole = 'other';
    if (s.comm.startsWith('postgres')) {
      try {
        const cmdline = commandLine(s.pid);
        if (cmdline.includes(databaseName) || cmdline.includes('parallel worker')) role = 'postgres';
      } catch {
        // ended
      }
    }
    roles.set(s.pid, role);
  }
  return roles;
}

/** Core-seconds each role used over the window, and the window's length. */
export interface CpuUse {
  seconds: number;
  coreSeconds: Record<CpuRole, number>;
}

export interface CpuProbe {
  stop(): CpuUse;
}

export function probeCpu(roots: () => StackRoots, databaseName: string): CpuProbe {
  const before = new Map(sampleProcesses().map((s) => [s.pid, s.ticks]));
  const started = performance.now();
  return {
    stop() {
      const seconds = (performance.now() - started) / 1000;
      const samples = sampleProcesses();
      const roles = classify(samples, roots(), databaseName);
      const coreSeconds = Object.fromEntries(CPU_ROLES.map((role) => [role, 0])) as Record<CpuRole, number>;
      for (const s of samples) {
        const role = roles.get(s.pid) ?? 'other';
        coreSeconds[role] += (s.ticks - (before.get(s.pid) ?? 0)) / TICKS_PER_SECOND;
      }
      return { seconds, coreSeconds };
    },
  };
}
