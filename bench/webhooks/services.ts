import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
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
  /** Its own PostgreSQL statements and Redis commands so far (count-hook.cjs), when counted. */
  counts(): ServiceCounts | undefined;
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
  /** Where each service writes its statement and command counts (count-hook.cjs); none: not counted. */
  countDir?: string;
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
  const countFile = settings.countDir ? join(settings.countDir, `${name}-${port}.json`) : undefined;
  const child = spawn(
    process.execPath,
    [
      ...(countFile ? ['--require', COUNT_HOOK] : []),
      ...(settings.execArgv[name] ?? []),
      '--import',
      'tsx',
      join(REPO_ROOT, 'apps', name, 'src', 'main.ts'),
    ],
    {
      cwd: REPO_ROOT,
      env: {
        ...env,
        PORT: String(port),
        ...(countFile
          ? { BENCH_COUNT_FILE: countFile, BENCH_COUNT_FROM: join(REPO_ROOT, 'apps', name) }
          : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
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
    counts: () => {
      if (!countFile || !existsSync(countFile)) return undefined;
      try {
        return JSON.parse(readFileSync(countFile, 'utf8')) as ServiceCounts;
      } catch {
        return undefined; // caught mid-write; the next read will do
      }
    },
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        // The dispatcher lets attempts in flight finish; a backlog must not hold the run up.
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
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
    // Both services use the same prefix: records-api publishes events where the dispatcher reads them.
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
