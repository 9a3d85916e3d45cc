#!/usr/bin/env node
// `node scripts/build-services.mjs [service…]`: compiles each service to plain JavaScript for its
// image. dist/<service>/ is self-contained: the bundle (the service and the workspace packages it
// uses, which export TypeScript sources) plus a node_modules of exactly the npm packages the bundle
// requires at run time and their dependencies, copied from this install (so the lockfile's
// versions). No tsx, no dev dependencies. The Dockerfile copies one such directory per target.
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Every image target: where its code starts, where the bundle goes inside dist/<name>. */
export const SERVICES = [
  { name: 'records-api', entry: 'apps/records-api/src/main.ts', main: 'main.js', port: 3000 },
  { name: 'upload-service', entry: 'apps/upload-service/src/main.ts', main: 'main.js', port: 3001 },
  { name: 'webhook-dispatcher', entry: 'apps/webhook-dispatcher/src/main.ts', main: 'main.js', port: 3002 },
  { name: 'import-worker', entry: 'apps/import-worker/src/main.ts', main: 'main.js', port: 3003 },
  // packages/db finds its SQL files at <its module's dir>/../migrations: the bundle sits one level
  // down so that the copied migrations are where it looks.
  {
    name: 'migrate',
    entry: 'scripts/migrate.ts',
    main: 'bin/migrate.js',
    assets: [['packages/db/migrations', 'migrations']],
  },
];

/**
 * Files of a package that the services can never load. @prisma/client ships a query compiler per
 * database (about 12 MB each); the generated client (provider postgresql in
 * packages/db/prisma/schema.prisma) imports only PostgreSQL's.
 */
const OMIT = {
  '@prisma/client': /^runtime\/query_compiler_\w+_bg\.(?!postgresql\.)\w+\./,
};

const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

/** `@scope/pkg/sub/path` → `@scope/pkg`; `pkg/sub` → `pkg`. */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** The directory of the nearest package.json at or above `dir`. */
function packageDirOf(dir) {
  for (let current = dir; ; current = dirname(current)) {
    if (existsSync(join(current, 'package.json'))) return current;
    if (dirname(current) === current) throw new Error(`no package.json above ${dir}`);
  }
}

/** Where Node would find package `name` from `fromDir`, symlinks resolved; undefined if nowhere. */
function locate(name, fromDir) {
  for (let current = fromDir; ; current = dirname(current)) {
    const candidate = join(current, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    if (dirname(current) === current) return undefined;
  }
}

/** The packages `dir` needs at run time: dependencies, optional ones installed, required peers. */
function runtimeDependencies(dir) {
  const manifest = readJson(join(dir, 'package.json'));
  const optionalPeers = new Set(
    Object.entries(manifest.peerDependenciesMeta ?? {})
      .filter(([, meta]) => meta?.optional)
      .map(([name]) => name),
  );
  const wanted = [];
  for (const name of Object.keys(manifest.dependencies ?? {})) wanted.push({ name, optional: false });
  for (const name of Object.keys(manifest.optionalDependencies ?? {})) wanted.push({ name, optional: true });
  for (const name of Object.keys(manifest.peerDependencies ?? {}))
    if (!optionalPeers.has(name)) wanted.push({ name, optional: false });
  const found = new Map();
  for (const { name, optional } of wanted) {
    if (found.has(name)) continue;
    // pnpm links a package's dependencies beside it, which Node's own lookup from it finds.
    const location = locate(name, dir);
    if (location) found.set(name, location);
    else if (!optional) throw new Error(`${manifest.name} needs ${name}, which is not installed`);
  }
  return found;
}

/**
 * Copies the packages and everything they depend on into `target`/node_modules, hoisted where
 * the name is free and nested under the dependent otherwise, as npm lays out node_modules.
 */
function installClosure(direct, target) {
  const placed = new Map(); // output directory → source directory
  const topLevel = join(target, 'node_modules');
  const queue = [];
  const place = (name, source, dependentDir) => {
    // The first directory Node's lookup from the dependent reaches decides.
    for (let current = dependentDir; ; current = dirname(current)) {
      const candidate = join(current, 'node_modules', name);
      const there = placed.get(candidate);
      if (there === source) return;
      if (there !== undefined) break;
      if (current === target) {
        placed.set(candidate, source);
        queue.push(candidate);
        return;
      }
    }
    const nested = join(dependentDir, 'node_modules', name);
    placed.set(nested, source);
    queue.push(nested);
  };
  for (const [name, source] of direct) place(name, source, target);
  while (queue.length > 0) {
    const output = queue.shift();
    for (const [name, source] of runtimeDependencies(placed.get(output))) place(name, source, output);
  }
  // A package nested later could shadow one an earlier lookup had found: check every lookup anew.
  const lookup = (name, from) => {
    for (let current = from; ; current = dirname(current)) {
      const there = placed.get(join(current, 'node_modules', name));
      if (there !== undefined || current === target) return there;
    }
  };
  for (const [name, source] of direct)
    if (lookup(name, target) !== source) throw new Error(`layout error: ${name} from the bundle`);
  for (const [output, source] of placed)
    for (const [name, wanted] of runtimeDependencies(source))
      if (lookup(name, output) !== wanted) throw new Error(`layout error: ${name} from ${output}`);
  for (const [output, source] of placed) {
    const omitted = OMIT[output.slice(output.lastIndexOf('node_modules/') + 'node_modules/'.length)];
    cpSync(source, output, {
      recursive: true,
      dereference: true,
      filter: (path) => {
        const inside = relative(source, path);
        // A package's own node_modules (pnpm keeps none inside, but bundled ones) is laid out above.
        return !inside.split('/').includes('node_modules') && !omitted?.test(inside);
      },
    });
  }
  return { packages: placed.size, topLevel };
}

export async function buildService(service, outRoot = join(root, 'dist')) {
  const target = join(outRoot, service.name);
  rmSync(target, { recursive: true, force: true });
  const result = await build({
    entryPoints: [join(root, service.entry)],
    outfile: join(target, service.main),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: true,
    metafile: true,
    logLevel: 'warning',
    plugins: [
      {
        // Workspace packages are TypeScript sources: compiled into the bundle. npm packages stay
        // outside it, installed beside it, so their own files (wasm, assets, binaries) load as usual.
        name: 'external-npm-packages',
        setup(context) {
          context.onResolve({ filter: /^[^./]/ }, (args) => {
            if (args.path.startsWith('@recordbase/') || builtins.has(args.path)) return undefined;
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });
  // Each external import is found from the workspace package whose source made it.
  const direct = new Map();
  for (const [input, meta] of Object.entries(result.metafile.inputs)) {
    const importer = packageDirOf(dirname(join(root, input)));
    for (const { path, external } of meta.imports) {
      // Relative paths marked external are type-only imports esbuild dropped from the output.
      if (!external || builtins.has(path) || /^[./]/.test(path)) continue;
      const name = packageName(path);
      const source = locate(name, importer);
      if (!source) throw new Error(`${input} imports ${path}, which is not installed`);
      const known = direct.get(name);
      if (known && known !== source)
        throw new Error(`${service.name} would need two versions of ${name}: ${known} and ${source}`);
      direct.set(name, source);
    }
  }
  const { packages } = installClosure(direct, target);
  for (const [from, to] of service.assets ?? [])
    cpSync(join(root, from), join(target, to), { recursive: true });
  writeFileSync(
    join(target, 'package.json'),
    `${JSON.stringify(
      {
        name: `recordbase-${service.name}`,
        private: true,
        description: `The ${service.name} image's code, built by scripts/build-services.mjs.`,
        main: service.main,
        scripts: { start: `node ${service.main}` },
      },
      null,
      2,
    )}\n`,
  );
  return {
    name: service.name,
    dir: target,
    main: join(target, service.main),
    packages,
    direct: [...direct.keys()],
  };
}

async function main() {
  // `--out DIR` builds elsewhere than dist/: the test builds outside the repository, where no
  // node_modules above the output could hide a package missing from it.
  const args = process.argv.slice(2);
  const outAt = args.indexOf('--out');
  const outRoot = outAt >= 0 ? resolve(args[outAt + 1] ?? '') : join(root, 'dist');
  if (outAt >= 0) args.splice(outAt, 2);
  const wanted = args;
  const unknown = wanted.filter((name) => !SERVICES.some((service) => service.name === name));
  if (unknown.length > 0) {
    console.error(`unknown service ${unknown.join(', ')}; known: ${SERVICES.map((s) => s.name).join(', ')}`);
    process.exit(2);
  }
  if (!existsSync(join(root, 'packages/db/src/generated/prisma/client.ts'))) {
    console.error(
      '[build] no Prisma client: run `pnpm --filter @recordbase/db run generate` (or `npm start` once) first',
    );
    process.exit(1);
  }
  mkdirSync(outRoot, { recursive: true });
  for (const service of SERVICES.filter((s) => wanted.length === 0 || wanted.includes(s.name))) {
    const built = await buildService(service, outRoot);
    console.log(`[build] ${built.name}: ${built.main} + ${built.packages} npm packages`);
  }
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`[build] ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
