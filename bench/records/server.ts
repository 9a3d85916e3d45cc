import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { createDb } from '@recordbase/db';
import { stackSecrets } from '@recordbase/launcher/stack';
import { createEventPublisher, createImportQueue } from '@recordbase/queues';
import { createApp } from '@recordbase/records-api/app';
import { closeServer, listen } from '@recordbase/server-kit/lifecycle';
import { createLogger } from '@recordbase/server-kit/logger';
import { defaultProcesses } from '@recordbase/server-kit/processes';
import { Redis } from 'ioredis';
import type { StackRoots } from '../lib/cpu';
import { deleteQueueKeys } from '../lib/database';
import { newQueuePrefix, startBenchStack } from '../lib/stack';

/**
 * The records-api as the benchmark runs it: the real createApp with a real PostgreSQL pool and a
 * real Redis (rate limiter on, limits far above what the benchmark sends), logger silent.
 */

export interface ServerOptions {
  databaseUrl: string;
  redisUrl: string;
  rootApiKey: string;
  poolSize: number;
  /** SQL_MAX_CONNECTIONS; the service's default when absent. */
  sqlMaxConnections?: number;
}

export interface RunningServer {
  baseUrl: string;
  /** Where it runs, for the report. */
  mode: 'child process' | 'in-process' | 'launcher';
  /** What the requests go through, for the report (`launcher` only). */
  path?: string;
  pid: number;
  /** The processes whose CPU is the stack's, by role (cpu.ts). */
  roots(): StackRoots;
  close(): Promise<void>;
}

/** Starts the app on an ephemeral port of 127.0.0.1 in this process. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const db = createDb(options.databaseUrl, {
    applicationName: 'records-api-bench',
    maxConnections: options.poolSize,
    // Deep scans of a million rows at concurrency 16 queue for seconds on 2 cores: the benchmark
    // measures them rather than the production timeout.
    statementTimeoutMs: 120_000,
  });
  const redis = new Redis(options.redisUrl, {
    keyPrefix: `bench:${randomBytes(6).toString('hex')}:`,
    maxRetriesPerRequest: 1,
  });
  const logger = createLogger('records-api-bench', process.env.BENCH_SERVER_LOG ?? 'silent');
  // No dispatcher runs here: the events go to a queue of their own, deleted at the end.
  const queuePrefix = `bench-records-${randomBytes(6).toString('hex')}`;
  const events = createEventPublisher({ redisUrl: options.redisUrl, prefix: queuePrefix, logger });
  const imports = createImportQueue({ redisUrl: options.redisUrl, prefix: queuePrefix, logger });
  // A stack's secrets, as the launcher makes them; the root key is the benchmark's own.
  const secrets = stackSecrets();
  const app = createApp({
    db,
    redis,
    events,
    imports,
    logger,
    config: {
      ROOT_API_KEY: options.rootApiKey,
      RATE_LIMIT_PER_SECOND: 1_000_000,
      RATE_LIMIT_BURST: 1_000_000,
      // The cases run up to 16 requests at once with one key, the sql suite on one base.
      REQUESTS_IN_FLIGHT_PER_KEY: 100_000,
      DB_CONNECTIONS_PER_KEY: 10_000,
      DB_SECONDS_PER_MINUTE_PER_KEY: 1_000_000,
      SQL_IN_FLIGHT_PER_BASE: 1000,
      JSON_BODY_LIMIT: '10mb',
      WEBHOOK_SECRET_KEY: secrets.WEBHOOK_SECRET_KEY,
      TRUST_PROXY: 'loopback',
      AUTH_FAILURE_BURST: 20,
      AUTH_FAILURES_PER_MINUTE: 60,
      FILE_TOKEN_SECRET: secrets.FILE_TOKEN_SECRET,
      FILE_LINK_TTL_SECONDS: 3600,
      ...(options.sqlMaxConnections ? { SQL_MAX_CONNECTIONS: options.sqlMaxConnections } : {}),
    },
  });
  const server = createServer(app);
  const port = await listen(server, 0, '127.0.0.1');
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    mode: 'in-process',
    pid: process.pid,
    // records-api's CPU is the load generator's here: a profiling aid, not a measurement.
    roots: () => ({ recordsApi: [], services: [] }),
    async close() {
      await closeServer(server);
      await events.close();
      await imports.close();
      await deleteQueueKeys(options.redisUrl, queuePrefix);
      redis.disconnect();
      await db.close();
    },
  };
}

/**
 * Starts the app in a child process (server-child.ts), so the load generator's CPU does not
 * count against the server's event loop. The child inherits the tsx loader through execArgv.
 */
export function startServerProcess(options: ServerOptions): Promise<RunningServer> {
  const extraFlags = (process.env.BENCH_SERVER_EXEC_ARGV ?? '').split(' ').filter(Boolean);
  const child = fork(join(__dirname, 'server-child.ts'), [], {
    execArgv: [...process.execArgv, ...extraFlags],
    env: { ...process.env, BENCH_SERVER_OPTIONS: JSON.stringify(options) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const failed = (reason: string) => reject(new Error(`records-api child process ${reason}`));
    child.once('error', (error) => failed(error.message));
    child.once('exit', (code) => failed(`exited with code ${code} before listening`));
    child.once('message', (message: { port?: number }) => {
      child.removeAllListeners('exit');
      if (!message.port) return failed('sent no port');
      resolve({
        baseUrl: `http://127.0.0.1:${message.port}`,
        mode: 'child process',
        pid: child.pid ?? 0,
        roots: () => ({ recordsApi: [child.pid ?? 0], services: [] }),
        close: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

/**
 * The stack as `npm start` runs it, started by @recordbase/launcher (../lib/stack.ts): records-api
 * (its own main.ts, a process per core unless RECORDS_API_PROCESSES says otherwise), upload-service,
 * the webhook dispatcher consuming the events the writes make, and the import worker, each with
 * its configuration from the environment and the per-key bounds lifted; with `gateway`, nginx in
 * front, which the requests then go through.
 */
export async function startServerByLauncher(options: {
  databaseUrl: string;
  redisUrl: string;
  /** Variables of the run's own (SQL_MAX_CONNECTIONS, STATEMENT_TIMEOUT_MS). */
  tuning?: Record<string, string>;
  gateway?: boolean;
}): Promise<RunningServer & { rootKey: string }> {
  const queuePrefix = newQueuePrefix('records');
  const stack = await startBenchStack({
    databaseUrl: options.databaseUrl,
    redisUrl: options.redisUrl,
    queuePrefix,
    logLevel: process.env.BENCH_SERVER_LOG ?? 'warn',
    tuning: options.tuning ?? {},
    execArgv: {
      'records-api': (process.env.BENCH_SERVER_EXEC_ARGV ?? '').split(' ').filter(Boolean),
      'webhook-dispatcher': (process.env.BENCH_DISPATCHER_EXEC_ARGV ?? '').split(' ').filter(Boolean),
    },
    services: ['records-api', 'upload-service', 'webhook-dispatcher', 'import-worker'],
    gateway: options.gateway,
  });
  const api = stack.service('records-api');
  const processes = process.env.RECORDS_API_PROCESSES ?? String(defaultProcesses());
  return {
    baseUrl: stack.gateway ? stack.gateway.url : `http://127.0.0.1:${api.port}`,
    mode: 'launcher',
    path: `the stack as npm start runs it: ${stack.gateway ? 'the nginx gateway, then ' : ''}records-api (${processes} process${processes === '1' ? '' : 'es'}), beside upload-service, webhook-dispatcher and import-worker`,
    pid: api.pid,
    roots: () => {
      const pids = stack.pids();
      return {
        recordsApi: pids.filter((entry) => entry.name === 'records-api').map((entry) => entry.pid),
        services: pids.filter((entry) => entry.name !== 'records-api').map((entry) => entry.pid),
      };
    },
    rootKey: stack.rootKey,
    async close() {
      await stack.stop();
      await deleteQueueKeys(options.redisUrl, queuePrefix);
    },
  };
}
