import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  freePort,
  REPO_ROOT,
  type RunningService,
  type ServiceName,
  serviceNames,
} from '@recordbase/launcher';
import { findNginx, launchGateway, type RunningGateway } from '@recordbase/launcher/gateway';
import { type LaunchOptions, type StackEnv, stackEnv, startStack } from '@recordbase/launcher/stack';
import { defaultProcesses } from '@recordbase/server-kit/processes';

/**
 * The services of a benchmark run, started by @recordbase/launcher as `npm start` and the e2e
 * stack start them, on free ports of 127.0.0.1, with their real configuration from the
 * environment and the per-key bounds lifted (one key sends the whole load). Used by the webhooks,
 * uploads and imports suites.
 */

export type { RunningService as Service, ServiceName };

export interface BenchStackSettings {
  databaseUrl: string;
  redisUrl: string;
  /** BullMQ's prefix of the run (newQueuePrefix), which all its services share. */
  queuePrefix: string;
  logLevel: string;
  /** The run's own variables (DISPATCH_*, WEBHOOK_*, STORAGE_*). */
  tuning: Record<string, string>;
  execArgv: Partial<Record<ServiceName, string[]>>;
  /** What a suite adds to a service's launch (its counters' hook and variables). */
  launch?: (name: ServiceName, port: number) => { env?: NodeJS.ProcessEnv; execArgv?: string[] };
  /** The services started at once; the others by start(). */
  services: readonly ServiceName[];
  /** Also the nginx gateway in front of records-api and upload-service, as npm start runs it. */
  gateway?: boolean;
}

export interface BenchStack {
  rootKey: string;
  /** A service started at once. */
  service(name: ServiceName): RunningService;
  /** Starts the service (again) with `env` added to the run's, resolving once it is ready. */
  start(name: ServiceName, env?: NodeJS.ProcessEnv): Promise<RunningService>;
  /** The gateway, when asked for. */
  gateway?: RunningGateway;
  /** The pids of the services running now, and the gateway's (each with its children). */
  pids(): { name: ServiceName | 'gateway'; pid: number }[];
  /** Stops every service of the run. */
  stop(): Promise<void>;
}

/** A run's own BullMQ prefix: its keys are deleted at the end, whether its services started or not. */
export const newQueuePrefix = (suite: string) => `bench-${suite}-${randomBytes(4).toString('hex')}`;

/** The last characters of a service's output kept for error messages. */
const MAX_OUTPUT = 200_000;

export async function startBenchStack(settings: BenchStackSettings): Promise<BenchStack> {
  const env: StackEnv = stackEnv({
    databaseUrl: settings.databaseUrl,
    redisUrl: settings.redisUrl,
    queuePrefix: settings.queuePrefix,
    unbounded: true,
    env: {
      LOG_LEVEL: settings.logLevel,
      // As npm start runs it: a records-api process per core (a throwaway stack's default is one).
      RECORDS_API_PROCESSES: process.env.RECORDS_API_PROCESSES ?? String(defaultProcesses()),
      ...settings.tuning,
    },
  });
  const stack = await startStack({
    env,
    services: settings.services,
    launch: (name, port): LaunchOptions => {
      const added = settings.launch?.(name, port);
      return {
        env: added?.env,
        execArgv: [...(added?.execArgv ?? []), ...(settings.execArgv[name] ?? [])],
        output: 'pipe',
        keepOutput: MAX_OUTPUT,
        // The dispatcher lets attempts in flight finish; a backlog must not hold the run up.
        killAfterMs: 10_000,
      };
    },
  });
  let gateway: RunningGateway | undefined;
  const gatewayDir = join(REPO_ROOT, '.data', 'bench', `gateway-${randomBytes(6).toString('hex')}`);
  if (settings.gateway) {
    const nginx = findNginx();
    if (!nginx) {
      await stack.stopAll();
      throw new Error('the gateway was asked for but nginx is not installed (apt-get install nginx-light)');
    }
    gateway = launchGateway({
      nginx,
      port: await freePort(),
      host: '127.0.0.1',
      dataDir: gatewayDir,
      recordsApi: [`127.0.0.1:${stack.ports['records-api']}`],
      uploadService: [`127.0.0.1:${stack.ports['upload-service']}`],
      output: 'pipe',
      killAfterMs: 10_000,
    });
    try {
      await gateway.ready;
    } catch (error) {
      await stack.stopAll();
      throw error;
    }
  }
  return {
    rootKey: stack.rootKey,
    gateway,
    pids: () => [
      ...serviceNames.flatMap((name) => {
        const running = stack.service(name);
        return running ? [{ name, pid: running.pid }] : [];
      }),
      ...(gateway ? [{ name: 'gateway' as const, pid: gateway.pid }] : []),
    ],
    service: (name) => {
      const running = stack.service(name);
      if (!running) throw new Error(`${name} was not started`);
      return running;
    },
    start: (name, extra) => stack.start(name, { env: extra }),
    stop: async () => {
      await gateway?.stop();
      await stack.stopAll();
      rmSync(gatewayDir, { recursive: true, force: true });
    },
  };
}
