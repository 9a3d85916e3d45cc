import { randomBytes } from 'node:crypto';
import { migrate } from '@recordbase/db/migrate';
import { qualifiedTable } from '@recordbase/db/physical';
import pg from 'pg';
import { ApiClient } from '../lib/api';
import { runAirtableSuite } from './airtable-suite';
import { type BenchConfig, loadBenchConfig, type Suite, selected } from './config';
import type { Dataset } from './dataset';
import { runFormulasSuite } from './formulas-suite';
import { runHistorySuite } from './history-suite';
import { HttpRunner } from './http-runner';
import { runLinksSuite } from './links-suite';
import { prepareDataset, resetWrites } from './load';
import { runPeopleSuite } from './people-suite';
import {
  type DeepCursor,
  deepCursorCase,
  deepCursorSetup,
  type ReadCase,
  readCases,
  writeCases,
} from './queries';
import { renderAirtableReport } from './report/airtable';
import { renderReport } from './report/deals';
import { renderFormulasReport } from './report/formulas';
import { renderHistoryReport } from './report/history';
import { renderLinksReport } from './report/links';
import { renderPeopleReport } from './report/people';
import {
  AIRTABLE_RESULTS_PATH,
  FORMULAS_RESULTS_PATH,
  HISTORY_RESULTS_PATH,
  LINKS_RESULTS_PATH,
  PEOPLE_RESULTS_PATH,
  RESULTS_PATH,
  SQL_RESULTS_PATH,
  saveResults,
  writeReadme,
} from './report/readme';
import { renderSqlReport } from './report/sql';
import {
  type Machine,
  machineInfo,
  type ReadResult,
  type Results,
  sourceFingerprint,
  type WriteResult,
} from './results';
import { mergeRepeats, runOf, runReads, runWrites, type SuiteContext } from './run';
import { type RunningServer, startServer, startServerByLauncher, startServerProcess } from './server';
import { runSql } from './sql';

/**
 * `pnpm run bench:records`: starts records-api and runs the suites of BENCH_SUITE (people: list
 * pages and bulk writes on 100,000 People; sql: read-only SQL against records/list on the same People;
 * airtable: the Airtable-compatible /v0 against /api/v1 on the same People; deals: the 1,000,000-row
 * Deals cases; formulas: formula fields on 100,000 records; links: count, lookup and rollup fields
 * on 100,000 records; the last two against records-api started by the launcher as `npm start`
 * starts it), each measuring the API against the same queries in raw SQL (airtable: /v0 against
 * /api/v1). See ../README.md.
 */

const tablePath = (dataset: Dataset) => `/bases/${dataset.databaseId}/tables/Deals/records`;

/** Q4c's start: the nextCursor of the page before the deep page, taken once through the API. */
async function deepCursor(
  server: RunningServer,
  apiKey: string,
  admin: pg.Pool,
  dataset: Dataset,
): Promise<DeepCursor> {
  const setup = deepCursorSetup(dataset);
  const http = new HttpRunner(server.baseUrl, apiKey, 1);
  try {
    const page = await http.once<{ nextCursor: string | null }>(`${tablePath(dataset)}/list`, setup.body);
    if (!page.nextCursor) throw new Error('Q4c: the page before the deep page has no nextCursor');
    const row = await admin.query<{ created_at: string; seq: string }>(
      setup.lastRow.text,
      setup.lastRow.values,
    );
    const last = row.rows[0];
    if (!last) throw new Error('Q4c: no row before the deep page');
    return { cursor: page.nextCursor, createdAt: last.created_at, seq: last.seq };
  } finally {
    await http.close();
  }
}

/** Every read case selected, Q4c (which needs a cursor from the API) right after Q4. */
async function selectedReadCases(
  config: BenchConfig,
  server: RunningServer,
  apiKey: string,
  admin: pg.Pool,
  dataset: Dataset,
): Promise<ReadCase[]> {
  const cases = readCases(dataset);
  if (selected(config, 'Q4c')) {
    const q4c = deepCursorCase(dataset, await deepCursor(server, apiKey, admin, dataset));
    cases.splice(cases.findIndex((c) => c.id === 'Q4') + 1, 0, q4c);
  }
  return cases.filter((c) => selected(config, c.id));
}

/** The 1,000,000-row Deals cases (Q1-Q8b). */
async function runDeals(context: SuiteContext): Promise<Results> {
  const { config, server, apiKey, admin, api } = context;
  const dataset = await prepareDataset(admin, api, config.rows, config.companies);
  const cases = await selectedReadCases(config, server, apiKey, admin, dataset);
  const target = {
    config,
    server,
    apiKey,
    recordsPath: tablePath(dataset),
    table: { name: qualifiedTable(dataset.schemaName, dataset.deals.tableId), pool: admin },
  };
  const readRounds: ReadResult[][] = [];
  const writeRounds: WriteResult[][] = [];
  for (let round = 1; round <= config.repeats; round++) {
    if (config.repeats > 1) console.log(`--- deals round ${round} of ${config.repeats}`);
    readRounds.push(await runReads(target, cases));
    writeRounds.push(await runWrites(target, writeCases(dataset, randomBytes(4).toString('hex'))));
    const removed = await resetWrites(admin, dataset);
    console.log(`removed the ${removed} records this round wrote`);
  }
  return {
    ...runOf(context),
    data: { rows: dataset.rows, companies: dataset.companies.ids.length, load: dataset.load },
    ...mergeRepeats(readRounds, writeRounds),
  };
}

/** `--report-only`: renders the README again from the results files (after editing findings.md). */
function reportOnly(): void {
  console.log(`\nwrote ${writeReadme()}`);
}

async function main(): Promise<void> {
  if (process.argv.includes('--report-only')) return reportOnly();
  const config = loadBenchConfig();
  const startedAt = new Date();
  console.log(
    `records benchmark, suites ${config.suites.join(', ')} (${config.peopleRows} People, ${config.rows} Deals, ${config.formulaRows} Items with formulas, ${config.linkRows} Items with links), ${config.durationMs / 1000} s per case after ${config.warmupMs / 1000} s warm-up, ${config.repeats} repeat(s)`,
  );

  console.log('migrating the benchmark database ...');
  await migrate(config.databaseUrl);
  const admin = new pg.Pool({
    connectionString: config.databaseUrl,
    max: 2,
    application_name: 'bench-setup',
  });
  // Taken when the first server starts, which is when its code is loaded.
  const source = sourceFingerprint();
  const machine = await machineInfo(admin, source);
  const reports: string[] = [];
  try {
    const appSuites = config.suites.filter(
      (suite) => suite !== 'formulas' && suite !== 'links' && suite !== 'history',
    );
    if (appSuites.length > 0) {
      const kind = config.server === 'stack' ? 'launcher' : 'app';
      await withServer(config, admin, machine, startedAt, kind, async (context) => {
        for (const suite of appSuites) reports.push(await runAppSuite(suite, context));
      });
    }
    if (config.suites.includes('formulas')) {
      await withServer(config, admin, machine, startedAt, 'launcher', async (context) => {
        const results = await runFormulasSuite(context);
        reports.push(`## formulas: ${config.formulaRows} Items\n\n${renderFormulasReport(results)}`);
        if (config.writeReadme) saveResults(FORMULAS_RESULTS_PATH, results);
      });
    }
    if (config.suites.includes('links')) {
      await withServer(config, admin, machine, startedAt, 'launcher', async (context) => {
        const results = await runLinksSuite(context);
        reports.push(`## links: ${config.linkRows} Items\n\n${renderLinksReport(results)}`);
        if (config.writeReadme) saveResults(LINKS_RESULTS_PATH, results);
      });
    }
    if (config.suites.includes('history')) {
      const results = await runHistorySuite(config, admin, machine, startedAt, (work) =>
        withServer(config, admin, machine, startedAt, 'launcher', work),
      );
      reports.push(`## history\n\n${renderHistoryReport(results)}`);
      if (config.writeReadme) saveResults(HISTORY_RESULTS_PATH, results);
    }
    console.log(`\n${reports.join('\n\n')}`);
    if (config.writeReadme) {
      console.log(`\nwrote ${writeReadme()}`);
    } else {
      console.log(
        '\n(README and results not rewritten: partial run; BENCH_ONLY, BENCH_ROWS, BENCH_PEOPLE_ROWS, BENCH_FORMULA_ROWS, BENCH_LINK_ROWS or BENCH_WRITE_README=0 set)',
      );
    }
  } finally {
    await admin.end();
  }
}

/** The people, sql, airtable and deals suites, on the stack or (BENCH_SERVER) records-api's createApp alone. */
async function runAppSuite(suite: Suite, context: SuiteContext): Promise<string> {
  const { config } = context;
  if (suite === 'people') {
    const results = await runPeopleSuite(context);
    if (config.writeReadme) saveResults(PEOPLE_RESULTS_PATH, results);
    return `## people: ${config.peopleRows} People\n\n${renderPeopleReport(results)}`;
  }
  if (suite === 'sql') {
    const results = await runSql(context);
    if (config.writeReadme) saveResults(SQL_RESULTS_PATH, results);
    return `## sql: ${config.peopleRows} People\n\n${renderSqlReport(results)}`;
  }
  if (suite === 'airtable') {
    const results = await runAirtableSuite(context);
    if (config.writeReadme) saveResults(AIRTABLE_RESULTS_PATH, results);
    return `## airtable: ${config.peopleRows} People\n\n${renderAirtableReport(results)}`;
  }
  const results = await runDeals(context);
  if (config.writeReadme) saveResults(RESULTS_PATH, results);
  return `## deals: ${config.rows} Deals\n\n${renderReport(results)}`;
}

/**
 * Starts records-api (`app`: createApp in a child process or in this process, server.ts;
 * `launcher`: as `npm start` starts it), makes the API key the requests are measured with (clients
 * hold API keys, not the operator's root key), runs `work`, stops the server.
 */
async function withServer(
  config: BenchConfig,
  admin: pg.Pool,
  machine: Machine,
  startedAt: Date,
  kind: 'app' | 'launcher',
  work: (context: SuiteContext) => Promise<void>,
): Promise<void> {
  let server: RunningServer;
  let rootKey: string;
  if (kind === 'launcher') {
    const started = await startServerByLauncher({
      databaseUrl: config.databaseUrl,
      redisUrl: config.redisUrl,
      tuning: {
        SQL_MAX_CONNECTIONS: String(config.sqlMaxConnections),
        // Deep scans of a million rows at concurrency 16 queue for seconds on 2 cores: the
        // benchmark measures them rather than the production timeout.
        STATEMENT_TIMEOUT_MS: '120000',
      },
      gateway: config.gateway,
    });
    server = started;
    rootKey = started.rootKey;
  } else {
    rootKey = `root_${randomBytes(24).toString('hex')}`;
    const serverOptions = {
      databaseUrl: config.databaseUrl,
      redisUrl: config.redisUrl,
      rootApiKey: rootKey,
      poolSize: config.serverPoolSize,
      sqlMaxConnections: config.sqlMaxConnections,
    };
    server =
      config.server === 'in-process'
        ? await startServer(serverOptions)
        : await startServerProcess(serverOptions);
  }
  console.log(
    `records-api listening at ${server.baseUrl} (${server.path ?? `${server.mode}, pool of ${config.serverPoolSize}`})`,
  );
  try {
    const created = await new ApiClient(server.baseUrl, rootKey).expect<{ key: string }>(
      201,
      'POST',
      '/api-keys',
      {
        name: 'bench',
        scopes: ['records:read', 'records:write', 'schema:read', 'schema:write'],
      },
    );
    await work({
      config,
      server,
      apiKey: created.key,
      rootKey,
      admin,
      api: new ApiClient(server.baseUrl, created.key),
      machine,
      startedAt,
    });
  } finally {
    await server.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
