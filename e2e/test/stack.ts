import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import { freePort, REPO_ROOT, type ServiceName, serviceNames } from '@recordbase/launcher';
import { stackEnv, startStack as startServices } from '@recordbase/launcher/stack';

/**
 * The services as child processes, started by @recordbase/launcher as `npm start` starts them,
 * on free ports, against a throwaway database. Each stack gets its own BullMQ prefix, so stacks
 * never see each other's jobs.
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
  const env = stackEnv({
    databaseUrl: database.url,
    redisUrl: options.redisUrl,
    storageDir: join(REPO_ROOT, '.data', 'e2e', randomBytes(6).toString('hex')),
    queuePrefix: `e2e-${randomBytes(6).toString('hex')}`,
    unbounded: true,
    env: options.env,
  });
  // Keeps all that each process printed, for logs() and for a service that does not come up.
  const stack = await startServices({ env });
  const { rootKey, apiUrl } = stack;
  return {
    rootKey,
    apiUrl,
    ports: stack.ports,
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
    start: async (name) => {
      await stack.start(name);
    },
    kill: (name, signal = 'SIGTERM') => stack.stop(name, signal),
    async stop() {
      await stack.stopAll();
      await database.drop();
    },
    logs: (name) => stack.service(name)?.output() ?? '',
    pid: (name) => stack.service(name)?.pid,
  };
}
