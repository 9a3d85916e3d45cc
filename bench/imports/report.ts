import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { filesystemOf, gitSha, type Host, host, loadAverage, sourceFingerprint } from '../lib/machine';
import { writeSuiteSection } from '../lib/readme';
import { median } from '../lib/stats';
import { connect } from './baseline';
import type { Format, ImportsBenchConfig } from './config';
import type { DataFile } from './dataset';
import type { Phase, RoundResult } from './round';

/** Figures of a run as markdown, kept in results.json and placed in bench/README.md. */

export interface Machine extends Host {
  postgres: string;
  /** The PostgreSQL settings that bear on bulk loads. */
  postgresSettings: Record<string, string>;
  loadAverage: string;
  /** The filesystem the files and the stored uploads are on. */
  filesystem: string;
  gitSha: string;
  source: string;
}

export interface ImportsResults {
  config: ImportsBenchConfig;
  machine: Machine;
  startedAt: string;
  databaseSeconds: number;
  /** The files imported and the CSVs COPY read, by format. */
  files: Record<string, { file: DataFile; csv: DataFile }>;
  rounds: RoundResult[];
}

const SOURCE_DIRS = [
  'apps/import-worker/src',
  'apps/upload-service/src',
  'packages/db/src/field-types',
  'packages/db/src/physical',
];
const MiB = 1024 * 1024;

const POSTGRES_SETTINGS = [
  'shared_buffers',
  'max_wal_size',
  'wal_level',
  'synchronous_commit',
  'fsync',
  'work_mem',
  'maintenance_work_mem',
];

export async function machineInfo(databaseUrl: string, dir: string): Promise<Machine> {
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = await connect(admin.toString(), 'bench-imports-admin');
  let postgres = 'unknown';
  const postgresSettings: Record<string, string> = {};
  try {
    postgres = (await client.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? postgres;
    const { rows } = await client.query<{ name: string; setting: string }>(
      `SELECT name, current_setting(name) AS setting FROM pg_settings WHERE name = ANY($1) ORDER BY name`,
      [POSTGRES_SETTINGS],
    );
    for (const row of rows) postgresSettings[row.name] = row.setting;
  } finally {
    await client.end();
  }
  return {
    ...host(),
    postgres: postgres.split(' on ')[0] ?? postgres,
    postgresSettings,
    loadAverage: loadAverage(),
    filesystem: filesystemOf(dir),
    gitSha: gitSha(SOURCE_DIRS),
    source: sourceFingerprint(SOURCE_DIRS),
  };
}

export interface Summary {
  format: Format;
  rounds: number;
  rows: number;
  fileBytes: number;
  csvBytes: number;
  uploadSeconds: number;
  importSeconds: number;
  totalSeconds: number;
  rowsPerSecond: number;
  roundsRowsPerSecond: number[];
  copySeconds: number;
  copyRowsPerSecond: number;
  /** Medians of the rounds' own ratios (each round's import against its own COPY). */
  ratio: number;
  roundsRatio: number[];
  ratioEndToEnd: number;
  /** Medians of the rounds' history floors (historyFloor), and of floor / COPY and import / floor. */
  floorSeconds: number;
  floorCopySeconds: number;
  floorIndexSeconds: number;
  floorRevisionSeconds: number;
  floorRatio: number;
  importToFloor: number;
  rssIdleMiB: number;
  rssGrowthMiB: number;
  rssGrowthMaxMiB: number;
  roundsRssGrowthMiB: number[];
  rssAfterMiB: number;
  rssPeakAtSeconds: number;
  uploadRssGrowthMiB: number;
  workerCpuSeconds: number;
  postgresCpuSeconds: number;
  postgresSharedCpuSeconds: number;
  copyPostgresCpuSeconds: number;
  otherCores: number;
  copyOtherCores: number;
  maxGapMs: number;
  phases: Phase[];
  checks: { ok: number; failed: string[] };
}

export function summarize(rounds: RoundResult[]): Summary[] {
  const formats = [...new Set(rounds.map((round) => round.format))];
  return formats.map((format) => {
    const group = rounds.filter((round) => round.format === format);
    const of = (pick: (round: RoundResult) => number) => median(group.map(pick));
    const first = group[0]!;
    const phaseNames = first.import.phases.map((phase) => phase.name);
    return {
      format,
      rounds: group.length,
      rows: first.rows,
      fileBytes: first.fileBytes,
      csvBytes: first.copy.csvBytes,
      uploadSeconds: of((r) => r.upload.seconds),
      importSeconds: of((r) => r.import.seconds),
      totalSeconds: of((r) => r.upload.seconds + r.import.seconds),
      rowsPerSecond: of((r) => r.import.rowsPerSecond),
      roundsRowsPerSecond: group.map((r) => r.import.rowsPerSecond),
      copySeconds: of((r) => r.copy.seconds),
      copyRowsPerSecond: of((r) => r.copy.rowsPerSecond),
      ratio: of((r) => r.ratio.import),
      roundsRatio: group.map((r) => r.ratio.import),
      ratioEndToEnd: of((r) => r.ratio.endToEnd),
      floorSeconds: of((r) => r.floor?.seconds ?? Number.NaN),
      floorCopySeconds: of((r) => r.floor?.copySeconds ?? Number.NaN),
      floorIndexSeconds: of((r) => r.floor?.indexSeconds ?? Number.NaN),
      floorRevisionSeconds: of((r) => r.floor?.revisionSeconds ?? Number.NaN),
      floorRatio: of((r) => r.ratio.floor ?? Number.NaN),
      importToFloor: of((r) => r.ratio.importToFloor ?? Number.NaN),
      rssIdleMiB: of((r) => r.worker.rssIdleMiB),
      rssGrowthMiB: of((r) => r.worker.rssGrowthMiB),
      rssGrowthMaxMiB: Math.max(...group.map((r) => r.worker.rssGrowthMiB)),
      roundsRssGrowthMiB: group.map((r) => r.worker.rssGrowthMiB),
      rssAfterMiB: of((r) => r.worker.rssAfterMiB),
      rssPeakAtSeconds: of((r) => r.worker.rssPeakAtSeconds),
      uploadRssGrowthMiB: of((r) => r.upload.uploadServiceRssGrowthMiB),
      workerCpuSeconds: of((r) => r.worker.cpu.cpuSeconds.worker),
      postgresCpuSeconds: of((r) => r.worker.cpu.cpuSeconds.postgres),
      postgresSharedCpuSeconds: of((r) => r.worker.cpu.cpuSeconds.postgresShared),
      copyPostgresCpuSeconds: of((r) => r.copy.cpu.cpuSeconds.postgres),
      otherCores: of((r) => r.worker.cpu.otherCores),
      copyOtherCores: of((r) => r.copy.cpu.otherCores),
      maxGapMs: Math.max(...group.map((r) => r.worker.maxGapMs)),
      phases: phaseNames.map((name) => {
        const phases = group
          .map((r) => r.import.phases.find((phase) => phase.name === name)!)
          .filter(Boolean);
        return {
          name,
          seconds: median(phases.map((p) => p.seconds)),
          workerCpuSeconds: median(phases.map((p) => p.workerCpuSeconds)),
          postgresCpuSeconds: median(phases.map((p) => p.postgresCpuSeconds)),
          rssGrowthMiB: median(phases.map((p) => p.rssGrowthMiB)),
        };
      }),
      checks: {
        ok: group.filter((r) => r.check.ok).length,
        failed: group.flatMap((r) => r.check.mismatches.map((m) => `${r.format} round ${r.repeat}: ${m}`)),
      },
    };
  });
}

const num = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const int = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB (${(bytes / MiB).toFixed(1)} MiB)`;
const TITLE: Record<Format, string> = { csv: '**CSV**', xlsx: '**XLSX**' };

function throughputTable(summaries: Summary[]): string {
  const lines = [
    '| File | Rows | Size | Upload s | **Import s** | Upload + import s | **Rows/s** | Rows/s per round | COPY s | COPY rows/s | **Import ÷ COPY** | per round | (Upload + import) ÷ COPY |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const s of summaries) {
    lines.push(
      `| ${TITLE[s.format]} | ${int(s.rows)} | ${mb(s.fileBytes)} | ${num(s.uploadSeconds, 2)} | **${num(s.importSeconds, 2)}** | ${num(s.totalSeconds, 2)} | **${int(s.rowsPerSecond)}** | ${s.roundsRowsPerSecond.map(int).join(', ')} | ${num(s.copySeconds, 2)} | ${int(s.copyRowsPerSecond)} | **${num(s.ratio, 2)}** | ${s.roundsRatio.map((v) => num(v, 2)).join(', ')} | ${num(s.ratioEndToEnd, 2)} |`,
    );
  }
  return lines.join('\n');
}

function memoryTable(summaries: Summary[]): string {
  const lines = [
    '| File | Worker idle RSS MiB | **Peak RSS growth MiB** (median) | per round | RSS after MiB | Peak at s | upload-service RSS growth MiB (upload) | Worker CPU s | PostgreSQL backends CPU s | PostgreSQL shared processes CPU s | COPY: backend CPU s | Other load (cores), import / COPY | Longest sampling gap ms |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const s of summaries) {
    lines.push(
      `| ${TITLE[s.format]} | ${num(s.rssIdleMiB)} | **${num(s.rssGrowthMiB)}** | ${s.roundsRssGrowthMiB.map((v) => num(v)).join(', ')} | ${num(s.rssAfterMiB)} | ${num(s.rssPeakAtSeconds)} | ${num(s.uploadRssGrowthMiB)} | ${num(s.workerCpuSeconds)} | ${num(s.postgresCpuSeconds)} | ${num(s.postgresSharedCpuSeconds)} | ${num(s.copyPostgresCpuSeconds)} | ${num(s.otherCores, 2)} / ${num(s.copyOtherCores, 2)} | ${int(s.maxGapMs)} |`,
    );
  }
  return lines.join('\n');
}

function phaseTable(summaries: Summary[]): string {
  const lines = [
    '| File | Phase | s | Share of the import | Worker CPU s | PostgreSQL backends CPU s | Worker peak RSS growth in the phase MiB |',
    '|---|---|--:|--:|--:|--:|--:|',
  ];
  for (const s of summaries) {
    for (const phase of s.phases) {
      lines.push(
        `| ${TITLE[s.format]} | ${phase.name} | ${num(phase.seconds, 2)} | ${num((phase.seconds / s.importSeconds) * 100, 0)}% | ${num(phase.workerCpuSeconds)} | ${num(phase.postgresCpuSeconds)} | ${num(phase.rssGrowthMiB)} |`,
      );
    }
  }
  return lines.join('\n');
}

function floorTable(summaries: Summary[]): string {
  const lines = [
    '| File | COPY into the table s | its 3 indexes s | a revision per record s | **Floor s** | **Floor ÷ COPY** | Import s | **Import ÷ floor** |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const s of summaries) {
    lines.push(
      `| ${TITLE[s.format]} | ${num(s.floorCopySeconds, 2)} | ${num(s.floorIndexSeconds, 2)} | ${num(s.floorRevisionSeconds, 2)} | **${num(s.floorSeconds, 2)}** | **${num(s.floorRatio, 2)}** | ${num(s.importSeconds, 2)} | **${num(s.importToFloor, 2)}** |`,
    );
  }
  return lines.join('\n');
}

export const TARGET_RATIO = 3;
export const TARGET_RSS_MIB = 150;

function targetsTable(summaries: Summary[]): string {
  const lines = ['| Target | File | Measured | Met |', '|---|---|---|---|'];
  for (const s of summaries) {
    const base = s.format === 'xlsx' ? 'COPY of the same rows as CSV' : 'COPY of the same file';
    lines.push(
      `| import within ${TARGET_RATIO}x of PostgreSQL's COPY (median of the rounds' ratios) | ${s.format.toUpperCase()} (vs ${base}) | ${num(s.ratio, 2)}x | ${s.ratio <= TARGET_RATIO ? 'yes' : '**no**'} |`,
    );
  }
  for (const s of summaries) {
    lines.push(
      `| import worker peak RSS growth < ${TARGET_RSS_MIB} MB (MiB; the worst round) | ${s.format.toUpperCase()} | ${num(s.rssGrowthMaxMiB)} MiB (median ${num(s.rssGrowthMiB)}) | ${s.rssGrowthMaxMiB < TARGET_RSS_MIB ? 'yes' : '**no**'} |`,
    );
  }
  return lines.join('\n');
}

function checksLine(summaries: Summary[], results: ImportsResults): string {
  const failed = summaries.flatMap((s) => s.checks.failed);
  const total = results.rounds.length;
  const ok = summaries.reduce((sum, s) => sum + s.checks.ok, 0);
  const types = results.rounds[0]
    ? Object.entries(results.rounds[0].check.fieldTypes)
        .map(([name, type]) => `${name} ${type}`)
        .join(', ')
    : '';
  return failed.length === 0
    ? `- Correctness: ${ok} of ${total} imported tables equal their round's COPY table in row count and, per column, values present and their sum (quantities, prices in cents, days, epoch seconds, text lengths, true count, notes with a line break or a quote); fields inferred: ${types}`
    : `- Correctness: **${failed.length} mismatch(es)**: ${failed.slice(0, 10).join('; ')}`;
}

export function renderReport(results: ImportsResults): string {
  const { config, machine } = results;
  const summaries = summarize(results.rounds);
  const fileLines = Object.entries(results.files).map(([format, { file, csv }]) =>
    format === 'csv'
      ? `- CSV: ${int(file.rows)} rows + header, ${mb(file.bytes)}, seed ${file.seed}; COPY reads the same file`
      : `- XLSX: ${int(file.rows)} rows + header, ${mb(file.bytes)} (one sheet, shared strings, typed cells: numbers, booleans, dates), seed ${file.seed}; COPY reads the same rows as a CSV of ${mb(csv.bytes)} (the XLSX has more rows than the CSV for the same size: its figures compare with that COPY, not the CSV's)`,
  );
  return [
    `- Date: ${results.startedAt}`,
    `- Machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB memory, ${machine.os}; load average at start ${machine.loadAverage}`,
    `- Node.js ${machine.node}; ${machine.postgres} (${Object.entries(machine.postgresSettings)
      .map(([name, value]) => `${name} ${value}`)
      .join(', ')}); git ${machine.gitSha}`,
    `- Code measured: ${machine.source}`,
    `- Disk: ${machine.filesystem}`,
    ...fileLines,
    `- ${config.repeats} round(s) per format, medians shown; each round: a new base, a fresh import worker, RSS sampled every ${config.rssIntervalMs} ms, the status polled every ${config.pollMs} ms, a CHECKPOINT before the import and before the COPY`,
    checksLine(summaries, results),
    '',
    '#### Throughput (import: `POST …/imports` until a poll answers `succeeded`; COPY: the statement sent until it completes)',
    '',
    throughputTable(summaries),
    '',
    '#### Memory and CPU of the import (median over rounds)',
    '',
    memoryTable(summaries),
    '',
    '#### Where the import time goes (median over rounds; from the status transitions)',
    '',
    phaseTable(summaries),
    '',
    "#### PostgreSQL's floor for an import that keeps history (median over rounds; `historyFloor` in imports/baseline.ts: the CSV COPYed straight into a table of the imported table's columns, its indexes built, a record_revisions row per record, in a transaction rolled back)",
    '',
    floorTable(summaries),
    '',
    '#### Targets',
    '',
    targetsTable(summaries),
  ].join('\n');
}

export const RESULTS_PATH = join(__dirname, 'results.json');

export function saveResults(results: ImportsResults): void {
  writeFileSync(RESULTS_PATH, `${JSON.stringify(results, null, 2)}\n`);
}

export function loadResults(): ImportsResults {
  return JSON.parse(readFileSync(RESULTS_PATH, 'utf8')) as ImportsResults;
}

/** Replaces (or appends) the "## imports" section of bench/README.md; the rest stays as it is. */
export function writeReadmeSection(results: ImportsResults): string {
  return writeSuiteSection('imports', __dirname, renderReport(results));
}
