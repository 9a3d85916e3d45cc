import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import {
  freePort,
  launchService,
  REPO_ROOT,
  type RunningService,
  type ServiceName,
  serviceNames,
  stopAll,
} from '@recordbase/launcher';
import { findNginx, launchGateway, type RunningGateway } from '@recordbase/launcher/gateway';
import { stackEnv } from '@recordbase/launcher/stack';
import { type Supervised, supervise } from '@recordbase/launcher/supervise';

/**
 * The whole stack as `npm start` runs it with nginx installed: the four services started by the
 * launcher on free ports, behind the gateway, on a database of their own, each kept running by
 * npm start's supervisor (a process that dies is started again, and the soak reports it). The
 * soak talks to the gateway only.
 */

export interface SoakStack {
  gatewayUrl: string;
  rootKey: string;
  database: TestDatabase;
  /** The processes whose memory the soak follows, by name. */
  pids: Record<string, number>;
  /** Each of those processes' `/metrics`, straight from the service (the gateway does not serve it). */
  metricsUrls: Record<string, string>;
  /** Each process now, the gateway's included: a crash shows as another pid and a restart. */
  processes(): Record<string, ProcessState>;
  /** What a process printed (the last 100,000 characters of each run of it). */
  logs(name: ServiceName | 'gateway'): string;
  stop(): Promise<void>;
}

export interface ProcessState {
  pid: number;
  /** How many times the supervisor started it again. */
  restarts: number;
  /** Whether that pid is still a live process. */
  alive: boolean;
}

export interface SoakStackOptions {
  /** STORAGE_QUOTA_BYTES_PER_DATABASE. */
  storageQuotaBytes: number;
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The last characters of each service's output, kept for a failing run's message. */
const KEPT_OUTPUT = 100_000;

export async function startSoakStack(options: SoakStackOptions): Promise<SoakStack> {
  const nginx = findNginx();
  if (!nginx) {
    throw new Error('the soak runs through the gateway: install nginx (Debian: apt-get install nginx-light)');
  }
  const database = await createTestDatabase();
  const dataDir = join(REPO_ROOT, '.data', 'soak', randomBytes(6).toString('hex'));
  const env = stackEnv({
    databaseUrl: database.url,
    storageDir: join(dataDir, 'files'),
    queuePrefix: `soak-${randomBytes(6).toString('hex')}`,
    // Every per-key bound (rate, requests in flight, SQL queries in flight) is the services'
    // default: the normal load is dealt among several keys, each well within them, and the
    // hostile tenant must meet them as it would in production.
    unbounded: false,
    env: { STORAGE_QUOTA_BYTES_PER_DATABASE: String(options.storageQuotaBytes) },
  });
  const rootKey = env.ROOT_API_KEY;
  // Each exit and return is printed as it happens: a service dying under the load is a finding.
  const report = (line: string) => console.error(`soak: ${line}`);
  const services: Supervised<RunningService>[] = [];
  // Every process launched, by service: a crashed one's output is what tells why.
  const launched = new Map<ServiceName, RunningService[]>();
  let gateway: Supervised<RunningGateway> | undefined;
  try {
    for (const name of serviceNames) {
      const port = await freePort();
      const launch = () => {
        const process = launchService({ name, port, env, output: 'pipe', keepOutput: KEPT_OUTPUT });
        launched.set(name, [...(launched.get(name) ?? []), process]);
        return process;
      };
      const service = supervise(launch, { label: name, report });
      services.push(service);
      await service.ready;
    }
    const service = (name: ServiceName) => services.find((s) => s.current().name === name)!.current();
    const gatewayPort = await freePort();
    gateway = supervise(
      () =>
        launchGateway({
          nginx,
          port: gatewayPort,
          host: '127.0.0.1',
          dataDir: join(dataDir, 'gateway'),
          recordsApi: [`127.0.0.1:${service('records-api').port}`],
          uploadService: [`127.0.0.1:${service('upload-service').port}`],
          output: 'pipe',
        }),
      { label: 'gateway', report },
    );
    await gateway.ready;
    const running = gateway;
    const state = (supervised: Supervised<RunningService | RunningGateway>): ProcessState => {
      const pid = supervised.current().pid;
      return { pid, restarts: supervised.restarts(), alive: isAlive(pid) };
    };
    return {
      gatewayUrl: running.current().url,
      rootKey,
      database,
      // nginx's memory is its workers' fixed buffers; the services are what could grow.
      pids: Object.fromEntries(services.map((s) => [s.current().name, s.current().pid])),
      metricsUrls: Object.fromEntries(
        services.map((s) => [s.current().name, `http://127.0.0.1:${s.current().port}/metrics`]),
      ),
      processes: () => ({
        ...Object.fromEntries(services.map((s) => [s.current().name, state(s)])),
        gateway: state(running),
      }),
      logs: (name) =>
        (name === 'gateway' ? [running.current()] : (launched.get(name) ?? []))
          .map((process, index) =>
            index === 0 ? process.output() : `--- started again (pid ${process.pid})\n${process.output()}`,
          )
          .join('\n'),
      async stop() {
        await stopAll([running, ...services]);
        rmSync(dataDir, { recursive: true, force: true });
        await database.drop();
      },
    };
  } catch (error) {
    await stopAll(gateway ? [gateway, ...services] : services);
    rmSync(dataDir, { recursive: true, force: true });
    await database.drop();
    throw error;
  }
}
