import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { newSecretKey } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';

/**
 * The three services as child processes (`node --import tsx apps/<name>/src/main.ts`, what
 * `npm start` runs), on free ports, against a throwaway database. Each stack gets its own BullMQ
 * prefix, so stacks never see each other's jobs.
 */

const repoRoot = join(__dirname, '..', '..');
export const serviceNames = ['records-api', 'upload-service', 'webhook-dispatcher'] as const;
export type ServiceName = (typeof serviceNames)[number];

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface Stack {
  rootKey: string;
  apiUrl: string;
  ports: Record<ServiceName, number>;
  database: TestDatabase;
  /** Calls the JSON API with the root key. */
  // biome-ignore lint/suspicious/noExplicitAny: the tests assert on the answers themselves.
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  start(name: ServiceName): Promise<void>;
  kill(name: ServiceName, signal?: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
  logs(name: ServiceName): string;
}

export interface StackOptions {
  redisUrl?: string;
  env?: Record<string, string>;
}

async function waitReady(
  port: number,
  child: ChildProcess,
  name: string,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}):\n${output()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 200));
  }
  throw new Error(`${name} not ready on ${port}:\n${output()}`);
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const database = await createTestDatabase();
  const rootKey = `root_${randomBytes(24).toString('hex')}`;
  const ports = {
    'records-api': await freePort(),
    'upload-service': await freePort(),
    'webhook-dispatcher': await freePort(),
  } satisfies Record<ServiceName, number>;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: options.redisUrl ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    ROOT_API_KEY: rootKey,
    WEBHOOK_SECRET_KEY: newSecretKey(),
    FILE_TOKEN_SECRET: randomBytes(32).toString('base64url'),
    STORAGE_DIR: join(repoRoot, '.data', 'e2e', randomBytes(6).toString('hex')),
    QUEUE_PREFIX: `e2e-${randomBytes(6).toString('hex')}`,
    RATE_LIMIT_PER_SECOND: '100000',
    RATE_LIMIT_BURST: '100000',
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    ...options.env,
  };
  const children = new Map<ServiceName, ChildProcess>();
  const output = new Map<ServiceName, string>();

  const start = async (name: ServiceName) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(repoRoot, 'apps', name, 'src', 'main.ts')],
      {
        cwd: repoRoot,
        env: { ...env, PORT: String(ports[name]) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    output.set(name, '');
    const append = (chunk: Buffer) => output.set(name, (output.get(name) ?? '') + chunk.toString());
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    children.set(name, child);
    await waitReady(ports[name], child, name, () => output.get(name) ?? '');
  };

  const kill = async (name: ServiceName, signal: NodeJS.Signals = 'SIGTERM') => {
    const child = children.get(name);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill(signal);
    await exited;
  };

  await Promise.all(serviceNames.map(start));
  const apiUrl = `http://127.0.0.1:${ports['records-api']}/api/v1`;
  return {
    rootKey,
    apiUrl,
    ports,
    database,
    async api(method, path, body) {
      const response = await fetch(`${apiUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    start,
    kill,
    async stop() {
      await Promise.all(serviceNames.map((name) => kill(name)));
      await database.drop();
    },
    logs: (name) => output.get(name) ?? '',
  };
}
