import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { Webhook } from 'standardwebhooks';
import { type ScriptedServer, startScriptedServer } from './scripted-server';
import { newWebhookSecret, tableCreatedEvent } from './webhook-event';

/**
 * The package as a user gets it: the built dist/ packed with `pnpm pack`, the tarball installed
 * with `npm install` into a project outside the workspace (so no workspace package and no
 * TypeScript source can stand in for a missing file), then loaded by plain `node` through
 * `require` and `import`, type-checked by `tsc` as CommonJS and as ESM, and bundled for a browser.
 */

const run = promisify(execFile);
const packageDir = resolve(__dirname, '..');
const repoRoot = resolve(packageDir, '../..');
const contractsSrc = resolve(packageDir, '../contracts/src');
const pnpm = join(repoRoot, 'node_modules', '.bin', 'pnpm');
const tsc = require.resolve('typescript/bin/tsc');
const recordId = '00000000-0000-4000-8000-000000000001';

let project: string;
let server: ScriptedServer;

/** The environment of a child that must see only the temporary project's packages. */
function isolatedEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!/^npm_|^NODE_PATH$|^NODE_OPTIONS$/i.test(name)) env[name] = value;
  return { ...env, ...extra };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** dist/ as the build script leaves it, rebuilt here only when missing or older than a source. */
async function ensureBuilt(): Promise<void> {
  const dist = join(packageDir, 'dist');
  const sources = [
    ...filesUnder(join(packageDir, 'src')),
    ...filesUnder(contractsSrc),
    ...['package.json', 'tsconfig.json', 'tsup.config.ts'].map((file) => join(packageDir, file)),
  ];
  const newestSource = Math.max(...sources.map((file) => statSync(file).mtimeMs));
  const built = existsSync(dist) ? filesUnder(dist) : [];
  const oldestBuilt = Math.min(...built.map((file) => statSync(file).mtimeMs));
  if (built.length > 0 && oldestBuilt >= newestSource) return;
  await run(pnpm, ['run', 'build'], { cwd: packageDir, maxBuffer: 16 * 1024 * 1024 });
}

beforeAll(async () => {
  await ensureBuilt();
  project = await mkdtemp(join(tmpdir(), 'recordbase-client-pack-'));
  const packed = await run(pnpm, ['pack', '--pack-destination', project, '--json'], {
    cwd: packageDir,
    maxBuffer: 16 * 1024 * 1024,
  });
  const tarball = (JSON.parse(packed.stdout) as { filename: string }).filename;
  await writeFile(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'pack-check', version: '1.0.0', private: true }, null, 2)}\n`,
  );
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball], {
    cwd: project,
    env: isolatedEnv(),
    maxBuffer: 16 * 1024 * 1024,
  });
  server = await startScriptedServer();
}, 300_000);

afterAll(async () => {
  await server?.close();
  if (project) await rm(project, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('holds the built files, the license and the README, and needs zod only', async () => {
    const installed = join(project, 'node_modules', '@recordbase', 'client');
    const files = filesUnder(installed).map((file) => relative(installed, file));
    expect(files.filter((file) => !file.startsWith('dist/')).sort()).toEqual([
      'LICENSE',
      'README.md',
      'package.json',
    ]);
    expect(files.some((file) => /\.tsx?$/.test(file) && !/\.d\.m?ts$/.test(file))).toBe(false);
    for (const entry of ['index', 'node', 'webhooks'])
      for (const extension of ['.js', '.mjs', '.d.ts', '.d.mts'])
        expect(files).toContain(`dist/${entry}${extension}`);
    expect(await readFile(join(installed, 'LICENSE'), 'utf8')).toBe(
      await readFile(join(repoRoot, 'LICENSE'), 'utf8'),
    );

    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ version: '0.1.0', license: 'MIT', sideEffects: false });
    expect(manifest.private).toBeUndefined();
    expect(manifest.dependencies).toEqual({ zod: expect.any(String) });
    // The contracts are compiled in, code and types: nothing refers to the private package.
    for (const file of files.filter((name) => name.startsWith('dist/')))
      expect(readFileSync(join(installed, file), 'utf8')).not.toContain('@recordbase/contracts');
    expect(existsSync(join(project, 'node_modules', '@recordbase', 'contracts'))).toBe(false);
    expect(existsSync(join(project, 'node_modules', 'zod', 'package.json'))).toBe(true);
  });
});

/**
 * One script, run once through `require` and once through `import`: a request answered, one
 * refused and one off-contract; a delivery verified and a forged one refused; a file read from
 * disk and a stream over its limit refused. It prints what it saw as JSON.
 */
const scriptBody = `
async function main() {
  const client = new RecordbaseClient({ apiUrl: process.env.API_URL, apiKey: 'key_pack', retry: { maxAttempts: 1 } });
  const record = await client.records.get('base1', 'Deals', process.env.RECORD_ID);
  const missing = await client.records.get('base1', 'Deals', process.env.RECORD_ID).catch((error) => error);
  const offContract = await client.records.get('base1', 'Deals', process.env.RECORD_ID).catch((error) => error);

  const verifier = new WebhookVerifier(process.env.WEBHOOK_SECRET);
  const headers = JSON.parse(process.env.WEBHOOK_HEADERS);
  const event = await verifier.verify(process.env.WEBHOOK_BODY, headers);
  const forged = await verifier
    .verify(process.env.WEBHOOK_BODY.replace('Deals', 'Leads'), headers)
    .catch((error) => error);

  const file = await fileFromPath('upload.txt');
  const tooLong = await fileFromStream(Readable.from(['0123456789']), 'big.csv', { maxBytes: 4 }).catch(
    (error) => error,
  );

  return {
    entry: resolved,
    record: { id: record.id, fields: record.fields },
    missing: { notFound: isRecordbaseError(missing, 'NOT_FOUND'), api: missing instanceof RecordbaseApiError, status: missing.status },
    offContract: offContract.code,
    event: { type: event.type, id: event.id },
    forged: { reason: forged.reason, recordbaseError: forged instanceof RecordbaseError },
    file: { name: file.name, size: file.size, text: await file.text() },
    tooLong: isRecordbaseError(tooLong, 'INVALID_INPUT'),
  };
}
main().then(
  (seen) => console.log(JSON.stringify(seen)),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
`;

const commonJsScript = `'use strict';
const { Readable } = require('node:stream');
const { RecordbaseClient, RecordbaseApiError, RecordbaseError, isRecordbaseError } = require('@recordbase/client');
const { fileFromPath, fileFromStream } = require('@recordbase/client/node');
const { WebhookVerifier } = require('@recordbase/client/webhooks');
const resolved = require.resolve('@recordbase/client');
${scriptBody}`;

const esmScript = `import { Readable } from 'node:stream';
import { RecordbaseClient, RecordbaseApiError, RecordbaseError, isRecordbaseError } from '@recordbase/client';
import { fileFromPath, fileFromStream } from '@recordbase/client/node';
import { WebhookVerifier } from '@recordbase/client/webhooks';
import { fileURLToPath } from 'node:url';
const resolved = fileURLToPath(import.meta.resolve('@recordbase/client'));
${scriptBody}`;

describe.each([
  ['CommonJS (require)', 'check.cjs', commonJsScript, 'dist/index.js'],
  ['ESM (import)', 'check.mjs', esmScript, 'dist/index.mjs'],
])('plain node loading the package through %s', (_name, scriptName, script, entryFile) => {
  it('calls the API, verifies a webhook and reads a file from disk', async () => {
    server.reset();
    const record = {
      id: recordId,
      data: { fldTitle: 'Globex' },
      fields: { Title: 'Globex' },
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    };
    server.answer(
      { status: 200, body: record },
      { status: 404, body: { error: { code: 'NOT_FOUND', message: 'Record not found' } } },
      { status: 200, body: { id: 42 } },
    );
    const secret = newWebhookSecret();
    const event = tableCreatedEvent('Deals');
    const eventId = event.id;
    const body = JSON.stringify(event);
    const sentAt = new Date();
    const headers = {
      'webhook-id': eventId,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(eventId, sentAt, body),
    };
    await writeFile(join(project, 'upload.txt'), 'hello from disk\n');
    await writeFile(join(project, scriptName), script);

    const { stdout } = await run(process.execPath, [scriptName], {
      cwd: project,
      env: isolatedEnv({
        API_URL: `${server.url}/api/v1`,
        RECORD_ID: recordId,
        WEBHOOK_SECRET: secret,
        WEBHOOK_HEADERS: JSON.stringify(headers),
        WEBHOOK_BODY: body,
      }),
    });
    const seen = JSON.parse(stdout);

    expect(seen.entry).toBe(join(project, 'node_modules', '@recordbase', 'client', entryFile));
    expect(seen.record).toEqual({ id: recordId, fields: { Title: 'Globex' } });
    expect(seen.missing).toEqual({ notFound: true, api: true, status: 404 });
    expect(seen.offContract).toBe('INVALID_RESPONSE');
    expect(seen.event).toEqual({ type: 'table.created', id: eventId });
    // One RecordbaseError class, whichever entry point threw.
    expect(seen.forged).toEqual({ reason: 'INVALID_SIGNATURE', recordbaseError: true });
    expect(seen.file).toEqual({ name: 'upload.txt', size: 16, text: 'hello from disk\n' });
    expect(seen.tooLong).toBe(true);
    expect(server.requests).toHaveLength(3);
    for (const request of server.requests) {
      expect(request.method).toBe('GET');
      expect(request.url).toBe(`/api/v1/bases/base1/tables/Deals/records/${recordId}`);
      expect(request.headers.authorization).toBe('Bearer key_pack');
    }
  });
});

it('type-checks a consumer as ESM and as CommonJS against the declarations', async () => {
  const consumer = `import { isRecordbaseError, RecordbaseClient, type TableRecord } from '@recordbase/client';
import { fileFromPath } from '@recordbase/client/node';
import { WebhookVerifier, type WebhookVerificationReason } from '@recordbase/client/webhooks';

const client = new RecordbaseClient({ apiUrl: 'http://localhost:3000/api/v1', apiKey: 'key' });
export const record: Promise<TableRecord> = client.records.get('base', 'Deals', 'id');
export const reason: WebhookVerificationReason = 'INVALID_SIGNATURE';
export const file: Promise<File> = fileFromPath('upload.txt');
export const verifier = new WebhookVerifier('whsec_c2VjcmV0');
export const notFound = (error: unknown) => isRecordbaseError(error, 'NOT_FOUND');
// @ts-expect-error the request bodies are typed from the contracts, not \`any\`
client.bases.create({ nmae: 'CRM' });
`;
  await writeFile(join(project, 'consumer.mts'), consumer);
  await writeFile(join(project, 'consumer.cts'), consumer);
  const { stdout } = await run(
    process.execPath,
    [
      tsc,
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--types',
      'node',
      '--typeRoots',
      join(packageDir, 'node_modules', '@types'),
      '--listFiles',
      'consumer.mts',
      'consumer.cts',
    ],
    { cwd: project, env: isolatedEnv(), maxBuffer: 16 * 1024 * 1024 },
  ).catch((error: { stdout?: string }) => {
    throw new Error(`tsc failed:\n${error.stdout}`);
  });
  const dist = join(project, 'node_modules', '@recordbase', 'client', 'dist');
  const listed = stdout.split('\n');
  expect(listed).toContain(join(dist, 'index.d.mts'));
  expect(listed).toContain(join(dist, 'index.d.ts'));
  // Two full tsc runs: over a minute on a loaded machine.
}, 180_000);

describe('a browser bundle of the installed package', () => {
  const bundle = (source: string) =>
    build({
      stdin: { contents: source, resolveDir: project, sourcefile: 'browser-entry.mjs' },
      absWorkingDir: project,
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });

  it('builds from the main entry and the webhook verifier, with no Node built-in', async () => {
    const result = await bundle(`
      import { isRecordbaseError, RecordbaseClient } from '@recordbase/client';
      import { WebhookVerifier } from '@recordbase/client/webhooks';
      export const client = new RecordbaseClient({ apiUrl: 'https://api.example/api/v1', apiKey: 'key' });
      export { isRecordbaseError, WebhookVerifier };
    `);
    expect(result.errors).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs).filter((input) => input !== 'browser-entry.mjs');
    expect(inputs).toContain('node_modules/@recordbase/client/dist/index.mjs');
    expect(inputs.filter((input) => !/^node_modules\/(@recordbase\/client\/dist|zod)\//.test(input))).toEqual(
      [],
    );
    const imports = Object.values(result.metafile.inputs).flatMap((input) => input.imports);
    expect(imports.filter((entry) => entry.external)).toEqual([]);
    const text = result.outputFiles[0]!.text;
    expect(text).not.toMatch(/\bnode:[a-z]/);
    expect(text).not.toMatch(/\brequire\(/);
  });

  it('refuses the Node helpers, so the check above would catch a Node import', async () => {
    await expect(bundle(`export { fileFromPath } from '@recordbase/client/node';`)).rejects.toThrow(
      /node:fs/,
    );
  });
});
