import { execFile } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createDb } from '@recordbase/db/client';
import { migrate } from '@recordbase/db/migrate';
import type { TestDatabase } from '@recordbase/db/testing';
import { freePort } from '@recordbase/launcher';

/**
 * A PostgreSQL 15 cluster of the test's own (initdb into a temp dir, its own port and socket
 * dir), so a test may stop and restart it without disturbing the machine's shared PostgreSQL.
 * initdb refuses root: as root, the cluster is owned and run by the `postgres` user.
 */

const run = promisify(execFile);
const BIN = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';
const asRoot = process.getuid?.() === 0;

export interface PrivatePostgres {
  port: number;
  /** A migrated database in this cluster, for startStack's `database`. */
  database: TestDatabase;
  /** `immediate` is a crash (no checkpoint, clients cut off); `fast` a clean shutdown. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster for good and removes its files. */
  destroy(): Promise<void>;
}

async function asOwner(command: string, args: string[]): Promise<void> {
  const file = join(BIN, command);
  if (asRoot) await run('runuser', ['-u', 'postgres', '--', file, ...args]);
  else await run(file, args);
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const root = mkdtempSync(join(tmpdir(), 'rb-pg-'));
  const data = join(root, 'data');
  const socketDir = root;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(root, Number(stdout.trim()), Number(gid.trim()));
  }
  chmodSync(root, 0o755);
  const port = await freePort();
  await asOwner('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const start = () =>
    asOwner('pg_ctl', [
      '-D',
      data,
      '-w',
      '-l',
      join(root, 'server.log'),
      '-o',
      `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`,
      'start',
    ]);
  const stop = (mode: 'fast' | 'immediate' = 'fast') =>
    asOwner('pg_ctl', ['-D', data, '-w', '-m', mode, 'stop']);
  await start();
  const url = `postgresql://postgres@127.0.0.1:${port}/recordbase`;
  await migrate(url);
  let stopped = false;
  return {
    port,
    database: {
      name: 'recordbase',
      url,
      // The whole cluster goes in destroy(); nothing to drop one by one.
      drop: async () => {},
    },
    stop,
    start,
    async destroy() {
      if (stopped) return;
      stopped = true;
      await stop('immediate').catch(() => {});
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A pool on a database, for the test's own reads (and its own fault injection). */
export async function withPool<T>(
  url: string,
  use: (pool: ReturnType<typeof createDb>['pool']) => Promise<T>,
): Promise<T> {
  const db = createDb(url, { maxConnections: 2, applicationName: 'recordbase-e2e-faults' });
  try {
    return await use(db.pool);
  } finally {
    await db.close();
  }
}
