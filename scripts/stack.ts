// `npm start`: checks PostgreSQL and Redis, applies migrations, then runs the three services in
// the foreground until Ctrl-C or SIGTERM, which stops them all.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { newSecretKey, randomBase62 } from '@recordbase/db';
import { migrate } from '@recordbase/db/migrate';
import { checkPostgres, checkRedis } from '@recordbase/server-kit/dependencies';
import { commonEnvSchema, parseEnv, portSchema } from '@recordbase/server-kit/env';
import { z } from 'zod';

const root = resolve(__dirname, '..');

const stackEnvSchema = commonEnvSchema.extend({
  ROOT_API_KEY: z.string().min(20).optional(),
  WEBHOOK_SECRET_KEY: z.string().optional(),
  FILE_TOKEN_SECRET: z.string().optional(),
  STORAGE_DIR: z.string().default('./.data/files'),
  RECORDS_API_PORT: portSchema(3000),
  UPLOAD_SERVICE_PORT: portSchema(3001),
  WEBHOOK_DISPATCHER_PORT: portSchema(3002),
});

const ROOT_KEY_FILE = join(root, '.data', 'root-api-key');
const dataFile = (name: string) => join(root, '.data', name);

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
  if (existsSync(ROOT_KEY_FILE)) {
    return {
      key: readFileSync(ROOT_KEY_FILE, 'utf8').trim(),
      announce: `Root API key: stored in ${ROOT_KEY_FILE}.`,
    };
  }
  const key = `rb_root_${randomBase62(40)}`;
  mkdirSync(dirname(ROOT_KEY_FILE), { recursive: true });
  writeFileSync(ROOT_KEY_FILE, `${key}\n`, { mode: 0o600 });
  chmodSync(ROOT_KEY_FILE, 0o600);
  return {
    key,
    announce: `Generated a root API key (shown this once; kept in ${ROOT_KEY_FILE}):\n\n    ${key}\n`,
  };
}

interface Service {
  name: string;
  port: number;
  child?: ChildProcess;
}

async function waitUntilReady(service: Service, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    if (service.child?.exitCode !== null && service.child?.exitCode !== undefined) {
      throw new Error(`${service.name} exited with code ${service.child.exitCode}`);
    }
    try {
      const response = await fetch(`http://127.0.0.1:${service.port}/readyz`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 250));
  }
  throw new Error(`${service.name} was not ready on port ${service.port} within 60 s`);
}

async function main() {
  const env = parseEnv(stackEnvSchema);
  await checkPostgres(env.DATABASE_URL);
  await checkRedis(env.REDIS_URL);
  await migrate(env.DATABASE_URL);
  const { key, announce } = rootApiKey(env.ROOT_API_KEY);
  // Encrypts webhook signing secrets at rest.
  const secretKey = keptSecret(env.WEBHOOK_SECRET_KEY, dataFile('webhook-secret-key'), newSecretKey);
  // Signs the short-lived file links records-api hands out and upload-service honours.
  const fileTokenSecret = keptSecret(env.FILE_TOKEN_SECRET, dataFile('file-token-secret'), () =>
    randomBase62(48),
  );

  const services: Service[] = [
    { name: 'records-api', port: env.RECORDS_API_PORT },
    { name: 'upload-service', port: env.UPLOAD_SERVICE_PORT },
    { name: 'webhook-dispatcher', port: env.WEBHOOK_DISPATCHER_PORT },
  ];
  let stopping = false;
  const stopAll = (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const service of services) service.child?.kill('SIGTERM');
    const force = setTimeout(() => {
      for (const service of services) service.child?.kill('SIGKILL');
      process.exit(code);
    }, 15_000);
    force.unref();
    Promise.all(
      services.map((service) =>
        service.child && service.child.exitCode === null
          ? new Promise((done) => service.child?.once('exit', done))
          : Promise.resolve(),
      ),
    ).then(() => process.exit(code));
  };
  process.on('SIGINT', () => stopAll(0));
  process.on('SIGTERM', () => stopAll(0));

  for (const service of services) {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(root, 'apps', service.name, 'src', 'main.ts')],
      {
        cwd: root,
        env: {
          ...process.env,
          DATABASE_URL: env.DATABASE_URL,
          REDIS_URL: env.REDIS_URL,
          ROOT_API_KEY: key,
          WEBHOOK_SECRET_KEY: secretKey,
          FILE_TOKEN_SECRET: fileTokenSecret,
          STORAGE_DIR: resolve(root, env.STORAGE_DIR),
          PORT: String(service.port),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    service.child = child;
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) =>
        process.stdout.write(`[${service.name}] ${line}\n`),
      );
    }
    child.on('exit', (code, signal) => {
      if (stopping) return;
      console.error(
        `[recordbase] ${service.name} stopped (${signal ?? `exit ${code}`}); stopping the others`,
      );
      stopAll(1);
    });
  }

  const deadline = Date.now() + 60_000;
  await Promise.all(services.map((service) => waitUntilReady(service, deadline)));
  console.log(
    [
      '',
      '[recordbase] ready:',
      `    JSON API        http://localhost:${env.RECORDS_API_PORT}/api/v1`,
      `    uploads, files  http://localhost:${env.UPLOAD_SERVICE_PORT}`,
      `    dispatcher      http://localhost:${env.WEBHOOK_DISPATCHER_PORT}/readyz`,
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
