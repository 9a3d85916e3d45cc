// First: makes sure the Prisma client exists before anything loads @recordbase/db.
import '../lib/prisma-client';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findNginx } from '@recordbase/launcher/gateway';
import { defaultProcesses } from '@recordbase/server-kit/processes';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { request } from 'undici';
import { ApiClient } from '../lib/api';
import { CPU_ROLES, type CpuUse, probeCpu } from '../lib/cpu';
import { deleteQueueKeys, dropDatabase, recreateDatabase } from '../lib/database';
import { gitSha, host, loadAverage } from '../lib/machine';
import { waitForOtherBenchmark } from '../lib/proc';
import { writeSuiteSection } from '../lib/readme';
import { newQueuePrefix, startBenchStack } from '../lib/stack';
import { median } from '../lib/stats';
import { createDataset } from './dataset';
import { processTree, type RssWindow, watchRss } from './rss';

/**
 * `npm run bench:export`: the records export (POST …/records/export) of a whole table of
 * 1,000,000 records as CSV, NDJSON and XLSX, through the stack as `npm start` runs it (every
 * service up, the dispatcher consuming events, the nginx gateway in front when nginx is
 * installed), read over HTTP from this process as a stream and discarded; against PostgreSQL's own
 * `COPY (SELECT <the same columns> … ORDER BY <the export's order>) TO STDOUT (FORMAT csv, HEADER)`
 * of the same rows, streamed and discarded the same way, in the same run. After a warm-up COPY and
 * a warm-up export of each format (reported, not in the medians), each export and a COPY after it,
 * BENCH_REPEATS times; medians reported. records-api's RSS (every process of it) is
 * sampled every 100 ms during each export. Each figure is printed; bench/README.md's `export`
 * section is rewritten from results.json.
 */

const env = process.env;
const DATABASE_URL = env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/recordbase_bench_export';
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RECORDS = Number(env.BENCH_EXPORT_RECORDS ?? 1_000_000);
const REPEATS = Number(env.BENCH_REPEATS ?? 3);
const FORMATS = (env.BENCH_EXPORT_FORMATS ?? 'csv,ndjson,xlsx').split(',').filter(Boolean) as Format[];
const GATEWAY = env.BENCH_GATEWAY !== '0' && findNginx() !== null;
const RSS_INTERVAL_MS = 100;
const RESULTS = join(__dirname, 'results.json');
/** The sources whose version the results name. */
const MEASURED = ['packages/domain/src/records/export', 'apps/records-api/src/http'];

type Format = 'csv' | 'ndjson' | 'xlsx';

const MB = 1e6;

interface Transfer {
  seconds: number;
  /** Until the answer's headers (export) or the first bytes (COPY). */
  firstByteSeconds: number;
  bytes: number;
  /** Records counted in the body (CSV and NDJSON lines); NaN where not counted (XLSX). */
  records: number;
  cpu: CpuUse;
}

interface ExportRun extends Transfer {
  rss: RssWindow;
}

/**
 * Records in a body read chunk by chunk: NDJSON's line breaks; CSV's outside quotes (a quoted
 * cell may hold a line break), found by jumping from quote to line break with indexOf.
 */
function lineCounter(format: Format) {
  let lines = 0;
  let inQuotes = false;
  return {
    add(chunk: Buffer) {
      if (format === 'xlsx') return;
      if (format === 'ndjson') {
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
        return;
      }
      let quote = chunk.indexOf(34);
      let newline = chunk.indexOf(10);
      for (;;) {
        if (!inQuotes && newline !== -1 && (quote === -1 || newline < quote)) {
          lines += 1;
          newline = chunk.indexOf(10, newline + 1);
          continue;
        }
        if (quote === -1) return;
        // A doubled quote inside a quoted cell closes and opens again: the state comes out the same.
        inQuotes = !inQuotes;
        const after = quote + 1;
        quote = chunk.indexOf(34, after);
        if (newline !== -1 && newline < after) newline = chunk.indexOf(10, after);
      }
    },
    get lines() {
      return format === 'xlsx' ? Number.NaN : lines;
    },
  };
}

async function main(): Promise<void> {
  if (process.argv.includes('--report-only')) {
    const results = JSON.parse(readFileSync(RESULTS, 'utf8')) as Results;
    console.log(report(results));
    console.log(`wrote ${writeSuiteSection('export', __dirname, report(results))}`);
    return;
  }
  await waitForOtherBenchmark();
  const processes = Number(env.RECORDS_API_PROCESSES ?? defaultProcesses());
  const machine = {
    ...host(),
    loadAverage: loadAverage(),
    startedAt: new Date().toISOString(),
    sources: gitSha(MEASURED),
    recordsApiProcesses: processes,
    gateway: GATEWAY,
  };
  console.log(
    `export benchmark: ${RECORDS} records, ${FORMATS.join(', ')}, ${REPEATS} repeat(s), ${GATEWAY ? 'through the nginx gateway' : 'straight to records-api (no nginx)'}; ${machine.cpus} cores (${machine.cpuModel}), load ${machine.loadAverage}`,
  );
  await recreateDatabase(DATABASE_URL);
  const databaseName = decodeURIComponent(new URL(DATABASE_URL).pathname.slice(1));
  const queuePrefix = newQueuePrefix('export');
  const stack = await startBenchStack({
    databaseUrl: DATABASE_URL,
    redisUrl: REDIS_URL,
    queuePrefix,
    logLevel: env.BENCH_SERVER_LOG ?? 'warn',
    tuning: {},
    // As the records suite: flags for records-api's processes (--cpu-prof, heap sizes) when profiling.
    execArgv: { 'records-api': (env.BENCH_SERVER_EXEC_ARGV ?? '').split(' ').filter(Boolean) },
    services: ['records-api', 'upload-service', 'webhook-dispatcher', 'import-worker'],
    gateway: GATEWAY,
  });
  const api = stack.service('records-api');
  const origin = stack.gateway ? stack.gateway.url : `http://127.0.0.1:${api.port}`;
  const client = new ApiClient(origin, stack.rootKey);
  const pool = new pg.Pool({ connectionString: DATABASE_URL, application_name: 'bench-export', max: 2 });
  // The run's database is dropped WITH (FORCE) at the end, whatever happened before.
  pool.on('error', () => {});
  const roots = () => {
    const pids = stack.pids();
    return {
      recordsApi: pids.filter((entry) => entry.name === 'records-api').map((entry) => entry.pid),
      services: pids.filter((entry) => entry.name !== 'records-api').map((entry) => entry.pid),
    };
  };
  try {
    console.log(`loading ${RECORDS} records …`);
    const dataset = await createDataset(pool, client, RECORDS);
    const path = `/api/v1/bases/${dataset.databaseId}/tables/${dataset.tableId}/records/export`;

    const exportOnce = async (format: Format): Promise<ExportRun> => {
      const pids = processTree(api.pid);
      const rss = await watchRss(pids, RSS_INTERVAL_MS);
      const cpu = probeCpu(roots, databaseName);
      const counter = lineCounter(format);
      const started = performance.now();
      const answer = await request(`${origin}${path}`, {
        method: 'POST',
        headers: { authorization: client.authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ format }),
      });
      const firstByteSeconds = (performance.now() - started) / 1000;
      if (answer.statusCode !== 200) {
        const text = await answer.body.text();
        await rss.stop();
        throw new Error(`export ${format} answered ${answer.statusCode}: ${text.slice(0, 500)}`);
      }
      let bytes = 0;
      for await (const chunk of answer.body as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        counter.add(chunk);
      }
      const seconds = (performance.now() - started) / 1000;
      const used = cpu.stop();
      const window = await rss.stop();
      // CSV: a header line; NDJSON: a line per record.
      const records = format === 'csv' ? counter.lines - 1 : counter.lines;
      return { seconds, firstByteSeconds, bytes, records, cpu: used, rss: window };
    };

    const copySql = `COPY (SELECT ${dataset.columns.map((column) => `r.${quoteColumn(column)}`).join(', ')} FROM ${dataset.physical} r ORDER BY r.created_at, r.seq) TO STDOUT WITH (FORMAT csv, HEADER)`;
    const copyOnce = async (): Promise<Transfer> => {
      const connection = await pool.connect();
      try {
        const cpu = probeCpu(roots, databaseName);
        const started = performance.now();
        const stream = connection.query(copyTo(copySql));
        let bytes = 0;
        let firstByteSeconds = Number.NaN;
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          if (bytes === 0) firstByteSeconds = (performance.now() - started) / 1000;
          bytes += chunk.length;
        }
        const seconds = (performance.now() - started) / 1000;
        return { seconds, firstByteSeconds, bytes, records: stream.rowCount, cpu: cpu.stop() };
      } finally {
        connection.release();
      }
    };

    // Not measured: brings the table into the caches for both readers alike.
    const warm = await copyOnce();
    console.log(`warm-up COPY: ${warm.seconds.toFixed(2)} s, ${(warm.bytes / MB).toFixed(1)} MB`);
    // Not in the medians either, but reported: a records-api process's first export of a format
    // runs cold (code not yet optimised, a young heap still growing), up to twice the time of the
    // next ones, as the COPY's warm-up is for PostgreSQL's caches.
    const firstExportSeconds: Partial<Record<Format, number>> = {};
    for (const format of FORMATS) {
      const first = await exportOnce(format);
      firstExportSeconds[format] = first.seconds;
      console.log(`warm-up ${format} export: ${line(first)}`);
    }

    const runs: Results['formats'] = {};
    for (let repeat = 1; repeat <= REPEATS; repeat += 1) {
      for (const format of FORMATS) {
        const run = await exportOnce(format);
        if (format !== 'xlsx' && run.records !== RECORDS)
          throw new Error(`the ${format} export held ${run.records} records, not ${RECORDS}`);
        console.log(
          `  ${format} #${repeat}: ${line(run)}; records-api RSS ${run.rss.beforeMiB.toFixed(1)} MiB → peak +${run.rss.growthMiB.toFixed(1)} MiB over ${run.rss.processes} process(es) (one process at most +${run.rss.maxProcessGrowthMiB.toFixed(1)} MiB, ${run.rss.samples} samples)`,
        );
        const copy = await copyOnce();
        if (copy.records !== RECORDS) throw new Error(`COPY gave ${copy.records} rows, not ${RECORDS}`);
        console.log(`  COPY #${repeat}: ${line(copy)} → ratio ${(copy.seconds / run.seconds).toFixed(2)}x`);
        const entry = runs[format] ?? { exports: [], copies: [] };
        runs[format] = entry;
        entry.exports.push(run);
        entry.copies.push(copy);
      }
    }
    const results: Results = {
      machine,
      records: RECORDS,
      repeats: REPEATS,
      copySql: copySql.replace(dataset.physical, '<table>'),
      load: dataset.steps,
      formats: runs,
      firstExportSeconds,
      summary: Object.fromEntries(Object.entries(runs).map(([format, entry]) => [format, summarize(entry)])),
    };
    writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
    console.log(report(results));
    console.log(`wrote ${RESULTS} and ${writeSuiteSection('export', __dirname, report(results))}`);
  } finally {
    await pool.end().catch(() => {});
    await stack.stop();
    await deleteQueueKeys(REDIS_URL, queuePrefix);
    if (env.BENCH_KEEP_DATABASE !== '1') await dropDatabase(DATABASE_URL);
  }
}

const quoteColumn = (column: string) => `"${column.replace(/"/g, '""')}"`;

const cores = (cpu: CpuUse) =>
  CPU_ROLES.map((role) => `${role} ${(cpu.coreSeconds[role] / cpu.seconds).toFixed(2)}`).join(', ');

function line(run: Transfer): string {
  return `${run.seconds.toFixed(2)} s (first byte ${run.firstByteSeconds.toFixed(2)} s), ${(run.bytes / MB).toFixed(1)} MB = ${(run.bytes / MB / run.seconds).toFixed(1)} MB/s, ${Math.round(RECORDS / run.seconds).toLocaleString('en-US')} records/s; cores busy: ${cores(run.cpu)}`;
}

interface Summary {
  bytes: number;
  exportSeconds: number;
  copySeconds: number;
  copyBytes: number;
  mbPerSecond: number;
  recordsPerSecond: number;
  copyMbPerSecond: number;
  ratio: number;
  rssGrowthMiB: number;
  maxProcessRssGrowthMiB: number;
  /** Median cores busy per role during the exports and the COPYs. */
  exportCores: Record<string, number>;
  copyCores: Record<string, number>;
}

interface Results {
  machine: ReturnType<typeof host> & {
    loadAverage: string;
    startedAt: string;
    sources: string;
    recordsApiProcesses: number;
    gateway: boolean;
  };
  records: number;
  repeats: number;
  copySql: string;
  load: [string, number][];
  formats: Partial<Record<Format, { exports: ExportRun[]; copies: Transfer[] }>>;
  /** The warm-up export of each format, the first after the stack started (not in the medians). */
  firstExportSeconds?: Partial<Record<Format, number>>;
  summary: Partial<Record<string, Summary>>;
}

function medianCores(runs: readonly Transfer[]): Record<string, number> {
  return Object.fromEntries(
    CPU_ROLES.map((role) => [role, median(runs.map((run) => run.cpu.coreSeconds[role] / run.cpu.seconds))]),
  );
}

function summarize(entry: { exports: ExportRun[]; copies: Transfer[] }): Summary {
  const exportSeconds = median(entry.exports.map((run) => run.seconds));
  const copySeconds = median(entry.copies.map((run) => run.seconds));
  const bytes = median(entry.exports.map((run) => run.bytes));
  return {
    bytes,
    exportSeconds,
    copySeconds,
    copyBytes: median(entry.copies.map((run) => run.bytes)),
    mbPerSecond: bytes / MB / exportSeconds,
    recordsPerSecond: RECORDS / exportSeconds,
    copyMbPerSecond: median(entry.copies.map((run) => run.bytes)) / MB / copySeconds,
    ratio: copySeconds / exportSeconds,
    rssGrowthMiB: median(entry.exports.map((run) => run.rss.growthMiB)),
    maxProcessRssGrowthMiB: Math.max(...entry.exports.map((run) => run.rss.maxProcessGrowthMiB)),
    exportCores: medianCores(entry.exports),
    copyCores: medianCores(entry.copies),
  };
}

const NAMES: Record<string, string> = { csv: 'CSV', ndjson: 'NDJSON', xlsx: 'XLSX' };

function report(results: Results): string {
  const m = results.machine;
  const rows = Object.entries(results.summary).map(([format, s]) => {
    const csv = format === 'csv';
    const worst = Math.max(
      ...(results.formats[format as Format]?.exports ?? []).map((run) => run.rss.growthMiB),
    );
    return `| ${NAMES[format] ?? format} | ${(s!.bytes / MB).toFixed(1)} MB in ${s!.exportSeconds.toFixed(2)} s: **${s!.mbPerSecond.toFixed(1)} MB/s**, ${Math.round(s!.recordsPerSecond).toLocaleString('en-US')} records/s | ${(s!.copyBytes / MB).toFixed(1)} MB in ${s!.copySeconds.toFixed(2)} s: ${s!.copyMbPerSecond.toFixed(1)} MB/s | **${s!.ratio.toFixed(2)}x**${csv ? ' (≥ 0.5x)' : ''} | **${s!.rssGrowthMiB.toFixed(1)} MiB** (worst ${worst.toFixed(1)})${csv ? ' (< 50 MB)' : ''} | ${coresCell(s!.exportCores)} | ${coresCell(s!.copyCores)} |`;
  });
  return [
    `Run of ${m.startedAt} on ${m.cpus} cores (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}; load average before ${m.loadAverage}. Sources: ${m.sources}. ${results.records.toLocaleString('en-US')} records, ${results.repeats} repeat(s) of each (medians); ${m.gateway ? 'through the nginx gateway' : 'straight to records-api (nginx not installed)'}, records-api ${m.recordsApiProcesses} process(es). Load: ${results.load.map(([step, seconds]) => `${step} ${seconds.toFixed(1)} s`).join(', ')}.`,
    '',
    `Baseline: \`${results.copySql}\`, the same columns in the export's order, through pg-copy-streams, read and discarded alike. Ratio = COPY time / export time. Cores: busy cores during the transfer (core-seconds / seconds) of records-api, the other services with the gateway, the PostgreSQL backends, this process reading. Before the rounds, a warm-up COPY and one warm-up export of each format (the first after start, cold: ${firstExports(results)}), neither in the medians.`,
    '',
    '| format | export through the stack | COPY … TO STDOUT (CSV) | ratio | records-api RSS growth | cores: api / services / postgres / reader | COPY cores: api / services / postgres / reader |',
    '|---|--:|--:|--:|--:|--:|--:|',
    ...rows,
  ].join('\n');
}

const firstExports = (results: Results) =>
  Object.entries(results.firstExportSeconds ?? {})
    .map(([format, seconds]) => `${NAMES[format] ?? format} ${seconds.toFixed(2)} s`)
    .join(', ') || 'not recorded';

const coresCell = (cores: Record<string, number>) =>
  ['recordsApi', 'services', 'postgres', 'loadGenerator']
    .map((role) => (cores[role] ?? 0).toFixed(2))
    .join(' / ');

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
