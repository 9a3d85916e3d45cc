import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { filesystemOf, gitSha, type Host, host, loadAverage, sourceFingerprint } from '../lib/machine';
import { writeSuiteSection } from '../lib/readme';
import { median } from '../lib/stats';
import type { CaseRun } from './case';
import type { Target, UploadsBenchConfig } from './config';

/** Figures of a run as markdown, kept in results.json and placed in bench/README.md. */

export interface Machine extends Host {
  loadAverage: string;
  /** The filesystem the scratch directory is on (all targets write there). */
  filesystem: string;
  gitSha: string;
  source: string;
}

export interface UploadsResults {
  config: UploadsBenchConfig;
  machine: Machine;
  startedAt: string;
  databaseSeconds: number;
  /** What the upload-service answered for a file one byte over MAX_ATTACHMENT_BYTES. */
  limitProbe: { bytes: number; status: number };
  runs: CaseRun[];
}

const SOURCE_DIRS = [
  'apps/upload-service/src',
  'packages/contracts/src',
  'packages/server-kit/src',
  'packages/storage/src',
];
export function machineInfo(tmpRoot: string): Machine {
  return {
    ...host(),
    loadAverage: loadAverage(),
    filesystem: filesystemOf(tmpRoot),
    gitSha: gitSha(SOURCE_DIRS),
    source: sourceFingerprint(SOURCE_DIRS),
  };
}

/** The process whose memory each target's row reports: the one receiving the bytes. */
export const RECEIVER: Record<Target, string | null> = {
  cp: null,
  stream: 'stream server',
  local: 'upload-service',
  s3: 'upload-service',
  s3rver: 's3rver',
};

const TITLES: Record<Target, string> = {
  cp: '`cp` + `sync` (ceiling)',
  stream: 'raw HTTP stream (ceiling)',
  local: '**upload-service, local disk**',
  s3: '**upload-service, S3 (s3rver)**',
  s3rver: 's3rver PUT, direct (ceiling of S3)',
};

export interface Summary {
  target: Target;
  concurrency: number;
  rounds: number;
  mibPerSecond: number;
  roundsMibPerSecond: number[];
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** Median over rounds, per watched process. */
  processes: Record<
    string,
    { rssBeforeMiB: number; rssGrowthMiB: number; rssPeakMiB: number; cpuMsPerMiB: number }
  >;
  machineBusyCores: number;
  otherCores: number;
  maxGapMs: number;
}

export function summarize(runs: CaseRun[]): Summary[] {
  const groups = new Map<string, CaseRun[]>();
  for (const run of runs) {
    const key = `${run.target}:${run.concurrency}`;
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  return [...groups.values()].map((group) => {
    const first = group[0]!;
    const processes: Summary['processes'] = {};
    for (const role of Object.keys(first.window.processes)) {
      const of = (pick: (run: CaseRun) => number) => median(group.map(pick));
      processes[role] = {
        rssBeforeMiB: of((run) => run.window.processes[role]!.rssBeforeMiB),
        rssGrowthMiB: of((run) => run.window.processes[role]!.rssGrowthMiB),
        rssPeakMiB: of((run) => run.window.processes[role]!.rssPeakMiB),
        cpuMsPerMiB: of(
          (run) => (run.window.processes[role]!.cpuSeconds * 1000) / (run.mibPerSecond * run.load.seconds),
        ),
      };
    }
    return {
      target: first.target,
      concurrency: first.concurrency,
      rounds: group.length,
      mibPerSecond: median(group.map((run) => run.mibPerSecond)),
      roundsMibPerSecond: group.map((run) => run.mibPerSecond),
      p50Ms: median(group.map((run) => run.load.p50Ms)),
      p99Ms: median(group.map((run) => run.load.p99Ms)),
      errors: group.reduce((sum, run) => sum + run.load.errors, 0),
      processes,
      machineBusyCores: median(group.map((run) => run.window.machineBusyCores)),
      otherCores: median(group.map((run) => run.window.otherCores)),
      maxGapMs: Math.max(...group.map((run) => run.window.maxGapMs)),
    };
  });
}

const num = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const ms = (value: number) => (value >= 100 ? Math.round(value).toLocaleString('en-US') : num(value));
const ratio = (value: number, ceiling: number | undefined) =>
  ceiling === undefined ? 'n/a' : num(value / ceiling, 2);

function throughputTable(summaries: Summary[]): string {
  const find = (target: Target, concurrency: number) =>
    summaries.find((s) => s.target === target && s.concurrency === concurrency)?.mibPerSecond;
  const lines = [
    '| Target | Conc. | **MiB/s** | MiB/s per round | p50 s per upload | p99 s | ÷ `cp` | ÷ raw stream | ÷ s3rver direct | Errors |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const s of summaries) {
    const service = s.target === 'local' || s.target === 's3';
    lines.push(
      `| ${TITLES[s.target]} | ${s.concurrency} | **${num(s.mibPerSecond)}** | ${s.roundsMibPerSecond.map((v) => num(v)).join(', ')} | ${num(s.p50Ms / 1000, 2)} | ${num(s.p99Ms / 1000, 2)} | ${service ? ratio(s.mibPerSecond, find('cp', s.concurrency)) : ''} | ${service ? ratio(s.mibPerSecond, find('stream', s.concurrency)) : ''} | ${s.target === 's3' ? ratio(s.mibPerSecond, find('s3rver', s.concurrency)) : ''} | ${s.errors} |`,
    );
  }
  return lines.join('\n');
}

function memoryTable(summaries: Summary[]): string {
  const lines = [
    '| Target | Conc. | Process | RSS before MiB | Peak RSS MiB | **Peak RSS growth MiB** | CPU ms per MiB | s3rver RSS growth MiB | s3rver CPU ms per MiB | Machine busy (cores) | Other load (cores) | Longest sampling gap ms |',
    '|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const s of summaries) {
    const role = RECEIVER[s.target];
    const p = role ? s.processes[role] : undefined;
    const helper = s.target === 's3' ? s.processes.s3rver : undefined;
    lines.push(
      `| ${TITLES[s.target]} | ${s.concurrency} | ${role ?? '(cp, sync)'} | ${p ? num(p.rssBeforeMiB) : ''} | ${p ? num(p.rssPeakMiB) : ''} | ${p ? `**${num(p.rssGrowthMiB)}**` : ''} | ${p ? num(p.cpuMsPerMiB) : ''} | ${helper ? num(helper.rssGrowthMiB) : ''} | ${helper ? num(helper.cpuMsPerMiB) : ''} | ${num(s.machineBusyCores, 2)} | ${num(s.otherCores, 2)} | ${ms(s.maxGapMs)} |`,
    );
  }
  return lines.join('\n');
}

const TARGET_RSS_MIB = 40;

function targetsTable(summaries: Summary[]): string {
  const lines = ['| Target | Measured | Met |', '|---|---|---|'];
  for (const s of summaries) {
    if ((s.target !== 'local' && s.target !== 's3') || s.concurrency !== 8) continue;
    const growth = s.processes['upload-service']!.rssGrowthMiB;
    lines.push(
      `| ${s.target === 'local' ? 'local disk' : 'S3'} at concurrency 8: upload-service peak RSS growth < ${TARGET_RSS_MIB} MB (MiB) | ${num(growth)} MiB | ${growth < TARGET_RSS_MIB ? 'yes' : '**no**'} |`,
    );
  }
  return lines.join('\n');
}

export function renderReport(results: UploadsResults): string {
  const { config, machine } = results;
  const summaries = summarize(results.runs);
  return [
    `- Date: ${results.startedAt}`,
    `- Machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB memory, ${machine.os}; load average at start ${machine.loadAverage}`,
    `- Node.js ${machine.node}; git ${machine.gitSha}`,
    `- Code measured: ${machine.source}`,
    `- Disk: ${machine.filesystem}; every target writes there`,
    `- File: ${config.fileBytes.toLocaleString('en-US')} bytes (${num(config.fileBytes / 2 ** 20, 3)} MiB, PNG header + random bytes); ${config.uploadsPerCase} measured uploads per case after ${config.warmupUploads} warm-up upload(s); ${config.repeats} round(s), medians shown; RSS sampled every ${config.rssIntervalMs} ms`,
    `- Limit: the file measured is the largest accepted (the contract's 20 MB = 20 MiB, inclusive); one byte more (${results.limitProbe.bytes.toLocaleString('en-US')} bytes) was answered ${results.limitProbe.status}`,
    '',
    '#### Throughput (MiB/s = 2^20 bytes of file per second, first request to last answer)',
    '',
    throughputTable(summaries),
    '',
    '#### Memory and CPU of the receiving process (median over rounds)',
    '',
    memoryTable(summaries),
    '',
    '#### Targets',
    '',
    targetsTable(summaries),
  ].join('\n');
}

export const RESULTS_PATH = join(__dirname, 'results.json');

export function saveResults(results: UploadsResults): void {
  writeFileSync(RESULTS_PATH, `${JSON.stringify(results, null, 2)}\n`);
}

export function loadResults(): UploadsResults {
  return JSON.parse(readFileSync(RESULTS_PATH, 'utf8')) as UploadsResults;
}

/** Replaces (or appends) the "## uploads" section of bench/README.md; the rest stays as it is. */
export function writeReadmeSection(results: UploadsResults): string {
  return writeSuiteSection('uploads', __dirname, renderReport(results));
}
