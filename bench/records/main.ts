import { randomBytes } from 'node:crypto';
import { migrate } from '@recordbase/db/migrate';
import pg from 'pg';
import { ApiClient } from './api';
import { type BenchConfig, loadBenchConfig, selected } from './config';
import { probeForeignCpu } from './cpu';
import type { Dataset } from './dataset';
import { HttpRunner } from './http-runner';
import { prepareDataset, resetWrites } from './load';
import { type Measurement, measure, medianOf } from './measure';
import {
  type DeepCursor,
  deepCursorCase,
  deepCursorSetup,
  type ReadCase,
  readCases,
  type WriteCase,
  writeCases,
} from './queries';
import {
  loadResults,
  machineInfo,
  type ReadResult,
  type Results,
  renderReport,
  saveResults,
  sourceFingerprint,
  type WriteResult,
  writeReadme,
} from './report';
import { type RunningServer, startServer, startServerProcess } from './server';
import { SqlRunner } from './sql-runner';

/**
 * `pnpm run bench:records`: loads (or reuses) the benchmark database, starts records-api, and
 * measures the list and bulk endpoints against the same queries in raw SQL. See ../README.md.
 */

const fmt = (m: Measurement) =>
  `${m.requestsPerSecond.toFixed(1)} req/s, p50 ${m.p50Ms.toFixed(1)} ms, p99 ${m.p99Ms.toFixed(1)} ms (n=${m.requests}${m.errors ? `, ${m.errors} errors: ${m.firstError}` : ''}; other processes ${m.foreignCores.toFixed(2)} cores)`;

/** Other processes' CPU during each measurement: the machine may be shared. */
function probeFor(config: BenchConfig, server: RunningServer) {
  const databaseName = new URL(config.databaseUrl).pathname.slice(1);
  return () => probeForeignCpu(new Set([process.pid, server.pid]), databaseName);
}

const tablePath = (dataset: Dataset) => `/bases/${dataset.databaseId}/tables/Deals/records`;

/** The API and the raw SQL must answer the same records and total before they are timed. */
async function checkSameAnswers(
  http: HttpRunner,
  sql: SqlRunner,
  dataset: Dataset,
  query: ReadCase,
): Promise<string> {
  const api = await http.once<{ records: { id: string }[]; total: number; hasMore: boolean }>(
    `${tablePath(dataset)}/list`,
    query.body,
  );
  const raw = await sql.once(query.rawWithTotal ?? query.raw);
  const rawIds = (raw.records as { id: string }[]).map((r) => r.id);
  const apiIds = api.records.map((r) => r.id);
  const sameIds = apiIds.length === rawIds.length && apiIds.every((id, i) => id === rawIds[i]);
  if (!sameIds) throw new Error(`${query.id}: the API and raw SQL return different records`);
  if (raw.total !== null && raw.total !== api.total) {
    throw new Error(`${query.id}: total differs (API ${api.total}, raw SQL ${raw.total})`);
  }
  return `${apiIds.length} records, total ${api.total}`;
}

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

async function runReads(
  config: BenchConfig,
  server: RunningServer,
  apiKey: string,
  admin: pg.Pool,
  dataset: Dataset,
) {
  const results: ReadResult[] = [];
  const cases = await selectedReadCases(config, server, apiKey, admin, dataset);
  for (const concurrency of config.readConcurrencies) {
    const http = new HttpRunner(server.baseUrl, apiKey, concurrency);
    const sql = new SqlRunner(config.databaseUrl, concurrency);
    try {
      for (const query of cases) {
        const checked = await checkSameAnswers(http, sql, dataset, query);
        console.log(`${query.id} c=${concurrency}: ${query.title} [${checked}]`);
        const options = {
          concurrency,
          durationMs: config.durationMs,
          warmupMs: config.warmupMs,
          probe: probeFor(config, server),
        };
        const body = JSON.stringify(query.body);
        const api = await measure(
          http.post(`${tablePath(dataset)}/list`, 200, () => body),
          options,
        );
        console.log(`  API      ${fmt(api)}`);
        const raw = await measure(sql.op(query.raw), options);
        console.log(`  raw SQL  ${fmt(raw)}`);
        let rawWithTotal: Measurement | undefined;
        if (query.rawWithTotal) {
          rawWithTotal = await measure(sql.op(query.rawWithTotal), options);
          console.log(`  raw SQL + count(*)  ${fmt(rawWithTotal)}`);
        }
        results.push({
          id: query.id,
          title: query.title,
          body: query.body,
          concurrency,
          api,
          raw,
          rawWithTotal,
        });
      }
    } finally {
      await http.close();
      await sql.close();
    }
  }
  return results;
}

async function runWrites(config: BenchConfig, server: RunningServer, apiKey: string, dataset: Dataset) {
  const results: WriteResult[] = [];
  const runId = randomBytes(4).toString('hex');
  const cases = writeCases(dataset, runId).filter((c: WriteCase) => selected(config, c.id));
  const concurrency = config.writeConcurrency;
  const http = new HttpRunner(server.baseUrl, apiKey, concurrency);
  try {
    for (const write of cases) {
      console.log(`${write.id} c=${concurrency}: ${write.title}`);
      const api = await measure(
        http.post(`${tablePath(dataset)}/bulk`, write.expectedStatus, write.body, write.recordsPerRequest),
        {
          concurrency,
          durationMs: config.durationMs,
          warmupMs: config.warmupMs,
          probe: probeFor(config, server),
        },
      );
      console.log(`  API      ${fmt(api)}, ${api.itemsPerSecond.toFixed(0)} records/s`);
      results.push({ id: write.id, title: write.title, concurrency, api });
    }
  } finally {
    await http.close();
  }
  return results;
}

/** Medians over repeats of the same (case, concurrency). */
function mergeRepeats(rounds: Results['reads'][], writeRounds: Results['writes'][]) {
  const reads = rounds[0]!.map((first, index) => ({
    ...first,
    api: medianOf(rounds.map((round) => round[index]!.api)),
    raw: medianOf(rounds.map((round) => round[index]!.raw)),
    ...(first.rawWithTotal
      ? { rawWithTotal: medianOf(rounds.map((round) => round[index]!.rawWithTotal!)) }
      : {}),
  }));
  const writes = writeRounds[0]!.map((first, index) => ({
    ...first,
    api: medianOf(writeRounds.map((round) => round[index]!.api)),
  }));
  return { reads, writes };
}

/** `--report-only`: renders the README again from results.json (after editing findings.md). */
function reportOnly(): void {
  const results = loadResults();
  console.log(renderReport(results));
  console.log(`\nwrote ${writeReadme(results)}`);
}

async function main(): Promise<void> {
  if (process.argv.includes('--report-only')) return reportOnly();
  const config = loadBenchConfig();
  const started = new Date();
  console.log(
    `records benchmark: ${config.rows} Deals, ${config.durationMs / 1000} s per case after ${config.warmupMs / 1000} s warm-up, ${config.repeats} repeat(s)`,
  );

  console.log('migrating the benchmark database ...');
  await migrate(config.databaseUrl);
  const admin = new pg.Pool({
    connectionString: config.databaseUrl,
    max: 2,
    application_name: 'bench-setup',
  });
  const apiKey = `root_${randomBytes(24).toString('hex')}`;
  const serverOptions = {
    databaseUrl: config.databaseUrl,
    redisUrl: config.redisUrl,
    rootApiKey: apiKey,
    poolSize: config.serverPoolSize,
  };
  // Taken when the server starts, which is when its code is loaded.
  const source = sourceFingerprint();
  const server = config.inProcess
    ? await startServer(serverOptions)
    : await startServerProcess(serverOptions);
  console.log(
    `records-api listening at ${server.baseUrl} (${server.mode}, pool of ${config.serverPoolSize})`,
  );
  try {
    const dataset = await prepareDataset(
      admin,
      new ApiClient(server.baseUrl, apiKey),
      config.rows,
      config.companies,
    );
    const machine = await machineInfo(admin, source);
    const readRounds: Results['reads'][] = [];
    const writeRounds: Results['writes'][] = [];
    for (let round = 1; round <= config.repeats; round++) {
      if (config.repeats > 1) console.log(`--- round ${round} of ${config.repeats}`);
      readRounds.push(await runReads(config, server, apiKey, admin, dataset));
      writeRounds.push(await runWrites(config, server, apiKey, dataset));
      const removed = await resetWrites(admin, dataset);
      console.log(`removed the ${removed} records this round wrote`);
    }
    const results: Results = {
      config,
      machine,
      data: { rows: dataset.rows, companies: dataset.companies.ids.length, load: dataset.load },
      serverMode: server.mode,
      startedAt: started.toISOString(),
      ...mergeRepeats(readRounds, writeRounds),
    };
    const report = renderReport(results);
    console.log(`\n${report}`);
    if (config.writeReadme) {
      saveResults(results);
      const path = writeReadme(results);
      console.log(`\nwrote ${path}`);
    } else {
      console.log(
        '\n(README not rewritten: partial run; BENCH_ONLY, BENCH_ROWS or BENCH_WRITE_README=0 set)',
      );
    }
  } finally {
    await server.close();
    await admin.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
