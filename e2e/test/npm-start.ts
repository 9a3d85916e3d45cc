import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import { freePort, REPO_ROOT, spawnWithOutput, stopChild } from '@recordbase/launcher';
import { stackEnv } from '@recordbase/launcher/stack';

/** `npm start` as a user runs it (scripts/stack.ts), on free ports and a database of its own. */
export interface NpmStart {
  process: ReturnType<typeof spawnWithOutput>;
  ports: Record<
    | 'RECORDS_API_PORT'
    | 'UPLOAD_SERVICE_PORT'
    | 'WEBHOOK_DISPATCHER_PORT'
    | 'IMPORT_WORKER_PORT'
    | 'GATEWAY_PORT',
    number
  >;
  rootKey: string;
  dataDir: string;
  /** The database it was given (migrated already, as a test database is). */
  databaseUrl: string;
  /** Waits for `what` until `probe` gives a value, failing with the stack's output after `ms`. */
  until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms?: number): Promise<T>;
  stop(): Promise<void>;
}

export async function startNpmStart(env: NodeJS.ProcessEnv = {}): Promise<NpmStart> {
  const database: TestDatabase = await createTestDatabase();
  const dataDir = join(REPO_ROOT, '.data', 'e2e', `npm-start-${randomBytes(6).toString('hex')}`);
  const ports = {
    RECORDS_API_PORT: await freePort(),
    UPLOAD_SERVICE_PORT: await freePort(),
    WEBHOOK_DISPATCHER_PORT: await freePort(),
    IMPORT_WORKER_PORT: await freePort(),
    GATEWAY_PORT: await freePort(),
  };
  const stackVars = stackEnv({
    databaseUrl: database.url,
    storageDir: join(dataDir, 'files'),
    queuePrefix: `e2e-${randomBytes(6).toString('hex')}`,
    // As a user runs it: what a throwaway stack sets is left to npm start.
    throwaway: false,
    env: {
      ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
  const rootKey = stackVars.ROOT_API_KEY;
  const started = spawnWithOutput(
    process.execPath,
    ['--import', 'tsx', join(REPO_ROOT, 'scripts', 'stack.ts')],
    stackVars,
    'pipe',
  );
  const until = async <T>(
    what: string,
    probe: () => Promise<T | undefined> | T | undefined,
    ms = 60_000,
  ): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline)
        throw new Error(`${what} did not happen within ${ms / 1000} s:\n${started.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const stop = async () => {
    await stopChild(started.child, started.exited, 'SIGTERM', 30_000);
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await until('the stack being ready', () =>
      started.output().includes('[recordbase] ready:') ? true : undefined,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { process: started, ports, rootKey, dataDir, databaseUrl: database.url, until, stop };
}

/** Whether `url` answers 2xx; undefined while it does not, for `until`. */
export const answers = async (url: string): Promise<true | undefined> => {
  try {
    return (await fetch(url)).ok ? true : undefined;
  } catch {
    return undefined;
  }
};
