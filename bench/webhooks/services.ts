import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { REPO_ROOT } from '@recordbase/launcher';
import type { BenchStackSettings, Service as RunningService, ServiceName } from '../lib/stack';

/**
 * The counting of each service's own PostgreSQL statements and Redis commands: count-hook.cjs,
 * preloaded into the child, writes its running totals to a file of the case's count directory.
 */

export interface Service extends RunningService {
  /** Its own PostgreSQL statements and Redis commands so far (count-hook.cjs), when counted. */
  counts(): ServiceCounts | undefined;
}

/** Running totals a service child writes (count-hook.cjs). */
export interface ServiceCounts {
  pgStatements: number;
  /** Statements by kind: the dispatcher's batched statements by name, others by first keyword. */
  pg: Record<string, number>;
  redisCommands: number;
  redis: Record<string, number>;
}

const COUNT_HOOK = join(__dirname, 'count-hook.cjs');

const addByName = (a: Record<string, number>, b: Record<string, number>) => {
  const sum = { ...a };
  for (const [name, count] of Object.entries(b)) sum[name] = (sum[name] ?? 0) + count;
  return sum;
};

/** Two processes' counts as one service's. */
const addCounts = (a: ServiceCounts, b: ServiceCounts): ServiceCounts => ({
  pgStatements: a.pgStatements + b.pgStatements,
  pg: addByName(a.pg, b.pg),
  redisCommands: a.redisCommands + b.redisCommands,
  redis: addByName(a.redis, b.redis),
});

const countFile = (countDir: string, name: ServiceName, port: number) =>
  join(countDir, `${name}-${port}.json`);

/** The launch of a counted service: the hook preloaded, told where to write and what is its own. */
export function countedLaunch(countDir: string): NonNullable<BenchStackSettings['launch']> {
  return (name, port) => ({
    env: {
      BENCH_COUNT_FILE: countFile(countDir, name, port),
      BENCH_COUNT_FROM: join(REPO_ROOT, 'apps', name),
    },
    execArgv: ['--require', COUNT_HOOK],
  });
}

/** The service with its counts, read from the file its hook writes. */
export function counted(running: RunningService, countDir: string): Service {
  const file = countFile(countDir, running.name, running.port);
  return {
    ...running,
    counts: () => {
      // The service's own file, and one per process of its cluster (`<file>.<pid>`).
      const ofProcesses = readdirSync(countDir)
        .filter((name) => name.startsWith(`${basename(file)}.`) && /\.\d+$/.test(name))
        .map((name) => join(countDir, name));
      const files = [file, ...ofProcesses].filter((path) => existsSync(path));
      if (files.length === 0) return undefined;
      try {
        return files.map((path) => JSON.parse(readFileSync(path, 'utf8')) as ServiceCounts).reduce(addCounts);
      } catch {
        return undefined; // caught mid-write; the next read will do
      }
    },
  };
}
