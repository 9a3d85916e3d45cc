import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** bench/README.md: one `## <suite>` section per suite, each written by its own report. */

export const README_PATH = join(__dirname, '..', 'README.md');

/**
 * Puts `section` (which starts with its own `## <name>` heading) in place of the README's section
 * of that name, up to the next `## ` heading, or appends it; the other sections stay as they are.
 */
export function replaceReadmeSection(name: string, section: string): string {
  const readme = existsSync(README_PATH) ? readFileSync(README_PATH, 'utf8') : '# Benchmarks\n';
  const start = readme.search(new RegExp(`^## ${name}\\s*$`, 'm'));
  let updated: string;
  if (start === -1) {
    updated = `${readme.trimEnd()}\n\n${section}`;
  } else {
    const rest = readme.slice(start + 1);
    const nextHeading = rest.search(/^## /m);
    const end = nextHeading === -1 ? readme.length : start + 1 + nextHeading;
    updated = `${readme.slice(0, start)}${section}${end < readme.length ? `\n${readme.slice(end)}` : ''}`;
  }
  writeFileSync(README_PATH, updated);
  return README_PATH;
}

/** The text of a suite's prose file (intro.md, findings.md), trimmed. */
export const prose = (dir: string, file: string) => readFileSync(join(dir, file), 'utf8').trim();

/** A suite's findings.md between blank lines, to follow its results; '' when it has none. */
export function findings(dir: string): string {
  return existsSync(join(dir, 'findings.md')) ? `\n${prose(dir, 'findings.md')}\n` : '';
}

/** Replaces (or appends) the suite's section: its intro.md, its results, its findings.md. */
export function writeSuiteSection(name: string, dir: string, results: string): string {
  return replaceReadmeSection(
    name,
    `${prose(dir, 'intro.md')}\n\n### Results\n\n${results}\n${findings(dir)}`,
  );
}
