import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { quoteIdent } from '@recordbase/db/physical';
import { request } from 'undici';
import { ApiClient } from '../lib/api';
import { rssBytes, waitForOtherBenchmark, waitForQuiet } from '../lib/proc';
import type { Service } from '../lib/stack';
import {
  aggregates,
  BASELINE_COLUMNS,
  connect,
  copyCsv,
  createBaselineTable,
  type HistoryFloor,
  historyFloor,
} from './baseline';
import type { Format, ImportsBenchConfig } from './config';
import { type CpuClass, type CpuFigures, watchCpu } from './cpu';
import { COLUMNS, type DataFile } from './dataset';
import { watchRss } from './rss';
import { type Stack, startWorker } from './stack';

/**
 * One round of one format: a new base; the file uploaded to upload-service; a fresh import worker
 * whose RSS is sampled from just before `POST …/imports` until the status says succeeded; then,
 * in the same round, COPY of the equivalent CSV into a plain table; the imported table checked
 * against that table; the base and the table dropped.
 */

const MiB = 1024 * 1024;

export interface StatusChange {
  /** Milliseconds since just before `POST …/imports` when the poll's answer arrived. */
  atMs: number;
  status: string;
  rowsImported: number;
  rowsTotal: number | null;
  /** The status's updated_at, ms since the same origin (the moment the worker wrote it). */
  updatedMs: number;
  /** Worker and PostgreSQL CPU seconds so far (cumulative since the POST), read at `atMs`. */
  cpu: Record<CpuClass, number>;
  rssMiB: number;
}

/** The import's stretches, from the status's transitions (see phasesOf). */
export interface Phase {
  name: 'read: infer + COPY to staging' | 'read again (a type changed values)' | 'final transaction';
  seconds: number;
  workerCpuSeconds: number;
  postgresCpuSeconds: number;
  /** Highest worker RSS sampled within the phase, minus the idle RSS. */
  rssGrowthMiB: number;
}

export interface RoundResult {
  format: Format;
  repeat: number;
  rows: number;
  fileBytes: number;
  upload: { seconds: number; mibPerSecond: number; uploadServiceRssGrowthMiB: number };
  import: {
    seconds: number;
    rowsPerSecond: number;
    rowsImported: number;
    rowsTotal: number | null;
    polls: number;
    changes: StatusChange[];
    phases: Phase[];
  };
  worker: {
    rssIdleMiB: number;
    rssPeakMiB: number;
    rssGrowthMiB: number;
    /** When the peak was read, seconds after the POST. */
    rssPeakAtSeconds: number;
    /** RSS once the import had succeeded (what the process kept). */
    rssAfterMiB: number;
    samples: number;
    maxGapMs: number;
    cpu: CpuFigures;
    log: string[];
  };
  copy: {
    /** The CSV COPY read: the same file (CSV rounds) or the XLSX's rows as CSV (XLSX rounds). */
    csvBytes: number;
    seconds: number;
    rowsPerSecond: number;
    cpu: CpuFigures;
  };
  /** PostgreSQL's own least work to keep the rows with their history (historyFloor); null when the check failed. */
  floor: HistoryFloor | null;
  /** import seconds / COPY seconds, (upload + import) / COPY, floor / COPY and import / floor. */
  ratio: { import: number; endToEnd: number; floor: number; importToFloor: number };
  check: {
    ok: boolean;
    mismatches: string[];
    fieldTypes: Record<string, string>;
    imported: Record<string, string>;
    baseline: Record<string, string>;
  };
  quiet: { busyCores: number; waitedMs: number };
}

export interface RoundSettings {
  format: Format;
  repeat: number;
  /** The file imported. */
  file: DataFile;
  /** The CSV of the same rows, for the COPY baseline (the file itself for CSV). */
  csv: DataFile;
  config: ImportsBenchConfig;
  stack: Stack;
}

const MIME = { csv: 'text/csv', xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The worker of the round in progress, to stop on a signal. */
let currentWorker: Service | undefined;
export async function abortRound(): Promise<void> {
  await currentWorker?.stop('SIGKILL');
}

/** `POST /csvupload` or `/xlsxupload`: the file streamed from disk as multipart/form-data. */
async function upload(stack: Stack, file: DataFile, fileName: string) {
  const boundary = `----recordbase-bench-${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="filepond"; filename="${fileName}"\r\nContent-Type: ${MIME[file.kind]}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* body() {
    yield head;
    yield* createReadStream(file.path, { highWaterMark: 256 * 1024 });
    yield tail;
  }
  const started = performance.now();
  const response = await request(`http://127.0.0.1:${stack.uploads.port}/${file.kind}upload`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${stack.rootKey}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + file.bytes + tail.length),
    },
    body: Readable.from(body()),
  });
  const text = await response.body.text();
  const seconds = (performance.now() - started) / 1000;
  if (response.statusCode !== 201) throw new Error(`upload: ${response.statusCode} ${text.slice(0, 500)}`);
  return { seconds, s3Key: (JSON.parse(text) as { s3Key: string }).s3Key };
}

interface ImportStatus {
  status: string;
  rowsImported: number;
  rowsTotal: number | null;
  tableId: string | null;
  errors: unknown[];
  updatedAt: string;
}

/**
 * The stretches between the status's transitions, timed by the status's own updated_at:
 * - read: from the POST until rowsTotal is set (the worker took the job, read the whole file,
 *   inferred the types and, for a new table, streamed the rows by COPY into the staging table);
 * - read again: only when a column's type changed the values of rows already staged; until the
 *   last progress report before the end;
 * - final transaction: until the poll saw `succeeded` (table created, rows moved in with their
 *   events, committed).
 */
function phasesOf(changes: StatusChange[], endMs: number, rss: { ms: number; mib: number }[], idle: number) {
  const readEnd = changes.find((change) => change.rowsTotal !== null && change.status === 'running');
  const running = changes.filter((change) => change.status === 'running');
  const copyEnd = running[running.length - 1];
  const end = changes[changes.length - 1]!;
  if (!readEnd || !copyEnd) return [];
  const zero = { worker: 0, postgres: 0, postgresShared: 0, ours: 0, other: 0 };
  const marks: {
    name: Phase['name'];
    from: number;
    to: number;
    cpuFrom: Record<CpuClass, number>;
    cpuTo: Record<CpuClass, number>;
  }[] = [
    {
      name: 'read: infer + COPY to staging',
      from: 0,
      to: readEnd.updatedMs,
      cpuFrom: zero,
      cpuTo: readEnd.cpu,
    },
  ];
  if (copyEnd.updatedMs > readEnd.updatedMs) {
    marks.push({
      name: 'read again (a type changed values)',
      from: readEnd.updatedMs,
      to: copyEnd.updatedMs,
      cpuFrom: readEnd.cpu,
      cpuTo: copyEnd.cpu,
    });
  }
  marks.push({
    name: 'final transaction',
    from: copyEnd.updatedMs,
    to: endMs,
    cpuFrom: copyEnd.cpu,
    cpuTo: end.cpu,
  });
  return marks.map((mark): Phase => {
    const within = rss.filter((sample) => sample.ms >= mark.from && sample.ms <= mark.to);
    return {
      name: mark.name,
      seconds: (mark.to - mark.from) / 1000,
      // CPU is read when a poll sees a change, so its edges are the polls' (±pollMs), not updated_at's.
      workerCpuSeconds: mark.cpuTo.worker - mark.cpuFrom.worker,
      postgresCpuSeconds: mark.cpuTo.postgres - mark.cpuFrom.postgres,
      rssGrowthMiB: within.length > 0 ? Math.max(...within.map((sample) => sample.mib)) - idle : 0,
    };
  });
}

export async function runRound(settings: RoundSettings): Promise<RoundResult> {
  const { format, repeat, file, csv, config, stack } = settings;
  if (config.waitForOtherBench) await waitForOtherBenchmark();
  const api = new ApiClient(`http://127.0.0.1:${stack.api.port}`, stack.rootKey);
  const base = await api.expect<{ id: string }>(201, 'POST', '/bases', {
    name: `imports bench ${format} ${repeat}`,
  });
  const sql = await connect(config.databaseUrl, 'bench-imports');
  const baselineTable = `bench_copy_${format}_${repeat}`;
  let worker: Service | undefined;
  try {
    worker = await startWorker(stack);
    currentWorker = worker;
    const workerPid = worker.pid;

    // Upload: timed on its own, with the upload-service's RSS.
    await sql.query('CHECKPOINT');
    const uploadRss = await watchRss(stack.uploads.pid, config.rssIntervalMs);
    const uploaded = await upload(stack, file, `people-${repeat}.${format}`);
    const uploadSeries = await uploadRss.stop();

    // Import: from just before the POST until a poll answers succeeded.
    await sql.query('CHECKPOINT');
    const quiet = await waitForQuiet(config.quietCores, config.quietWaitMs);
    const rss = await watchRss(workerPid, config.rssIntervalMs);
    const cpu = watchCpu({ worker: workerPid, ours: [stack.api.pid, stack.uploads.pid] }, stack.databaseName);
    // Every time of the import is in ms since this moment (Date.now(), as the status's updated_at).
    const origin = Date.now();
    const accepted = await api.expect<{ id: string }>(202, 'POST', `/bases/${base.id}/imports`, {
      s3Key: uploaded.s3Key,
      tableName: `People ${repeat}`,
    });
    const changes: StatusChange[] = [];
    let polls = 0;
    let status: ImportStatus;
    for (;;) {
      status = await api.expect<ImportStatus>(200, 'GET', `/bases/${base.id}/imports/${accepted.id}`);
      polls += 1;
      const atMs = Date.now() - origin;
      const last = changes[changes.length - 1];
      if (
        !last ||
        last.status !== status.status ||
        last.rowsImported !== status.rowsImported ||
        last.rowsTotal !== status.rowsTotal
      ) {
        changes.push({
          atMs,
          status: status.status,
          rowsImported: status.rowsImported,
          rowsTotal: status.rowsTotal,
          updatedMs: Date.parse(status.updatedAt) - origin,
          cpu: cpu.snapshot(),
          rssMiB: rssBytes(workerPid) / MiB,
        });
      }
      if (status.status === 'succeeded' || status.status === 'failed') break;
      if (atMs > config.importTimeoutMs)
        throw new Error(`the import took over ${config.importTimeoutMs / 1000} s`);
      await sleep(config.pollMs);
    }
    const importMs = changes[changes.length - 1]!.atMs;
    const series = await rss.stop();
    const workerCpu = cpu.stop();
    const rssAfter = rssBytes(workerPid) / MiB;
    if (status.status !== 'succeeded' || status.tableId === null)
      throw new Error(`the import ${status.status}: ${JSON.stringify(status.errors).slice(0, 1000)}`);
    await worker.stop();
    currentWorker = undefined;
    // After the stop: the worker logs "import finished" only after its commit, a moment after the poll.
    const log = worker
      .output()
      .split('\n')
      .filter((line) => line.includes('import finished'));

    // The baseline: COPY of the same rows as CSV into a plain table, in the same quiet conditions.
    await createBaselineTable(sql, baselineTable);
    await sql.query('CHECKPOINT');
    await waitForQuiet(config.quietCores, config.quietWaitMs);
    const copyCpu = watchCpu({ ours: [stack.api.pid, stack.uploads.pid] }, stack.databaseName);
    const copied = await copyCsv(sql, baselineTable, csv.path);
    const copyFigures = copyCpu.stop();
    if (copied.rows !== csv.rows) throw new Error(`COPY wrote ${copied.rows} rows, the file has ${csv.rows}`);

    // The check: the imported table against the baseline's, and the types the import inferred.
    const { rows: fields } = await sql.query<{ id: string; name: string; type: string; schema: string }>(
      `SELECT f.id, f.name, f.type, d.schema_name AS schema FROM fields f
         JOIN tables t ON t.id = f.table_id JOIN databases d ON d.id = t.database_id
        WHERE f.table_id = $1 ORDER BY f.position`,
      [status.tableId],
    );
    const mismatches: string[] = [];
    const fieldTypes: Record<string, string> = {};
    const importedColumns = COLUMNS.map((column) => {
      const field = fields.find((candidate) => candidate.name === column.name);
      fieldTypes[column.name] = field?.type ?? 'missing';
      if (field?.type !== column.field)
        mismatches.push(
          `${column.name}: the import made a ${field?.type ?? 'missing'} field, expected ${column.field}`,
        );
      return field?.id ?? column.name;
    });
    const importedTable = `${quoteIdent(fields[0]?.schema ?? 'missing')}.${quoteIdent(status.tableId)}`;
    const imported = mismatches.length === 0 ? await aggregates(sql, importedTable, importedColumns) : {};
    const baseline = await aggregates(sql, quoteIdent(baselineTable), BASELINE_COLUMNS);
    for (const [key, value] of Object.entries(baseline)) {
      if (mismatches.length > 0 && key !== 'rows') continue;
      if (imported[key] !== value) mismatches.push(`${key}: imported ${imported[key]}, COPY ${value}`);
    }
    // The floor: what PostgreSQL alone needs to keep these rows with their history (historyFloor).
    let floor: HistoryFloor | null = null;
    if (mismatches.length === 0) {
      await sql.query('CHECKPOINT');
      await waitForQuiet(config.quietCores, config.quietWaitMs);
      floor = await historyFloor(sql, { table: importedTable, columns: importedColumns }, csv.path);
    }
    if (status.rowsImported !== file.rows)
      mismatches.push(`rowsImported ${status.rowsImported}, the file has ${file.rows} rows`);
    if (String(file.rows) !== baseline.rows) mismatches.push(`the baseline has ${baseline.rows} rows`);

    const importSeconds = importMs / 1000;
    const workerIdle = series.beforeMiB;
    return {
      format,
      repeat,
      rows: file.rows,
      fileBytes: file.bytes,
      upload: {
        seconds: uploaded.seconds,
        mibPerSecond: file.bytes / MiB / uploaded.seconds,
        uploadServiceRssGrowthMiB: uploadSeries.peakMiB - uploadSeries.beforeMiB,
      },
      import: {
        seconds: importSeconds,
        rowsPerSecond: status.rowsImported / importSeconds,
        rowsImported: status.rowsImported,
        rowsTotal: status.rowsTotal,
        polls,
        changes,
        phases: phasesOf(
          changes,
          importMs,
          series.samples.map((sample) => ({ ms: sample.ms - origin, mib: sample.mib })),
          workerIdle,
        ),
      },
      worker: {
        rssIdleMiB: workerIdle,
        rssPeakMiB: series.peakMiB,
        rssGrowthMiB: series.peakMiB - workerIdle,
        rssPeakAtSeconds: (series.peakAtMs - origin) / 1000,
        rssAfterMiB: rssAfter,
        samples: series.samples.length,
        maxGapMs: series.maxGapMs,
        cpu: workerCpu,
        log,
      },
      copy: {
        csvBytes: csv.bytes,
        seconds: copied.seconds,
        rowsPerSecond: copied.rows / copied.seconds,
        cpu: copyFigures,
      },
      floor,
      ratio: {
        import: importSeconds / copied.seconds,
        endToEnd: (uploaded.seconds + importSeconds) / copied.seconds,
        floor: floor ? floor.seconds / copied.seconds : Number.NaN,
        importToFloor: floor ? importSeconds / floor.seconds : Number.NaN,
      },
      check: { ok: mismatches.length === 0, mismatches, fieldTypes, imported, baseline },
      quiet,
    };
  } catch (error) {
    const output = worker?.output() ?? '';
    if (output) console.error(`--- import-worker output (last 3000 characters):\n${output.slice(-3000)}`);
    throw error;
  } finally {
    currentWorker = undefined;
    await worker?.stop();
    await sql.query(`DROP TABLE IF EXISTS ${quoteIdent(baselineTable)}`).catch(() => {});
    await sql.end();
    // Keeps the database small: the base's schema (the imported table) goes with it.
    await api.call('DELETE', `/bases/${base.id}`).catch(() => {});
  }
}
