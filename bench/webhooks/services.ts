import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newSecretKey } from '@recordbase/db';
import {
  freePort,
  startService as launch,
  REPO_ROOT,
  type RunningService,
  type ServiceName,
} from '@recordbase/launcher';

/**
 * The services (records-api, webhook-dispatcher, upload-service) as child processes, started by
 * @recordbase/launcher as `npm start` and the e2e stack start them, on free ports of 127.0.0.1,
 * with their real configuration from the environment. Used by the webhooks and the uploads
 * benchmarks.
 */

export type { ServiceName };

export interface Service extends RunningService {
  /** Its own PostgreSQL statements and Redis commands so far (count-hook.cjs), when counted. */
  counts(): ServiceCounts | undefined;
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

/** The last characters of a service's output kept for error messages. */
const MAX_OUTPUT = 200_000;

export async function startService(
  name: ServiceName,
  settings: ServiceSettings,
  env: NodeJS.ProcessEnv,
): Promise<Service> {
  const port = await freePort();
  const countFile = settings.countDir ? join(settings.countDir, `${name}-${port}.json`) : undefined;
  const running = await launch({
    name,
    port,
    env: countFile
      ? { ...env, BENCH_COUNT_FILE: countFile, BENCH_COUNT_FROM: join(REPO_ROOT, 'apps', name) }
      : env,
    execArgv: [...(countFile ? ['--require', COUNT_HOOK] : []), ...(settings.execArgv[name] ?? [])],
    output: 'pipe',
    keepOutput: MAX_OUTPUT,
    // The dispatcher lets attempts in flight finish; a backlog must not hold the run up.
    killAfterMs: 10_000,
  });
  const service: Service = {
    ...running,
    counts: () => {
      if (!countFile || !existsSync(countFile)) return undefined;
      try {
        return JSON.parse(readFileSync(countFile, 'utf8')) as ServiceCounts;
      } catch {
        return undefined; // caught mid-write; the next read will do
      }
    },
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
    REQUESTS_IN_FLIGHT_PER_KEY: '100000',
    // The uploads benchmark's one key sends gigabytes.
    UPLOAD_BYTES_PER_SECOND_PER_KEY: String(1024 ** 4),
    UPLOAD_BYTES_BURST_PER_KEY: String(1024 ** 4),
    DB_CONNECTIONS_PER_KEY: '10000',
    DB_SECONDS_PER_MINUTE_PER_KEY: '1000000',
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    LOG_LEVEL: settings.logLevel,
    HOST: '127.0.0.1',
    ...settings.tuning,
  };
}

export const newRootKey = () => `root_${randomBytes(24).toString('hex')}`;
export const newQueuePrefix = () => `bench-webhooks-${randomBytes(4).toString('hex')}`;
