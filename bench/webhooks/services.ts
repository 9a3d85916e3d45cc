import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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
      if (!existsSync(file)) return undefined;
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as ServiceCounts;
      } catch {
        return undefined; // caught mid-write; the next read will do
      }
    },
  };
}
