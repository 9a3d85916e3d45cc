import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { REPO_ROOT } from '@recordbase/launcher';

/**
 * Dependencies point one way (ARCHITECTURE.md): apps → domain → db → contracts, with server-kit
 * (the Express plumbing, on db and contracts) and the queues (on contracts and server-kit) beside
 * the domain, which imports neither; the client on contracts alone, storage and the launcher on
 * nothing of ours, and no app on another app. Every import in the source of every app and package
 * is read and checked against that table: an arrow the wrong way (a package importing an app, db
 * importing server-kit), or a relative path out of its own unit into another's source, fails here
 * before it becomes a cycle.
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
  domain: ['contracts', 'db'],
  'records-api': ['contracts', 'db', 'domain', 'queues', 'server-kit', 'storage'],
  'import-worker': ['contracts', 'db', 'domain', 'queues', 'server-kit', 'storage'],
  'upload-service': ['contracts', 'db', 'domain', 'queues', 'server-kit', 'storage'],
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

/**
 * The table orders the units but not the files inside one, so cycles are looked for file by file:
 * each file's imports of other source files (relative paths, and our packages' exports), `import
 * type` too, since files tied by their types still cannot be understood or moved apart.
 */

/** `@recordbase/<package>/<entry>` → the source file its package.json "exports" names, if a file. */
function packageEntries(): Map<string, string> {
  const entries = new Map<string, string>();
  for (const { dir } of UNIT_DIRS) {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      name: string;
      exports?: Record<string, unknown>;
    };
    for (const [entry, target] of Object.entries(manifest.exports ?? {})) {
      if (typeof target === 'string') entries.set(join(manifest.name, entry), resolve(dir, target));
    }
  }
  return entries;
}

/** The source file a specifier names among `files`: as written, with an extension, or its index. */
function importedFile(
  file: string,
  specifier: string,
  files: ReadonlySet<string>,
  entries: ReadonlyMap<string, string>,
): string | null {
  const base = specifier.startsWith('.') ? resolve(dirname(file), specifier) : entries.get(specifier);
  if (base === undefined) return null;
  const candidates = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')];
  return candidates.find((candidate) => files.has(candidate)) ?? null;
}

/** Each file of `sources` (path → text) with the files of `sources` it imports. */
function importGraph(
  sources: ReadonlyMap<string, string>,
  entries: ReadonlyMap<string, string> = new Map(),
): Map<string, string[]> {
  const files = new Set(sources.keys());
  const graph = new Map<string, string[]>();
  for (const [file, text] of sources) {
    const imported = specifiers(text)
      .map((specifier) => importedFile(file, specifier, files, entries))
      .filter((target) => target !== null);
    graph.set(file, [...new Set(imported)]);
  }
  return graph;
}

/**
 * One cycle through each strongly connected set of files (Tarjan's algorithm): the shortest path
 * from its first file back to it, so a failure names the imports to follow.
 */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const members = new Set<string>();
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      members.add(member);
    } while (member !== node);
    if (members.size > 1 || (graph.get(node) ?? []).includes(node))
      cycles.push(pathBack(graph, node, members));
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

/** The shortest path from `start` back to itself inside `members`, `start` at both ends. */
function pathBack(
  graph: ReadonlyMap<string, readonly string[]>,
  start: string,
  members: Set<string>,
): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let at = 0; at < queue.length; at += 1) {
    const node = queue[at]!;
    for (const next of graph.get(node) ?? []) {
      if (next === start) {
        const path = [start];
        for (let step = node; step !== start; step = cameFrom.get(step)!) path.splice(1, 0, step);
        return [...path, start];
      }
      if (members.has(next) && !cameFrom.has(next) && next !== start) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  throw new Error(`${start} is in no cycle`);
}

describe('import cycles', () => {
  it('has none among the files of any app or package', () => {
    const sources = new Map(
      UNIT_DIRS.flatMap(({ dir }) => sourceFiles(join(dir, 'src'))).map((file) => [
        file,
        readFileSync(file, 'utf8'),
      ]),
    );
    const graph = importGraph(sources, packageEntries());
    // The graph holds the imports between files, not none of them.
    expect([...graph.values()].flat().length).toBeGreaterThan(sources.size);
    const cycles = findCycles(graph).map((cycle) =>
      cycle.map((file) => relative(REPO_ROOT, file)).join(' → '),
    );
    expect(cycles).toEqual([]);
  });

  it('finds one cycle through each set of files that import each other, and none in a tree', () => {
    const graph = new Map([
      ['a', ['b', 'd']],
      ['b', ['c']],
      ['c', ['a', 'b']],
      ['d', ['e']],
      ['e', []],
      ['f', ['f']],
      ['g', ['a']],
    ]);
    // b → c → b is shorter, but the path starts where the search entered the set: a.
    expect(findCycles(graph)).toEqual([
      ['a', 'b', 'c', 'a'],
      ['f', 'f'],
    ]);
    expect(
      findCycles(
        new Map([
          ['a', ['b', 'c']],
          ['b', ['c']],
          ['c', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('follows relative paths, index files and package exports to a cycle', () => {
    const dir = join(REPO_ROOT, 'packages/db/src');
    const sources = new Map([
      [join(dir, 'field-types/index.ts'), "export * from './imports';\nexport type * from './types';"],
      [join(dir, 'field-types/imports.ts'), "import { fieldTypeModule } from '.';"],
      [join(dir, 'field-types/types.ts'), "import type { Table } from '@recordbase/db/physical';"],
      [join(dir, 'physical/index.ts'), "import type { ColumnSpec } from '../field-types/types';"],
      [join(dir, 'physical/tables.ts'), "import { Pool } from 'pg';"],
    ]);
    const entries = new Map([['@recordbase/db/physical', join(dir, 'physical/index.ts')]]);
    const cycles = findCycles(importGraph(sources, entries)).map((cycle) =>
      cycle.map((file) => relative(dir, file)),
    );
    expect(cycles).toEqual([
      ['field-types/types.ts', 'physical/index.ts', 'field-types/types.ts'],
      ['field-types/index.ts', 'field-types/imports.ts', 'field-types/index.ts'],
    ]);
  });
});
