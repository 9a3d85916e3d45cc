import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_ADMIN_URL } from '@recordbase/db/testing';
import { freePort, REPO_ROOT } from '@recordbase/launcher';
import { stackEnv } from '@recordbase/launcher/stack';

/**
 * What each image target runs, proved without a Docker engine: scripts/build-services.mjs (which
 * the Dockerfile's build stage runs) compiles every service into a directory outside the
 * repository, where no node_modules above could make up for a missing package; then each
 * service starts from its directory with plain `node`, as its image's CMD does, against a fresh
 * database that the migrate target creates.
 */

const SERVICES = [
  { name: 'records-api', main: 'main.js' },
  { name: 'upload-service', main: 'main.js' },
  { name: 'webhook-dispatcher', main: 'main.js' },
  { name: 'import-worker', main: 'main.js' },
] as const;

const out = mkdtempSync(join(tmpdir(), 'recordbase-images-'));
const children: ChildProcess[] = [];
const databaseUrl = (() => {
  const url = new URL(TEST_ADMIN_URL);
  url.pathname = `/rbimage_${randomBytes(6).toString('hex')}`;
  return url.toString();
})();

function run(args: string[], env: NodeJS.ProcessEnv = process.env, cwd = out) {
  const result = spawnSync(process.execPath, args, { cwd, env, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** dbmate, from the migrate target's own node_modules, as the image has it. */
function dbmate(command: string) {
  const url = new URL(databaseUrl);
  url.searchParams.set('sslmode', 'disable');
  return run([
    join(out, 'migrate', 'node_modules', 'dbmate', 'dist', 'cli.js'),
    '--url',
    url.toString(),
    command,
  ]);
}

beforeAll(() => {
  const built = run([join(REPO_ROOT, 'scripts', 'build-services.mjs'), '--out', out], process.env, REPO_ROOT);
  if (built.status !== 0) throw new Error(`build-services failed:\n${built.output}`);
}, 300_000);

afterAll(async () => {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
  if (existsSync(join(out, 'migrate'))) dbmate('drop');
  rmSync(out, { recursive: true, force: true });
});

describe('the compiled services', () => {
  it.each([...SERVICES.map((service) => service.name), 'migrate'])(
    '%s holds JavaScript and production packages only',
    (name) => {
      const dir = join(out, name);
      const packages = readdirSync(join(dir, 'node_modules'));
      for (const devOnly of ['tsx', 'typescript', 'jest', '@swc', 'prisma', 'esbuild', 'supertest'])
        expect(packages).not.toContain(devOnly);
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      expect(existsSync(join(dir, manifest.main))).toBe(true);
      // Our code is compiled: no TypeScript outside the npm packages (whose typings are theirs).
      const ours = readdirSync(dir, { recursive: true })
        .map(String)
        .filter((file) => !file.startsWith('node_modules'));
      expect(ours.filter((file) => /\.[cm]?tsx?$/.test(file))).toEqual([]);
      expect(ours).toContain(manifest.main);
    },
  );

  it('migrate creates and migrates a new database with plain node', () => {
    const migrated = run([join(out, 'migrate', 'bin', 'migrate.js')], {
      PATH: process.env.PATH,
      DATABASE_URL: databaseUrl,
    });
    expect(migrated.output).toContain('migrations applied');
    expect(migrated.status).toBe(0);
  });

  it('every service starts from its directory with plain node and becomes ready', async () => {
    const env = stackEnv({
      databaseUrl,
      storageDir: join(out, 'files'),
      // Nothing of this process's environment: an image has only what it sets.
      inherit: { PATH: process.env.PATH },
      throwaway: false,
      // What the images set.
      env: { NODE_ENV: 'production', HOST: '0.0.0.0', LOG_LEVEL: 'warn' },
    });
    const rootKey = env.ROOT_API_KEY;
    const ports: Record<string, number> = {};
    const logs: Record<string, string> = {};
    for (const service of SERVICES) {
      ports[service.name] = await freePort();
      logs[service.name] = '';
      const child = spawn(process.execPath, [service.main], {
        cwd: join(out, service.name),
        env: { ...env, PORT: String(ports[service.name]) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const keep = (chunk: Buffer) => {
        logs[service.name] += chunk.toString();
      };
      child.stdout?.on('data', keep);
      child.stderr?.on('data', keep);
      children.push(child);
    }

    for (const service of SERVICES) {
      const status = await readyStatus(ports[service.name] as number, children, 60_000);
      if (status !== 200)
        throw new Error(`${service.name} never became ready (last: ${status}):\n${logs[service.name]}`);
      expect(status).toBe(200);
    }

    // A real request through Prisma (its query compiler is wasm loaded from node_modules at run time).
    const api = `http://127.0.0.1:${ports['records-api']}/api/v1`;
    const headers = { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' };
    const created = await fetch(`${api}/bases`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'From the image' }),
    });
    expect(created.status).toBe(201);
    const listed = await fetch(`${api}/bases`, { headers });
    const { bases } = (await listed.json()) as { bases: { name: string }[] };
    expect(bases.map((base) => base.name)).toContain('From the image');
  });
});

/** Polls /readyz until 200, a service exits, or the deadline passes; the last status seen. */
async function readyStatus(
  port: number,
  processes: ChildProcess[],
  deadlineMs: number,
): Promise<number | string> {
  const deadline = Date.now() + deadlineMs;
  let last: number | string = 'no answer';
  while (Date.now() < deadline) {
    const exited = processes.find((child) => child.exitCode !== null);
    if (exited) return `a service exited with ${exited.exitCode}`;
    try {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      last = response.status;
      if (last === 200) return last;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return last;
}
