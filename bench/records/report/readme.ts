import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { README_PATH } from '../../lib/readme';
import type { AirtableResults } from '../airtable-suite';
import type { FormulasResults } from '../formulas-suite';
import type { HistoryResults } from '../history-suite';
import type { LinksResults } from '../links-suite';
import type { PeopleResults } from '../people-suite';
import type { Results } from '../results';
import type { SqlResults } from '../sql';
import { renderAirtableReport } from './airtable';
import { renderReport } from './deals';
import { renderFormulasReport } from './formulas';
import { renderHistoryReport } from './history';
import { renderLinksReport } from './links';
import { renderPeopleReport } from './people';
import { renderSqlReport } from './sql';

/** The records section of bench/README.md: intro.md, each suite's last full run, its findings. */

const DIR = join(__dirname, '..');

export const RESULTS_PATH = join(DIR, 'results.json');
export const PEOPLE_RESULTS_PATH = join(DIR, 'results-people.json');
export const SQL_RESULTS_PATH = join(DIR, 'results-sql.json');
export const FORMULAS_RESULTS_PATH = join(DIR, 'results-formulas.json');
export const LINKS_RESULTS_PATH = join(DIR, 'results-links.json');
export const HISTORY_RESULTS_PATH = join(DIR, 'results-history.json');
export const AIRTABLE_RESULTS_PATH = join(DIR, 'results-airtable.json');

/** Keeps the figures of a suite's last full run, so the README can be rendered again (--report-only). */
export function saveResults(
  path: string,
  results:
    | Results
    | PeopleResults
    | SqlResults
    | AirtableResults
    | FormulasResults
    | LinksResults
    | HistoryResults,
): void {
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
}

function loadResultsFrom<T>(path: string): T | null {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as T) : null;
}

/** A findings file of this directory, set apart by blank lines; empty when there is none. */
function findingsFrom(file: string): string {
  const path = join(DIR, file);
  return existsSync(path) ? `\n${readFileSync(path, 'utf8').trim()}\n` : '';
}

/** Writes bench/README.md: how to run, the cases, the figures of each suite's last full run, and the findings. */
export function writeReadme(): string {
  const intro = readFileSync(join(DIR, 'intro.md'), 'utf8');
  const deals = loadResultsFrom<Results>(RESULTS_PATH);
  const people = loadResultsFrom<PeopleResults>(PEOPLE_RESULTS_PATH);
  const sql = loadResultsFrom<SqlResults>(SQL_RESULTS_PATH);
  const formulas = loadResultsFrom<FormulasResults>(FORMULAS_RESULTS_PATH);
  const findings = findingsFrom('findings.md');
  const formulasFindings = findingsFrom('findings-formulas.md');
  const links = loadResultsFrom<LinksResults>(LINKS_RESULTS_PATH);
  const history = loadResultsFrom<HistoryResults>(HISTORY_RESULTS_PATH);
  const airtable = loadResultsFrom<AirtableResults>(AIRTABLE_RESULTS_PATH);
  const linksFindings = findingsFrom('findings-links.md');
  const airtableFindings = findingsFrom('findings-airtable.md');
  // Other benchmarks keep their own "## " sections after this one; only the records part is rewritten.
  // The sql suite's results come after the findings, which belong to the two suites above them.
  const existing = existsSync(README_PATH) ? readFileSync(README_PATH, 'utf8') : '';
  const otherSections = existing.match(/\n## (?!records\b)[\s\S]*$/)?.[0] ?? '';
  const notRun = '(No full run of this suite yet.)';
  writeFileSync(
    README_PATH,
    `${intro}\n### Results\n\n${deals ? renderReport(deals) : notRun}\n\n### Results of the People workloads (100,000 People)\n\n${people ? renderPeopleReport(people) : notRun}\n${findings}\n### Results of read-only SQL (100,000 People)\n\n${sql ? renderSqlReport(sql) : notRun}\n\n### Results of formula fields (100,000 records)\n\n${formulas ? renderFormulasReport(formulas) : notRun}\n${formulasFindings}\n### Results of count, lookup and rollup fields (100,000 records)\n\n${links ? renderLinksReport(links) : notRun}\n${linksFindings}\n### Results of history and the trash\n\n${history ? renderHistoryReport(history) : notRun}\n\n### Results of the Airtable-compatible API (100,000 People)\n\n${airtable ? renderAirtableReport(airtable) : notRun}\n${airtableFindings}${otherSections}`,
  );
  return README_PATH;
}
