import { quoteIdent } from '@recordbase/db/physical';
import type pg from 'pg';
import type { ApiClient } from '../lib/api';
import { probeCpu } from '../lib/cpu';
import type { BenchConfig } from './config';
import { selected } from './config';
import { HttpRunner } from './http-runner';
import { type Measurement, type MeasureOptions, measure, medianOf } from './measure';
import type { AggregateBody, ApiRecord, ReadCase, WriteCase } from './queries';
import type { Machine, ReadResult, WriteResult } from './results';
import type { RunningServer } from './server';
import { SqlRunner } from './sql-runner';

/**
 * Running cases, shared by the suites (main.ts: Deals; people-suite.ts: People; formulas-suite.ts:
 * formula fields): each read case through the API and as raw SQL at every read concurrency, each
 * write case through the API (and, when it has them, its raw SQL variants) at the write concurrency.
 */

export const fmt = (m: Measurement) =>
  `${m.requestsPerSecond.toFixed(1)} req/s, p50 ${m.p50Ms.toFixed(1)} ms, p95 ${m.p95Ms.toFixed(1)} ms, p99 ${m.p99Ms.toFixed(1)} ms (n=${m.requests}${m.errors ? `, ${m.errors} errors: ${m.firstError}` : ''}; other processes ${m.foreignCores.toFixed(2)} cores${m.cpuMsPerRequest ? `; CPU ms per request: records-api ${m.cpuMsPerRequest.recordsApi.toFixed(2)}, other services ${m.cpuMsPerRequest.services.toFixed(2)}, PostgreSQL ${m.cpuMsPerRequest.postgres.toFixed(2)}, load generator ${m.cpuMsPerRequest.loadGenerator.toFixed(2)}` : ''})`;

/** Where the CPU went during each measurement, other processes' included: the machine may be shared. */
function probeFor(config: BenchConfig, server: RunningServer) {
  const databaseName = new URL(config.databaseUrl).pathname.slice(1);
  return () => probeCpu(() => server.roots(), databaseName);
}

/** How every case is measured: BENCH_DURATION_S after BENCH_WARMUP_S, at `concurrency`, CPU probed. */
export const measureOptions = (
  config: BenchConfig,
  server: RunningServer,
  concurrency: number,
): MeasureOptions => ({
  concurrency,
  durationMs: config.durationMs,
  warmupMs: config.warmupMs,
  probe: probeFor(config, server),
});

/** What a suite's cases run against. */
export interface Target {
  config: BenchConfig;
  server: RunningServer;
  apiKey: string;
  /** `/bases/…/tables/…/records` of the table under test. */
  recordsPath: string;
  /** Its physical table, and a pool to look at it: reads wait for index builds on it (see below). */
  table?: { name: string; pool: pg.Pool };
}

/** What a suite runs with: the server, its keys, the admin pool and what the report says of the run. */
export interface SuiteContext {
  config: BenchConfig;
  server: RunningServer;
  apiKey: string;
  /** The operator's key: only to make a suite's own narrower API key (sql). */
  rootKey: string;
  admin: pg.Pool;
  api: ApiClient;
  machine: Machine;
  startedAt: Date;
}

/** What every suite's results say of its run: the settings, the machine, what served it, when. */
export const runOf = (context: SuiteContext) => ({
  config: context.config,
  machine: context.machine,
  serverMode: context.server.path ?? context.server.mode,
  startedAt: context.startedAt.toISOString(),
});

/**
 * The API may build indexes in the background when a field is first filtered or sorted (or
 * matched on). A read case is timed once none is being built on the table or left invalid, so it
 * measures the steady state rather than the build; the build's length is printed.
 */
export async function indexBuildsSettled(pool: pg.Pool, table: string, limitMs = 180_000): Promise<void> {
  const started = performance.now();
  const pending = async () => {
    const result = await pool.query<{ pending: number }>(
      `SELECT ((SELECT count(*) FROM pg_stat_progress_create_index WHERE relid = to_regclass($1))
             + (SELECT count(*) FROM pg_index WHERE indrelid = to_regclass($1) AND NOT indisvalid))::int AS pending`,
      [table],
    );
    return result.rows[0]?.pending ?? 0;
  };
  // A build asked for by the request just answered may take a moment to start.
  let quiet = 0;
  while (quiet < 2) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    quiet = (await pending()) === 0 ? quiet + 1 : 0;
    if (performance.now() - started > limitMs) {
      console.warn(`  index builds on ${table} still running after ${limitMs / 1000} s; measuring anyway`);
      return;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  if (seconds > 1) console.log(`  waited ${seconds.toFixed(1)} s for index builds on the table`);
}

/**
 * The API and the raw SQL must answer the same records and total (and whatever else the case
 * checks of each record) before they are timed; aggregates, the same groups.
 */
async function checkSameAnswers(
  http: HttpRunner,
  sql: SqlRunner,
  recordsPath: string,
  query: ReadCase,
): Promise<string> {
  if (query.endpoint === 'aggregate') return checkSameGroups(http, sql, recordsPath, query);
  const api = await http.once<{ records: ApiRecord[]; total: number; hasMore: boolean }>(
    `${recordsPath}/list`,
    query.body,
  );
  const raw = await sql.once(query.rawWithTotal ?? query.raw);
  const rawRecords = raw.records as (Record<string, unknown> & { id: string })[];
  const apiIds = api.records.map((r) => r.id);
  const sameIds = apiIds.length === rawRecords.length && apiIds.every((id, i) => id === rawRecords[i]!.id);
  if (!sameIds) throw new Error(`${query.id}: the API and raw SQL return different records`);
  if (raw.total !== null && raw.total !== api.total) {
    throw new Error(`${query.id}: total differs (API ${api.total}, raw SQL ${raw.total})`);
  }
  api.records.forEach((record, i) => {
    const difference = query.checkRecord?.(record, rawRecords[i]!);
    if (difference) throw new Error(`${query.id}: record ${record.id} differs: ${difference}`);
  });
  return `${apiIds.length} records, total ${api.total}`;
}

/**
 * Lists the target table's records once with each of `reads` (filters and sorts), which makes the API build
 * its read index on each field of `columns` in the background (the table is past
 * READ_INDEX_MIN_ROWS), then waits until all of them are valid; the seconds that took.
 */
export async function readIndexesBuilt(
  target: Target & { table: NonNullable<Target['table']> },
  reads: readonly ReadCase[],
  columns: readonly { id: string; name: string }[],
): Promise<number> {
  const { table } = target;
  const started = performance.now();
  const http = new HttpRunner(target.server.baseUrl, target.apiKey, 1);
  try {
    for (const read of reads) await http.once(`${target.recordsPath}/list`, read.body);
  } finally {
    await http.close();
  }
  for (;;) {
    const valid = await table.pool.query<{ def: string }>(
      `SELECT pg_get_indexdef(indexrelid) AS def FROM pg_index
        WHERE indrelid = to_regclass($1) AND indisvalid AND indisready`,
      [table.name],
    );
    const missing = columns.filter(
      (column) =>
        !valid.rows.some((row) => row.def.includes(`(${quoteIdent(column.id)} DESC NULLS LAST, seq)`)),
    );
    const seconds = (performance.now() - started) / 1000;
    if (missing.length === 0) {
      console.log(
        `  read indexes of ${columns.map((column) => column.name).join(' and ')} built in ${seconds.toFixed(1)} s`,
      );
      return seconds;
    }
    if (seconds > 180) {
      throw new Error(`no valid read index on ${missing.map((column) => column.id).join(', ')} after 180 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Aggregates: the same groups in the same order, counts equal, other values (sums and averages
 * of doubles, added in another order) equal to 1e-9 of their size. The raw query answers each
 * group as `[key, ...values]`, the aggregations in the body's order; one field is grouped by.
 */
async function checkSameGroups(
  http: HttpRunner,
  sql: SqlRunner,
  recordsPath: string,
  query: ReadCase,
): Promise<string> {
  const body = query.body as AggregateBody;
  const groupField = body.groupBy?.[0];
  const api = await http.once<{
    groups: { key: Record<string, unknown>; values: (number | null)[] }[];
    truncated: boolean;
  }>(`${recordsPath}/aggregate`, body);
  const raw = (await sql.once(query.raw)).records as [unknown, ...(number | null)[]][];
  const fail = (why: string) => new Error(`${query.id}: the API and raw SQL aggregate differently: ${why}`);
  if (api.truncated) throw fail('the API left groups out');
  if (api.groups.length !== raw.length) throw fail(`${api.groups.length} groups, raw SQL ${raw.length}`);
  const close = (a: number | null, b: number | null) =>
    a === null || b === null ? a === b : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  let records = 0;
  api.groups.forEach((group, i) => {
    const [key, ...values] = raw[i]!;
    const apiKey = groupField === undefined ? null : group.key[groupField];
    if (apiKey !== key) throw fail(`group ${i}: key ${apiKey}, raw SQL ${key}`);
    body.aggregations.forEach((aggregation, j) => {
      const [a, b] = [group.values[j] ?? null, values[j] ?? null];
      const same = aggregation.fn === 'count' ? a === b : close(a, b);
      if (!same) throw fail(`group ${JSON.stringify(key)}, ${aggregation.fn}: API ${a}, raw SQL ${b}`);
      if (aggregation.fn === 'count') records += a ?? 0;
    });
  });
  return `${api.groups.length} groups of ${records} records`;
}

export async function runReads(target: Target, cases: ReadCase[]): Promise<ReadResult[]> {
  const { config, server, apiKey, recordsPath } = target;
  const results: ReadResult[] = [];
  for (const concurrency of config.readConcurrencies) {
    const http = new HttpRunner(server.baseUrl, apiKey, concurrency);
    const sql = new SqlRunner(config.databaseUrl, concurrency);
    try {
      for (const query of cases) {
        const path = query.recordsPath ?? recordsPath;
        const checked = await checkSameAnswers(http, sql, path, query);
        console.log(`${query.id} c=${concurrency}: ${query.title} [${checked}]`);
        if (target.table) await indexBuildsSettled(target.table.pool, target.table.name);
        const options = measureOptions(config, server, concurrency);
        const body = JSON.stringify(query.body);
        const api = await measure(
          http.post(`${path}/${query.endpoint ?? 'list'}`, 200, () => body),
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
          ...(query.endpoint ? { endpoint: query.endpoint } : {}),
          ...(query.sameAs ? { sameAs: query.sameAs } : {}),
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

export async function runWrites(target: Target, cases: WriteCase[], phase?: string): Promise<WriteResult[]> {
  const { config, server, apiKey, recordsPath } = target;
  const results: WriteResult[] = [];
  const concurrency = config.writeConcurrency;
  const http = new HttpRunner(server.baseUrl, apiKey, concurrency);
  const sql = new SqlRunner(config.databaseUrl, concurrency);
  const options = measureOptions(config, server, concurrency);
  try {
    for (const write of cases.filter((c) => selected(config, c.id))) {
      console.log(`${write.id} c=${concurrency}${phase ? ` (${phase})` : ''}: ${write.title}`);
      await write.prepare?.(http);
      const api = await measure(
        http.post(`${recordsPath}/bulk`, write.expectedStatus, write.body, write.recordsPerRequest),
        options,
      );
      console.log(`  API      ${fmt(api)}, ${api.itemsPerSecond.toFixed(0)} records/s`);
      const result: WriteResult = { id: write.id, title: write.title, concurrency, api };
      if (phase) result.phase = phase;
      for (const variant of write.raw ?? []) {
        const raw = await measure(sql.write(variant.statement, write.recordsPerRequest), options);
        console.log(`  ${variant.label}  ${fmt(raw)}, ${raw.itemsPerSecond.toFixed(0)} rows/s`);
        result[variant.key] = raw;
      }
      results.push(result);
    }
  } finally {
    await http.close();
    await sql.close();
  }
  return results;
}

/** Medians over repeats of the same (case, concurrency, phase). */
export function mergeRepeats(rounds: ReadResult[][], writeRounds: WriteResult[][]) {
  const reads = rounds[0]!.map((first, index) => ({
    ...first,
    api: medianOf(rounds.map((round) => round[index]!.api)),
    raw: medianOf(rounds.map((round) => round[index]!.raw)),
    ...(first.rawWithTotal
      ? { rawWithTotal: medianOf(rounds.map((round) => round[index]!.rawWithTotal!)) }
      : {}),
  }));
  const optional = (index: number, key: 'raw' | 'rawBare') =>
    writeRounds[0]![index]![key] ? { [key]: medianOf(writeRounds.map((round) => round[index]![key]!)) } : {};
  const writes = writeRounds[0]!.map((first, index) => ({
    ...first,
    api: medianOf(writeRounds.map((round) => round[index]!.api)),
    ...optional(index, 'raw'),
    ...optional(index, 'rawBare'),
  }));
  return { reads, writes };
}
