import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
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
import { findNginx, launchGateway, type RunningGateway } from '@recordbase/launcher/gateway';

/**
 * The whole stack as `npm start` runs it with nginx installed: the four services started by the
 * launcher on free ports, behind the gateway, on a database of their own. The soak talks to the
 * gateway only.
 */

export interface SoakStack {
  gatewayUrl: string;
  rootKey: string;
  database: TestDatabase;
  /** The processes whose memory the soak follows, by name. */
  pids: Record<string, number>;
  /** Each of those processes' `/metrics`, straight from the service (the gateway does not serve it). */
  metricsUrls: Record<string, string>;
  logs(name: ServiceName): string;
  stop(): Promise<void>;
}

/** The last characters of each service's output, kept for a failing run's message. */
const KEPT_OUTPUT = 100_000;

export async function startSoakStack(): Promise<SoakStack> {
  const nginx = findNginx();
  if (!nginx) {
    throw new Error('the soak runs through the gateway: install nginx (Debian: apt-get install nginx-light)');
  }
  const database = await createTestDatabase();
  const rootKey = `root_${randomBytes(24).toString('hex')}`;
  const dataDir = join(REPO_ROOT, '.data', 'soak', randomBytes(6).toString('hex'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    ROOT_API_KEY: rootKey,
    WEBHOOK_SECRET_KEY: newSecretKey(),
    FILE_TOKEN_SECRET: randomBytes(32).toString('base64url'),
    STORAGE_DIR: join(dataDir, 'files'),
    QUEUE_PREFIX: `soak-${randomBytes(6).toString('hex')}`,
    // The soak's rate is the load; the per-key limit would only turn it into 429s.
    RATE_LIMIT_PER_SECOND: '100000',
    RATE_LIMIT_BURST: '100000',
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
  };
  const services: RunningService[] = [];
  let gateway: RunningGateway | undefined;
  try {
    for (const name of serviceNames) {
      services.push(
        await startService({ name, port: await freePort(), env, output: 'pipe', keepOutput: KEPT_OUTPUT }),
      );
    }
    const port = (name: ServiceName) => services.find((service) => service.name === name)!.port;
    gateway = launchGateway({
      nginx,
      port: await freePort(),
      host: '127.0.0.1',
      dataDir: join(dataDir, 'gateway'),
      recordsApi: [`127.0.0.1:${port('records-api')}`],
      uploadService: [`127.0.0.1:${port('upload-service')}`],
      output: 'pipe',
    });
    await gateway.ready;
    const running = gateway;
    return {
      gatewayUrl: running.url,
      rootKey,
      database,
      // nginx's memory is its workers' fixed buffers; the services are what could grow.
      pids: Object.fromEntries(services.map((service) => [service.name, service.pid])),
      metricsUrls: Object.fromEntries(
        services.map((service) => [service.name, `http://127.0.0.1:${service.port}/metrics`]),
      ),
      logs: (name) => services.find((service) => service.name === name)?.output() ?? '',
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
