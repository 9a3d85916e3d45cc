import { Redis } from 'ioredis';
import type pg from 'pg';
import type { Service, ServiceCounts } from './services';

/**
 * Work counters over a window, to put "per delivery" figures next to the CPU: Redis commands
 * (INFO commandstats, the whole server: BullMQ's and the API's rate limiter's) and PostgreSQL
 * transactions and rows written in the benchmark database (pg_stat_database, every client:
 * records-api's and the dispatcher's; statistics are flushed by backends about once a second),
 * and each service's own statements and commands (count-hook.cjs), which other clients of the same
 * servers (other benchmarks, tests) cannot inflate.
 */

export interface Counters {
  redisCommands: number;
  /** The busiest Redis commands, by calls. */
  redisTop: Record<string, number>;
  pgTransactions: number;
  pgRowsWritten: number;
  /** Per service: its own statements and commands over the window. */
  services: Partial<Record<string, ServiceCounts>>;
}

function minus(after: Record<string, number>, before: Record<string, number> = {}): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after)
      .map(([key, value]) => [key, value - (before[key] ?? 0)] as const)
      .filter(([, value]) => value > 0)
      .sort((a, b) => b[1] - a[1]),
  );
}

function serviceCounts(services: readonly Service[]): Map<string, ServiceCounts> {
  const counts = new Map<string, ServiceCounts>();
  for (const service of services) {
    const current = service.counts();
    if (current) counts.set(service.name, current);
  }
  return counts;
}

interface Snapshot {
  redis: Map<string, number>;
  pg: { xacts: number; rows: number };
}

async function redisCommandStats(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info('commandstats');
  const calls = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1]!, Number(match[2]));
  return calls;
}

async function snapshot(redis: Redis, pool: pg.Pool): Promise<Snapshot> {
  const stats = await pool.query<{ xacts: string; rows: string }>(
    `SELECT xact_commit + xact_rollback AS xacts, tup_inserted + tup_updated + tup_deleted AS rows
       FROM pg_stat_database WHERE datname = current_database()`,
  );
  return {
    redis: await redisCommandStats(redis),
    pg: { xacts: Number(stats.rows[0]?.xacts ?? 0), rows: Number(stats.rows[0]?.rows ?? 0) },
  };
}

export interface CountersProbe {
  stop(): Promise<Counters>;
}

export async function probeCounters(
  redisUrl: string,
  pool: pg.Pool,
  services: readonly Service[],
): Promise<CountersProbe> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const servicesBefore = serviceCounts(services);
  // Statistics a backend has not flushed yet would land in the wrong window.
  await pool.query('SELECT pg_stat_clear_snapshot()');
  const before = await snapshot(redis, pool);
  return {
    async stop() {
      try {
        await pool.query('SELECT pg_stat_clear_snapshot()');
        const after = await snapshot(redis, pool);
        // The children write their totals every 500 ms: both ends are as stale, the window as long.
        const servicesAfter = serviceCounts(services);
        const perService: Counters['services'] = {};
        for (const [name, counts] of servicesAfter) {
          const before = servicesBefore.get(name);
          perService[name] = {
            pgStatements: counts.pgStatements - (before?.pgStatements ?? 0),
            pg: minus(counts.pg, before?.pg),
            redisCommands: counts.redisCommands - (before?.redisCommands ?? 0),
            redis: minus(counts.redis, before?.redis),
          };
        }
        const deltas = [...after.redis].map(
          ([command, calls]) => [command, calls - (before.redis.get(command) ?? 0)] as const,
        );
        const top = deltas
          .filter(([, calls]) => calls > 0)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 6);
        return {
          redisCommands: deltas.reduce((sum, [, calls]) => sum + calls, 0),
          redisTop: Object.fromEntries(top),
          pgTransactions: after.pg.xacts - before.pg.xacts,
          pgRowsWritten: after.pg.rows - before.pg.rows,
          services: perService,
        };
      } finally {
        redis.disconnect();
      }
    },
  };
}
