import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { newSecretKey } from '@recordbase/db';

/**
 * The services (records-api, webhook-dispatcher, upload-service) as child processes, started the
 * way `npm start` and the e2e stack (e2e/test/stack.ts) start them: `node --import tsx
 * apps/<name>/src/main.ts`, on free ports of 127.0.0.1, with their real configuration from the
 * environment. Used by the webhooks and the uploads benchmarks.
 */

export const REPO_ROOT = join(__dirname, '..', '..');
export type ServiceName = 'records-api' | 'webhook-dispatcher' | 'upload-service';

export interface Service {
  name: ServiceName;
  pid: number;
  port: number;
  /** What the process printed (kept for error messages). */
  output(): string;
  stop(): Promise<void>;
}

export interface ServiceSettings {
  databaseUrl: string;
  redisUrl: string;
  rootApiKey: string;
  queuePrefix: string;
  logLevel: string;
  /** DISPATCH_* and WEBHOOK_* variables of the run. */
  tuning: Record<string, string>;
  execArgv: Partial<Record<ServiceName, string[]>>;
}

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

async function waitReady(port: number, child: ChildProcess, name: string, output: () => string) {
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

const MAX_OUTPUT = 200_000;

export async function startService(name: ServiceName, settings: ServiceSettings, env: NodeJS.ProcessEnv) {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [...(settings.execArgv[name] ?? []), '--import', 'tsx', join(REPO_ROOT, 'apps', name, 'src', 'main.ts')],
    { cwd: REPO_ROOT, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-MAX_OUTPUT);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  await waitReady(port, child, name, () => output);
  const service: Service = {
    name,
    pid: child.pid ?? 0,
    port,
    output: () => output,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        // The dispatcher lets attempts in flight finish; a backlog must not hold the run up.
        const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.once('exit', () => {
          clearTimeout(kill);
          done();
        });
        child.kill('SIGTERM');
      }),
  };
  return service;
}

/** Environment shared by the services (as e2e/test/stack.ts sets it), plus the run's tuning. */
export function serviceEnv(settings: ServiceSettings): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: settings.databaseUrl,
    REDIS_URL: settings.redisUrl,
    ROOT_API_KEY: settings.rootApiKey,
    WEBHOOK_SECRET_KEY: newSecretKey(),
    // records-api signs file links with it and upload-service honours them: one for the run.
    FILE_TOKEN_SECRET: randomBytes(32).toString('base64url'),
    QUEUE_PREFIX: settings.queuePrefix,
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    LOG_LEVEL: settings.logLevel,
    HOST: '127.0.0.1',
    ...settings.tuning,
  };
}

export const newRootKey = () => `root_${randomBytes(24).toString('hex')}`;
export const newQueuePrefix = () => `bench-webhooks-${randomBytes(4).toString('hex')}`;
