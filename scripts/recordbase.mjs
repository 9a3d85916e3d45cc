#!/usr/bin/env node
// Entry point of `npm start`, `npm test` and `npm run migrate` from a fresh clone: installs what is
// missing (dependencies with pnpm, the Prisma client), then hands over. Plain JavaScript on purpose:
// it must run before anything is installed.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM_VERSION = '12.21.0';
const workspaceDirs = ['apps', 'packages'].flatMap((group) =>
  readdirSync(join(root, group), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, group, entry.name, 'package.json')))
    .map((entry) => join(group, entry.name)),
);

function fingerprint(files) {
  const hash = createHash('sha256');
  for (const file of files) {
    const path = join(root, file);
    hash.update(file).update(existsSync(path) ? readFileSync(path) : '');
  }
  return hash.digest('hex');
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function ensureInstalled() {
  const stamp = join(root, 'node_modules', '.recordbase-install');
  const manifests = [
    'package.json',
    'pnpm-lock.yaml',
    'pnpm-workspace.yaml',
    'bench/package.json',
    'e2e/package.json',
    ...workspaceDirs.map((dir) => join(dir, 'package.json')),
  ];
  const expected = fingerprint(manifests);
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === expected) return;
  console.log('[recordbase] installing dependencies with pnpm…');
  const localPnpm = join(root, 'node_modules', '.bin', 'pnpm');
  const status = existsSync(localPnpm)
    ? run(localPnpm, ['install', '--frozen-lockfile'])
    : run('npx', ['--yes', `pnpm@${PNPM_VERSION}`, 'install', '--frozen-lockfile']);
  if (status !== 0) process.exit(status);
  writeFileSync(stamp, expected);
}

function ensurePrismaClient() {
  const dbDir = join(root, 'packages', 'db');
  const stamp = join(dbDir, 'src', 'generated', '.schema-hash');
  const expected = fingerprint(['packages/db/prisma/schema.prisma']);
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === expected) return;
  console.log('[recordbase] generating the Prisma client…');
  const status = run(process.execPath, [join(dbDir, 'scripts', 'generate.mjs')], { cwd: dbDir });
  if (status !== 0) process.exit(status);
  mkdirSync(dirname(stamp), { recursive: true });
  writeFileSync(stamp, expected);
}

/** Runs every package's jest through turbo, then prints one summary line over all of them. */
function test(extraArgs) {
  const resultFiles = workspaceDirs
    .concat('bench', 'e2e')
    .map((dir) => join(root, dir, '.jest-results.json'));
  for (const file of resultFiles) rmSync(file, { force: true });
  const turbo = join(root, 'node_modules', '.bin', 'turbo');
  // Four packages at a time, not turbo's ten: on two cores, ten suites at once (e2e's among them,
  // each starting whole stacks) slowed statements enough to fail the tests that bound a time.
  const status = run(
    turbo,
    ['run', 'test', '--continue', '--concurrency=4', '--output-logs=full', ...extraArgs],
    {
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' },
    },
  );
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const file of resultFiles) {
    if (!existsSync(file)) continue;
    const results = JSON.parse(readFileSync(file, 'utf8'));
    passed += results.numPassedTests;
    failed += results.numFailedTests + (results.numRuntimeErrorTestSuites ?? 0);
    skipped += results.numPendingTests + results.numTodoTests;
  }
  console.log(`\nTests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(status !== 0 ? status : failed > 0 ? 1 : 0);
}

/** Lint, format and type checks over the whole workspace: what CI runs besides the tests. */
function check() {
  const bin = (name) => join(root, 'node_modules', '.bin', name);
  const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' };
  for (const [command, args] of [
    [bin('biome'), ['check', '.']],
    [bin('turbo'), ['run', 'typecheck', '--output-logs=errors-only']],
    [bin('tsc'), ['-p', 'tsconfig.json']],
  ]) {
    const status = run(command, args, { env });
    if (status !== 0) process.exit(status);
  }
}

/** Starts a TypeScript entry point of the workspace with tsx, forwarding signals and exit code. */
function runTypeScript(entry, args = []) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, entry), ...args], {
    cwd: root,
    stdio: 'inherit',
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

const [command, ...rest] = process.argv.slice(2);
ensureInstalled();
ensurePrismaClient();
switch (command) {
  case 'test':
    test(rest);
    break;
  case 'check':
    check();
    break;
  case 'start':
    runTypeScript('scripts/stack.ts', rest);
    break;
  case 'migrate':
    runTypeScript('scripts/migrate.ts', rest);
    break;
  default:
    console.error('usage: node scripts/recordbase.mjs <start|test|check|migrate>');
    process.exit(2);
}
