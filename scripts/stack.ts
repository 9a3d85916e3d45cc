// `npm start`: checks PostgreSQL and Redis, applies migrations, then runs the services (records-api
// RECORDS_API_REPLICAS times) and, when nginx is installed, the gateway in front of them, in the
// foreground until Ctrl-C or SIGTERM, which stops them all. A process that dies once running is
// started again with a growing delay (@recordbase/launcher/supervise): it takes no other down.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { randomBase62 } from '@recordbase/db';
import { describeMigration, migrate } from '@recordbase/db/migrate';
import {
  freePort,
  launchService,
  type RunningService,
  type ServiceName,
  stopAll,
} from '@recordbase/launcher';
import { findNginx, launchGateway, type RunningGateway } from '@recordbase/launcher/gateway';
import { stackEnv, stackSecrets } from '@recordbase/launcher/stack';
import { type Supervised, supervise } from '@recordbase/launcher/supervise';
import { checkPostgres, checkRedis } from '@recordbase/server-kit/dependencies';
import { commonEnvSchema, parseEnv, portSchema } from '@recordbase/server-kit/env';
import { z } from 'zod';

const root = resolve(__dirname, '..');

const stackEnvSchema = commonEnvSchema.extend({
  ROOT_API_KEY: z.string().min(20).optional(),
  WEBHOOK_SECRET_KEY: z.string().optional(),
  FILE_TOKEN_SECRET: z.string().optional(),
  STORAGE_DIR: z.string().default('./.data/files'),
  /** Where generated secrets and the gateway's files are kept. */
  DATA_DIR: z.string().default('./.data'),
  RECORDS_API_PORT: portSchema(3000),
  UPLOAD_SERVICE_PORT: portSchema(3001),
  WEBHOOK_DISPATCHER_PORT: portSchema(3002),
  IMPORT_WORKER_PORT: portSchema(3003),
  GATEWAY_PORT: portSchema(8080),
  /** records-api processes behind the gateway; the first on RECORDS_API_PORT, the others on free ports. */
  RECORDS_API_REPLICAS: z.coerce.number().int().min(1).max(16).default(1),
});

let dataDir = join(root, '.data');
const dataFile = (name: string) => join(dataDir, name);

/** A secret the services share, generated once and kept (mode 600) under .data unless configured. */
function keptSecret(configured: string | undefined, file: string, generate: () => string): string {
  if (configured) return configured;
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = generate();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/** An operator key survives restarts: generated once, printed once, kept (mode 600) under .data. */
function rootApiKey(configured: string | undefined): { key: string; announce: string } {
  if (configured) return { key: configured, announce: 'Root API key: the ROOT_API_KEY you set.' };
  const rootKeyFile = dataFile('root-api-key');
  if (existsSync(rootKeyFile)) {
    return {
      key: readFileSync(rootKeyFile, 'utf8').trim(),
      announce: `Root API key: stored in ${rootKeyFile}.`,
    };
  }
  const key = `rb_root_${randomBase62(40)}`;
  mkdirSync(dirname(rootKeyFile), { recursive: true });
  writeFileSync(rootKeyFile, `${key}\n`, { mode: 0o600 });
  chmodSync(rootKeyFile, 0o600);
  return {
    key,
    announce: `Generated a root API key (shown this once; kept in ${rootKeyFile}):\n\n    ${key}\n`,
  };
}

async function main() {
  const env = parseEnv(stackEnvSchema);
  dataDir = resolve(root, env.DATA_DIR);
  await checkPostgres(env.DATABASE_URL);
  await checkRedis(env.REDIS_URL);
  console.log(`[recordbase] ${describeMigration(env.DATABASE_URL, await migrate(env.DATABASE_URL))}`);
  const { key, announce } = rootApiKey(env.ROOT_API_KEY);
  // Made as every stack's are, but kept: a restart must read the webhook secrets and honour the
  // file links that the last run encrypted and signed.
  const fresh = stackSecrets();
  const secretKey = keptSecret(
    env.WEBHOOK_SECRET_KEY,
    dataFile('webhook-secret-key'),
    () => fresh.WEBHOOK_SECRET_KEY,
  );
  const fileTokenSecret = keptSecret(
    env.FILE_TOKEN_SECRET,
    dataFile('file-token-secret'),
    () => fresh.FILE_TOKEN_SECRET,
  );

  const serviceEnv = stackEnv({
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    secrets: { ROOT_API_KEY: key, WEBHOOK_SECRET_KEY: secretKey, FILE_TOKEN_SECRET: fileTokenSecret },
    storageDir: resolve(root, env.STORAGE_DIR),
    // An operator's stack: where it listens, what it logs and where webhooks may go are theirs.
    throwaway: false,
  });
  let stopping = false;
  const services: Supervised<RunningService | RunningGateway>[] = [];
  const stopServices = (code: number) => {
    if (stopping) return;
    stopping = true;
    stopAll(services).then(() => process.exit(code));
  };
  process.on('SIGINT', () => stopServices(0));
  process.on('SIGTERM', () => stopServices(0));
  const report = (line: string) => console.error(`[recordbase] ${line}`);

  const nginx = findNginx();
  if (!nginx) {
    console.log(
      `[recordbase] nginx not found (Debian: apt-get install nginx-light): no gateway on port ${env.GATEWAY_PORT}; the services answer on their own ports.`,
    );
  }

  const recordsApiPorts = [env.RECORDS_API_PORT];
  while (recordsApiPorts.length < env.RECORDS_API_REPLICAS) recordsApiPorts.push(await freePort());
  const launches: [ServiceName, string, number][] = [
    ...recordsApiPorts.map((port, index): [ServiceName, string, number] => [
      'records-api',
      recordsApiPorts.length > 1 ? `records-api#${index + 1}` : 'records-api',
      port,
    ]),
    ['upload-service', 'upload-service', env.UPLOAD_SERVICE_PORT],
    ['webhook-dispatcher', 'webhook-dispatcher', env.WEBHOOK_DISPATCHER_PORT],
    ['import-worker', 'import-worker', env.IMPORT_WORKER_PORT],
  ];
  for (const [name, label, port] of launches) {
    const launch = () =>
      launchService({
        name,
        port,
        env: serviceEnv,
        output: (line) => process.stdout.write(`[${label}] ${line}\n`),
        // Once stopping, a service that has not exited after 15 s is killed.
        killAfterMs: 15_000,
      });
    services.push(supervise(launch, { label, report }));
  }
  // A process that never became ready stops them all, rather than leaving the others running.
  const whenReady = (ready: Promise<unknown>) =>
    ready.then(
      () => true,
      (error: unknown) => {
        console.error(`[recordbase] ${error instanceof Error ? error.message : String(error)}`);
        stopServices(1);
        return false;
      },
    );
  if (!(await whenReady(Promise.all(services.map((service) => service.ready))))) return;

  let gatewayLines: string[] = [];
  if (nginx) {
    const gateway = supervise(
      () =>
        launchGateway({
          nginx,
          port: env.GATEWAY_PORT,
          // Where the services listen: loopback unless HOST says otherwise, so a laptop running
          // the stack exposes nothing to its network.
          host: env.HOST,
          dataDir: dataFile('gateway'),
          recordsApi: recordsApiPorts.map((port) => `127.0.0.1:${port}`),
          uploadService: [`127.0.0.1:${env.UPLOAD_SERVICE_PORT}`],
          output: (line) => process.stdout.write(`[gateway] ${line}\n`),
          killAfterMs: 15_000,
        }),
      { label: 'gateway (nginx)', report },
    );
    services.push(gateway);
    if (!(await whenReady(gateway.ready))) return;
    gatewayLines = [
      `    gateway         http://localhost:${env.GATEWAY_PORT}   (the front door: /api/v1, uploads, /files, /docs)`,
      `                    access log ${gateway.current().accessLog}`,
    ];
  }

  console.log(
    [
      '',
      '[recordbase] ready:',
      ...gatewayLines,
      `    JSON API        ${recordsApiPorts.map((port) => `http://localhost:${port}/api/v1`).join(', ')}`,
      `    uploads, files  http://localhost:${env.UPLOAD_SERVICE_PORT}`,
      `    dispatcher      http://localhost:${env.WEBHOOK_DISPATCHER_PORT}/readyz`,
      `    import worker   http://localhost:${env.IMPORT_WORKER_PORT}/readyz`,
      '',
      announce,
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  console.error(`[recordbase] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
