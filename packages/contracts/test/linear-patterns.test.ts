/**
 * Every regular expression of the services runs in linear time on a backtracking engine.
 *
 * The TypeScript compiler API finds each regex literal, each `new RegExp('literal')` (or
 * `RegExp(...)`) and each string literal handed to match/matchAll/search in the sources of
 * apps/* /src and packages/* /src; the exported pattern constants (textValuePatterns) are added.
 * recheck's automaton checker then proves each one free of super-linear backtracking. A pattern
 * it cannot prove safe is to be rewritten or, if it never sees user text, listed below with why.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { check, type Diagnostics, type Parameters } from 'recheck';
import * as ts from 'typescript';
import { textValuePatterns } from '../src/fields';

// The analyser in plain JavaScript, in this process: the same answer on every machine, with no
// platform binary or Java to find. recheck reads the variable on each call.
process.env.RECHECK_BACKEND = 'pure';

/** The automaton checker decides from the pattern's structure, not from fuzzing: a proof. */
const analysis: Parameters = { checker: 'automaton', timeout: null };

const repositoryRoot = join(__dirname, '..', '..', '..');

type FoundPattern = { where: string; source: string; flags: string };

/** Patterns that cannot be proven linear but never see user text, with the reason. None today. */
const exemptPatterns: Readonly<Record<string, string>> = {};

/**
 * Files that build a RegExp from something other than a literal, and where that source comes
 * from; the source itself must be checked in this file.
 */
const dynamicRegExpSources: Readonly<Record<string, string>> = {
  'packages/contracts/src/field-values.ts': 'textValuePatterns, checked as exported pattern constants',
};

/** Methods that turn a string argument into a RegExp. */
const stringToRegExpMethods = new Set(['match', 'matchAll', 'search']);

function sourceFiles(): string[] {
  const files: string[] = [];
  for (const group of ['apps', 'packages']) {
    for (const entry of readdirSync(join(repositoryRoot, group), { withFileTypes: true })) {
      const sourceDirectory = join(repositoryRoot, group, entry.name, 'src');
      if (!entry.isDirectory() || !existsSync(sourceDirectory)) continue;
      for (const file of readdirSync(sourceDirectory, { recursive: true, encoding: 'utf8' })) {
        if (file.endsWith('.ts')) files.push(join(sourceDirectory, file));
      }
    }
  }
  return files.sort();
}

function literalText(node: ts.Node | undefined): string | undefined {
  return node !== undefined && ts.isStringLiteralLike(node) ? node.text : undefined;
}

function isRegExpConstructor(node: ts.Node): node is ts.NewExpression | ts.CallExpression {
  return (
    (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
    ts.isIdentifier(node.expression) &&
    node.expression.text === 'RegExp'
  );
}

function isStringToRegExpCall(node: ts.Node): node is ts.CallExpression {
  return (
    ts.isCallExpression(node) &&
    ts.isPropertyAccessExpression(node.expression) &&
    stringToRegExpMethods.has(node.expression.name.text) &&
    literalText(node.arguments[0]) !== undefined
  );
}

/** The regular expressions of one file, and the places that build one from a non-literal. */
function scan(file: string): { patterns: FoundPattern[]; dynamic: string[] } {
  const sourceFile = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const patterns: FoundPattern[] = [];
  const dynamic: string[] = [];
  const where = (node: ts.Node) =>
    `${relative(repositoryRoot, file)}:${sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1}`;
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const text = node.getText(sourceFile);
      const end = text.lastIndexOf('/');
      patterns.push({ where: where(node), source: text.slice(1, end), flags: text.slice(end + 1) });
    } else if (isRegExpConstructor(node)) {
      const [sourceArgument, flagsArgument] = node.arguments ?? [];
      const source = literalText(sourceArgument);
      const flags = flagsArgument === undefined ? '' : literalText(flagsArgument);
      if (source !== undefined && flags !== undefined) patterns.push({ where: where(node), source, flags });
      else dynamic.push(relative(repositoryRoot, file));
    } else if (isStringToRegExpCall(node)) {
      patterns.push({ where: where(node), source: literalText(node.arguments[0]) as string, flags: '' });
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return { patterns, dynamic };
}

const scanned = sourceFiles().map(scan);
const literalPatterns = scanned.flatMap((result) => result.patterns);
const dynamicFiles = [...new Set(scanned.flatMap((result) => result.dynamic))].sort();

/** Matched case-insensitively: `~*` in SQL and the `i` flag in field-values.ts. */
const exportedPatterns: FoundPattern[] = Object.entries(textValuePatterns).map(([type, source]) => ({
  where: `textValuePatterns.${type}`,
  source,
  flags: 'i',
}));

const allPatterns = [...literalPatterns, ...exportedPatterns].filter(
  (pattern) => !Object.hasOwn(exemptPatterns, pattern.source),
);

/** "safe", or what is wrong and the attack recheck found, for a readable failure. */
function verdict(diagnostics: Diagnostics): string {
  switch (diagnostics.status) {
    case 'safe':
      return 'safe';
    case 'vulnerable':
      return `vulnerable: ${diagnostics.complexity.summary}, attack ${diagnostics.attack.pattern}`;
    case 'unknown':
      return `unknown: ${diagnostics.error.kind}`;
  }
}

/** The email pattern before this test existed: `a@` + `a.`x40000 + `@` held the event loop ~5 s. */
const QUADRATIC_EMAIL_PATTERN = '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$';

describe('the regular expressions of the services', () => {
  it('are found in the sources', () => {
    const sources = literalPatterns.map((pattern) => pattern.source);
    // A few known ones from different packages, so a broken scan cannot pass by finding nothing.
    expect(sources).toContain('^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$');
    expect(sources).toContain('^[A-Za-z0-9_]{1,63}$');
    expect(sources).toContain('^Bearer[ ]+([^\\s]+)\\s*$');
    expect(sources).toContain('^[0-9a-f]{1,4}$');
    expect(literalPatterns.length).toBeGreaterThan(30);
  });

  it('are built from literals, or from a source this test checks', () => {
    expect(dynamicFiles).toEqual(Object.keys(dynamicRegExpSources).sort());
  });

  it('lists only exemptions that are still in the sources', () => {
    const sources = new Set([...literalPatterns, ...exportedPatterns].map((pattern) => pattern.source));
    for (const source of Object.keys(exemptPatterns)) expect(sources).toContain(source);
  });

  it('are checked by an analyser that finds the quadratic email pattern', async () => {
    const diagnostics = await check(QUADRATIC_EMAIL_PATTERN, 'i', analysis);
    expect(diagnostics.status).toBe('vulnerable');
  });

  it.each(allPatterns)('$where /$source/$flags runs in linear time', async ({ source, flags }) => {
    expect(verdict(await check(source, flags, analysis))).toBe('safe');
  });
});
