import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { newSecretKey } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import { freePort, REPO_ROOT, spawnWithOutput, stopChild } from '@recordbase/launcher';

/**
 * `npm start` as a user runs it (scripts/stack.ts): a service that dies, as one killed by the
 * kernel for its memory does, is started again on its own, and takes no other process with it.
 */

jest.setTimeout(180_000);

let database: TestDatabase;
let stack: ReturnType<typeof spawnWithOutput>;
let ports: Record<string, number>;
const dataDir = join(REPO_ROOT, '.data', 'e2e', `npm-start-${randomBytes(6).toString('hex')}`);
const rootKey = `root_${randomBytes(24).toString('hex')}`;

/** The stack's child processes, by the entry point each runs. */
function children(): Map<string, number> {
  const lines = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(stack.child.pid)], {
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean);
  const byEntry = new Map<string, number>();
  for (const line of lines) {
    const [pid, ...args] = line.trim().split(/\s+/);
    const entry = args.find((arg) => arg.endsWith('main.ts'));
    if (entry) byEntry.set(entry.slice(REPO_ROOT.length + 1), Number(pid));
  }
  return byEntry;
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`${what} did not happen within ${ms / 1000} s:\n${stack.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const answers = async (url: string) => {
  try {
    return (await fetch(url)).ok ? true : undefined;
  } catch {
    return undefined;
  }
};

beforeAll(async () => {
  database = await createTestDatabase();
  ports = {
    RECORDS_API_PORT: await freePort(),
    UPLOAD_SERVICE_PORT: await freePort(),
    WEBHOOK_DISPATCHER_PORT: await freePort(),
    IMPORT_WORKER_PORT: await freePort(),
    GATEWAY_PORT: await freePort(),
  };
  stack = spawnWithOutput(
    process.execPath,
    ['--import', 'tsx', join(REPO_ROOT, 'scripts', 'stack.ts')],
    {
      ...process.env,
      ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])),
      DATABASE_URL: database.url,
      ROOT_API_KEY: rootKey,
      WEBHOOK_SECRET_KEY: newSecretKey(),
      FILE_TOKEN_SECRET: randomBytes(32).toString('base64url'),
      DATA_DIR: dataDir,
      STORAGE_DIR: join(dataDir, 'files'),
      QUEUE_PREFIX: `e2e-${randomBytes(6).toString('hex')}`,
      LOG_LEVEL: 'warn',
    },
    'pipe',
  );
  await until('the stack being ready', () =>
    stack.output().includes('[recordbase] ready:') ? true : undefined,
  );
});

afterAll(async () => {
  if (stack) await stopChild(stack.child, stack.exited, 'SIGTERM', 30_000);
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

it('starts a service killed under it again, and the others run on untouched', async () => {
  const before = children();
  const recordsApi = before.get('apps/records-api/src/main.ts');
  expect(recordsApi).toBeDefined();
  expect(before.size).toBe(4);

  process.kill(recordsApi as number, 'SIGKILL');
  await until('the report of the exit', () =>
    stack.output().includes('records-api exited (SIGKILL); starting it again in 1 s (restart 1)')
      ? true
      : undefined,
  );
  await until('records-api answering again', () =>
    answers(`http://127.0.0.1:${ports.RECORDS_API_PORT}/readyz`),
  );
  await until('the report of its return', () =>
    stack.output().includes('records-api is running again') ? true : undefined,
  );

  const after = children();
  expect(after.get('apps/records-api/src/main.ts')).not.toBe(recordsApi);
  for (const [entry, pid] of before) {
    if (entry !== 'apps/records-api/src/main.ts') expect([entry, after.get(entry)]).toEqual([entry, pid]);
  }
  expect(stack.child.exitCode).toBeNull();
  const listed = await fetch(`http://127.0.0.1:${ports.RECORDS_API_PORT}/api/v1/bases`, {
    headers: { authorization: `Bearer ${rootKey}` },
  });
  expect(listed.status).toBe(200);
});
