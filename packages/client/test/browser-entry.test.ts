import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The main entry and the webhook verifier must load in a browser: every module they reach, the
 * contracts included, imports nothing from Node. Followed through the sources as a bundler would.
 */

const contractsSrc = resolve(__dirname, '../../contracts/src');

function importsOf(file: string): string[] {
  return ts
    .preProcessFile(readFileSync(file, 'utf8'), true, true)
    .importedFiles.map((entry) => entry.fileName);
}

function reachedPackages(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of importsOf(file)) {
      if (specifier.startsWith('.')) visit(`${join(dirname(file), specifier)}.ts`);
      else if (specifier.startsWith('@recordbase/contracts/')) {
        visit(join(contractsSrc, `${specifier.slice('@recordbase/contracts/'.length)}.ts`));
      } else packages.add(specifier);
    }
  };
  visit(resolve(__dirname, '..', entry));
  return packages;
}

const nodeModules = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

it.each(['src/index.ts', 'src/webhook-verifier.ts'])('%s reaches no Node module, only zod', (entry) => {
  const reached = [...reachedPackages(entry)];
  expect(reached.filter((name) => nodeModules.has(name) || name.startsWith('node:'))).toEqual([]);
  expect(reached).toEqual(['zod']);
});

it('the Node helpers are where Node modules are used', () => {
  expect([...reachedPackages('src/node.ts')].filter((name) => name.startsWith('node:')).sort()).toEqual([
    'node:fs',
    'node:path',
    'node:stream',
  ]);
});
