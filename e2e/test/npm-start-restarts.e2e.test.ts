import { execFileSync } from 'node:child_process';
import { REPO_ROOT } from '@recordbase/launcher';
import { answers, type NpmStart, startNpmStart } from './npm-start';

/**
 * `npm start` as a user runs it (scripts/stack.ts): a service that dies, as one killed by the
 * kernel for its memory does, is started again on its own, and takes no other process with it.
 */

jest.setTimeout(180_000);

let stack: NpmStart;

/** The stack's child processes, by the entry point each runs. */
function children(): Map<string, number> {
  const lines = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(stack.process.child.pid)], {
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

beforeAll(async () => {
  stack = await startNpmStart();
});

afterAll(async () => {
  await stack?.stop();
});

it('starts a service killed under it again, and the others run on untouched', async () => {
  const output = () => stack.process.output();
  const before = children();
  const recordsApi = before.get('apps/records-api/src/main.ts');
  expect(recordsApi).toBeDefined();
  expect(before.size).toBe(4);

  process.kill(recordsApi as number, 'SIGKILL');
  await stack.until('the report of the exit', () =>
    output().includes('records-api exited (SIGKILL); starting it again in 1 s (restart 1)')
      ? true
      : undefined,
  );
  await stack.until('records-api answering again', () =>
    answers(`http://127.0.0.1:${stack.ports.RECORDS_API_PORT}/readyz`),
  );
  await stack.until('the report of its return', () =>
    output().includes('records-api is running again') ? true : undefined,
  );

  const after = children();
  expect(after.get('apps/records-api/src/main.ts')).not.toBe(recordsApi);
  for (const [entry, pid] of before) {
    if (entry !== 'apps/records-api/src/main.ts') expect([entry, after.get(entry)]).toEqual([entry, pid]);
  }
  expect(stack.process.child.exitCode).toBeNull();
  const listed = await fetch(`http://127.0.0.1:${stack.ports.RECORDS_API_PORT}/api/v1/bases`, {
    headers: { authorization: `Bearer ${stack.rootKey}` },
  });
  expect(listed.status).toBe(200);
});
