import { randomBytes } from 'node:crypto';
import {
  freePort,
  type RunningService,
  type ServiceName,
  type ServiceOptions,
  serviceNames,
  startService,
  stopAll,
} from './index';

/**
 * One stack of the services: the environment they share (stackEnv) and the services started with
 * it (startStack). `npm start`, the e2e tests, the client's tests and the benchmarks build their
 * stacks here, and the apps' tests take their secrets from stackSecrets, so a variable a service
 * comes to require is added once; what each caller adds (its database, log prefixes, counters,
 * flags) stays with the caller.
 */

/** The secrets the services of one stack share. */
export interface StackSecrets {
  /** The operator's key, which every route accepts. */
  ROOT_API_KEY: string;
  /** Encrypts webhook signing secrets at rest (32 bytes, base64). */
  WEBHOOK_SECRET_KEY: string;
  /** Signs the file links records-api hands out and upload-service honours. */
  FILE_TOKEN_SECRET: string;
}

/** New secrets, for one stack. */
export function stackSecrets(): StackSecrets {
  return {
    ROOT_API_KEY: `root_${randomBytes(24).toString('hex')}`,
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    FILE_TOKEN_SECRET: randomBytes(32).toString('base64url'),
  };
}

/**
 * Per-key bounds far above what a test or benchmark sends with its one key: they measure or check
 * something else, and the root key alone would otherwise be throttled.
 */
const UNBOUNDED: Readonly<Record<string, string>> = {
  RATE_LIMIT_PER_SECOND: '1000000',
  RATE_LIMIT_BURST: '1000000',
  REQUESTS_IN_FLIGHT_PER_KEY: '100000',
  CHANGE_STREAMS_PER_KEY: '100000',
  UPLOAD_BYTES_PER_SECOND_PER_KEY: String(1024 ** 4),
  UPLOAD_BYTES_BURST_PER_KEY: String(1024 ** 4),
  DB_CONNECTIONS_PER_KEY: '10000',
  DB_SECONDS_PER_MINUTE_PER_KEY: '1000000',
  IMPORT_SECONDS_PER_MINUTE_PER_KEY: '1000000',
  SQL_IN_FLIGHT_PER_BASE: '1000',
};

export interface StackEnvOptions {
  databaseUrl: string;
  /** Default: this process's REDIS_URL, else Redis on 127.0.0.1:6379. */
  redisUrl?: string;
  /** QUEUE_PREFIX; without it the services derive one from the database's name. */
  queuePrefix?: string;
  /** STORAGE_DIR of the local-disk storage. */
  storageDir?: string;
  /** Secrets kept from before (npm start's survive restarts); the others are new. */
  secrets?: Partial<StackSecrets>;
  /**
   * A stack of a test or benchmark (the default): it listens on loopback only, logs warnings and
   * errors only, runs one records-api process, and may deliver webhooks to receivers on loopback. `false` (npm start): those are
   * left to the environment inherited.
   */
  throwaway?: boolean;
  /** Lifts the per-key bounds (rate, requests and queries in flight, database, import and upload budgets). */
  unbounded?: boolean;
  /** Variables of the caller's own, added last over all the others. */
  env?: NodeJS.ProcessEnv;
  /** What the services inherit (default: this process's environment). */
  inherit?: NodeJS.ProcessEnv;
}

/** The environment every service of a stack shares (PORT aside, which each is given). */
export type StackEnv = NodeJS.ProcessEnv & StackSecrets & { DATABASE_URL: string; REDIS_URL: string };

export function stackEnv(options: StackEnvOptions): StackEnv {
  const inherited = options.inherit ?? process.env;
  return {
    ...inherited,
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    ...stackSecrets(),
    ...options.secrets,
    ...(options.queuePrefix ? { QUEUE_PREFIX: options.queuePrefix } : {}),
    ...(options.storageDir ? { STORAGE_DIR: options.storageDir } : {}),
    ...(options.unbounded ? UNBOUNDED : {}),
    ...(options.throwaway === false
      ? {}
      : {
          WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
          LOG_LEVEL: 'warn',
          HOST: '127.0.0.1',
          // Tests run many stacks at once; the one that checks several processes asks for them.
          RECORDS_API_PROCESSES: '1',
        }),
    ...options.env,
  } as StackEnv;
}

/** What a caller sets of a service's launch besides its name, port and the stack's environment. */
export type LaunchOptions = Partial<Omit<ServiceOptions, 'name' | 'port' | 'env'>> & {
  /** Variables added over the stack's for this service. */
  env?: NodeJS.ProcessEnv;
};

export interface StackOptions {
  env: StackEnv;
  /** The services started now, all at once (default: all four); the others by start(). */
  services?: readonly ServiceName[];
  /** Each service's port (default: a free one); a service started again keeps its port. */
  ports?: Partial<Record<ServiceName, number>>;
  /** The caller's part of each launch (default: output kept, 'pipe'). */
  launch?: (name: ServiceName, port: number) => LaunchOptions;
}

export interface RunningStack {
  env: StackEnv;
  rootKey: string;
  ports: Record<ServiceName, number>;
  /** records-api's JSON API, `http://127.0.0.1:<port>/api/v1`. */
  apiUrl: string;
  /** The service's last process, running or not; undefined if never started. */
  service(name: ServiceName): RunningService | undefined;
  /** Starts the service (again, on its port), with `options` over the launch's; resolves once ready. */
  start(name: ServiceName, options?: LaunchOptions): Promise<RunningService>;
  /** Stops the service with `signal` (default SIGTERM), resolving once it has exited. */
  stop(name: ServiceName, signal?: NodeJS.Signals): Promise<void>;
  /** Stops every service, resolving once all have exited. */
  stopAll(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts the stack's services with its environment; if one never becomes ready, stops the others and throws. */
export async function startStack(options: StackOptions): Promise<RunningStack> {
  const ports = {} as Record<ServiceName, number>;
  for (const name of serviceNames) ports[name] = options.ports?.[name] ?? (await freePort());
  const running = new Map<ServiceName, RunningService>();

  const start = async (name: ServiceName, extra: LaunchOptions = {}) => {
    const port = ports[name];
    const launch = options.launch?.(name, port) ?? {};
    const service = await startService({
      output: 'pipe',
      ...launch,
      ...extra,
      name,
      port,
      env: { ...options.env, ...launch.env, ...extra.env },
    });
    running.set(name, service);
    return service;
  };

  const stack: RunningStack = {
    env: options.env,
    rootKey: options.env.ROOT_API_KEY,
    ports,
    apiUrl: `http://127.0.0.1:${ports['records-api']}/api/v1`,
    service: (name) => running.get(name),
    start,
    stop: async (name, signal) => {
      await running.get(name)?.stop(signal);
    },
    stopAll: (signal) => stopAll([...running.values()], signal),
  };

  // Every start settles before a failure is thrown, so none is left running behind it.
  const started = await Promise.allSettled((options.services ?? serviceNames).map((name) => start(name)));
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) {
    await stack.stopAll();
    throw failed.reason;
  }
  return stack;
}
