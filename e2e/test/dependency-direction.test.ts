import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { REPO_ROOT } from '@recordbase/launcher';

/**
 * Dependencies point one way (ARCHITECTURE.md): apps → domain → server-kit → db → contracts, the
 * queues on contracts and server-kit, the client on contracts alone, storage and the launcher on nothing of
 * ours, and no app on another app. Every
 * import in the source of every app and package is read and checked against that table: an arrow
 * the wrong way (a package importing an app, db importing server-kit), or a relative path out of
 * its own unit into another's source, fails here before it becomes a cycle.
 */

/** What each unit's source may import of the workspace, besides itself. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  contracts: [],
  db: ['contracts'],
  storage: [],
  launcher: [],
  client: ['contracts'],
  'server-kit': ['contracts', 'db'],
  queues: ['contracts', 'server-kit'],
  domain: ['contracts', 'db', 'queues', 'server-kit'],
  'records-api': ['contracts', 'db', 'domain', 'queues', 'server-kit', 'storage'],
  'import-worker': ['contracts', 'db', 'domain', 'queues', 'server-kit', 'storage'],
  'upload-service': ['contracts', 'db', 'queues', 'server-kit', 'storage'],
  'webhook-dispatcher': ['contracts', 'db', 'queues', 'server-kit', 'storage'],
};

const UNIT_DIRS = ['apps', 'packages'].flatMap((parent) =>
  readdirSync(join(REPO_ROOT, parent), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => ({ unit: entry.name, dir: join(REPO_ROOT, parent, entry.name) })),
);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(?:ts|tsx|mts|cts|js|mjs|cjs)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((file) => !file.split(sep).includes('node_modules') && !file.split(sep).includes('generated'));
}

/** Every module specifier a file names: `from '…'`, `import '…'`, `import('…')`, `require('…')`. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom|\bimport|\brequire)\s*\(?\s*['"]([^'"\n]+)['"]/g)) {
    found.push(match[1]!);
  }
  return found;
}

/** The unit a path lies in, or null outside apps/ and packages/. */
function unitOf(path: string): string | null {
  const found = UNIT_DIRS.find(({ dir }) => path === dir || path.startsWith(dir + sep));
  return found ? found.unit : null;
}

/** The imports of `file` (in `unit`) that the table does not allow, each with why. */
function wrongImports(unit: string, file: string, text: string): string[] {
  const allowed = new Set([unit, ...(MAY_IMPORT[unit] ?? [])]);
  const where = relative(REPO_ROOT, file);
  const wrong: string[] = [];
  for (const specifier of specifiers(text)) {
    const ours = /^@recordbase\/([^/]+)/.exec(specifier);
    if (ours && !allowed.has(ours[1]!)) wrong.push(`${where}: ${specifier}`);
    if (specifier.startsWith('.')) {
      const target = unitOf(resolve(dirname(file), specifier));
      if (target !== unit)
        wrong.push(`${where}: ${specifier} (into ${target ?? 'outside apps and packages'})`);
    }
  }
  return wrong;
}

describe('dependency direction', () => {
  it('has a row of the table for every app and package', () => {
    expect(UNIT_DIRS.map(({ unit }) => unit).sort()).toEqual(Object.keys(MAY_IMPORT).sort());
  });

  it('has no cycle in the table itself', () => {
    const visiting = new Set<string>();
    const done = new Set<string>();
    const visit = (unit: string, path: string[]) => {
      if (done.has(unit)) return;
      if (visiting.has(unit)) throw new Error(`cycle: ${[...path, unit].join(' → ')}`);
      visiting.add(unit);
      for (const next of MAY_IMPORT[unit] ?? []) visit(next, [...path, unit]);
      visiting.delete(unit);
      done.add(unit);
    };
    for (const unit of Object.keys(MAY_IMPORT)) visit(unit, []);
  });

  it('imports, in the source of every app and package, only what the table allows', () => {
    const files = UNIT_DIRS.flatMap(({ unit, dir }) =>
      sourceFiles(join(dir, 'src')).map((file) => ({ unit, file })),
    );
    // Every unit's source is read, not none of it.
    expect(new Set(files.map(({ unit }) => unit)).size).toBe(UNIT_DIRS.length);
    const wrong = files.flatMap(({ unit, file }) => wrongImports(unit, file, readFileSync(file, 'utf8')));
    expect(wrong).toEqual([]);
  });

  it('finds an arrow the wrong way and a relative path into another unit', () => {
    const dbFile = join(REPO_ROOT, 'packages/db/src/example.ts');
    expect(
      wrongImports(
        'db',
        dbFile,
        [
          "import { AppError } from '@recordbase/server-kit/errors';",
          "import { jobQueues } from '@recordbase/contracts/jobs';",
          "const app = await import('../../../apps/records-api/src/app');",
          "import { ids } from './ids';",
        ].join('\n'),
      ),
    ).toEqual([
      'packages/db/src/example.ts: @recordbase/server-kit/errors',
      'packages/db/src/example.ts: ../../../apps/records-api/src/app (into records-api)',
    ]);
  });
});
