import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { REPO_ROOT } from '@recordbase/launcher';

/**
 * The benchmarks' own direction (ARCHITECTURE.md): a suite of bench/ imports its own modules and
 * bench/lib, never another suite's; lib imports no suite; and no module of bench imports itself
 * back through others. What two suites need is moved to lib instead of borrowed sideways.
 */

const BENCH = join(REPO_ROOT, 'bench');

/** Every module of bench, by its path from bench/, with the bench modules it imports. */
function benchImports(): Map<string, string[]> {
  const modules = readdirSync(BENCH, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((file) => !file.split(sep).includes('node_modules'));
  const known = new Set(modules);
  const graph = new Map<string, string[]>();
  for (const file of modules) {
    const targets: string[] = [];
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/(?:\bfrom|\bimport)\s+'(\.[^']+)'/g)) {
      const target = `${resolve(dirname(file), specifier!)}.ts`;
      if (known.has(target)) targets.push(relative(BENCH, target));
    }
    graph.set(relative(BENCH, file), targets);
  }
  return graph;
}

/** The folder of bench a module belongs to: a suite's name, or lib. */
const folder = (module: string) => module.split(sep)[0]!;

describe('bench imports', () => {
  const graph = benchImports();

  it('reads the suites and lib', () => {
    expect(new Set([...graph.keys()].map(folder))).toEqual(
      new Set(['changes', 'export', 'imports', 'lib', 'records', 'soak', 'uploads', 'webhooks']),
    );
  });

  it('has a suite import only its own modules and lib, and lib only lib', () => {
    const sideways = [...graph].flatMap(([module, targets]) =>
      targets
        .filter((target) => folder(target) !== folder(module) && folder(target) !== 'lib')
        .map((target) => `${module} → ${target}`),
    );
    expect(sideways).toEqual([]);
  });

  it('has no import cycle', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (module: string, path: string[]) => {
      if (state.get(module) === 'done') return;
      if (state.get(module) === 'open') {
        cycles.push([...path.slice(path.indexOf(module)), module].join(' → '));
        return;
      }
      state.set(module, 'open');
      for (const next of graph.get(module) ?? []) visit(next, [...path, module]);
      state.set(module, 'done');
    };
    for (const module of graph.keys()) visit(module, []);
    expect(cycles).toEqual([]);
  });
});
