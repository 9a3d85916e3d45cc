import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { newSecretKey } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import {
  freePort,
  REPO_ROOT,
  type RunningService,
  type ServiceName,
  serviceNames,
  startService,
  stopAll,
} from '@recordbase/launcher';

/**
 * The three services as child processes, started by @recordbase/launcher as `npm start` starts
 * them, on free ports, against a throwaway database. Each stack gets its own BullMQ prefix, so
 * stacks never see each other's jobs.
 */

export { freePort, type ServiceName, serviceNames };

export interface Stack {
  rootKey: string;
  apiUrl: string;
  ports: Record<ServiceName, number>;
  database: TestDatabase;
  /** The services' environment (PORT aside), for more processes of the same stack. */
  env: NodeJS.ProcessEnv;
  /** Calls the JSON API with the root key. */
  // biome-ignore lint/suspicious/noExplicitAny: the tests assert on the answers themselves.
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  start(name: ServiceName): Promise<void>;
  kill(name: ServiceName, signal?: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
  logs(name: ServiceName): string;
  /** The running process of a service, e.g. to read its memory from /proc. */
  pid(name: ServiceName): number | undefined;
}

export interface StackOptions {
  redisUrl?: string;
  env?: Record<string, string>;
  /** A database of the test's own (e.g. in a private PostgreSQL); a clone on the shared one otherwise. */
  database?: TestDatabase;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const database = options.database ?? (await createTestDatabase());
  const rootKey = `root_${randomBytes(24).toString('hex')}`;
  const ports = {
    'records-api': await freePort(),
    'upload-service': await freePort(),
    'webhook-dispatcher': await freePort(),
    'import-worker': await freePort(),
  } satisfies Record<ServiceName, number>;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: options.redisUrl ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    ROOT_API_KEY: rootKey,
    WEBHOOK_SECRET_KEY: newSecretKey(),
    FILE_TOKEN_SECRET: randomBytes(32).toString('base64url'),
    STORAGE_DIR: join(REPO_ROOT, '.data', 'e2e', randomBytes(6).toString('hex')),
    QUEUE_PREFIX: `e2e-${randomBytes(6).toString('hex')}`,
    RATE_LIMIT_PER_SECOND: '100000',
    RATE_LIMIT_BURST: '100000',
    REQUESTS_IN_FLIGHT_PER_KEY: '100000',
    UPLOAD_BYTES_PER_SECOND_PER_KEY: String(1024 ** 4),
    UPLOAD_BYTES_BURST_PER_KEY: String(1024 ** 4),
    DB_CONNECTIONS_PER_KEY: '10000',
    DB_SECONDS_PER_MINUTE_PER_KEY: '1000000',
    IMPORT_SECONDS_PER_MINUTE_PER_KEY: '1000000',
    SQL_IN_FLIGHT_PER_BASE: '1000',
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    ...options.env,
  };
  const services = new Map<ServiceName, RunningService>();

  // Keeps all that the process printed, for logs() and for a service that does not come up.
  const start = async (name: ServiceName) => {
    services.set(name, await startService({ name, port: ports[name], env, output: 'pipe' }));
  };

  const kill = async (name: ServiceName, signal: NodeJS.Signals = 'SIGTERM') => {
    await services.get(name)?.stop(signal);
  };

  await Promise.all(serviceNames.map(start));
  const apiUrl = `http://127.0.0.1:${ports['records-api']}/api/v1`;
  return {
    rootKey,
    apiUrl,
    ports,
    database,
    env,
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
      await stopAll([...services.values()]);
      await database.drop();
    },
    logs: (name) => services.get(name)?.output() ?? '',
    pid: (name) => services.get(name)?.pid,
  };
}
