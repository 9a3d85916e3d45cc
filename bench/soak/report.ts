import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prose, replaceReadmeSection } from '../lib/readme';
import type { HeapFigures } from './heap';
import type { AnswerFigures, ErrorSample, MinuteFigures } from './measure';
import type { PostgresFigures, QueryRoleBackends } from './postgres';

/**
 * The soak's figures, its verdicts against its targets (the other tenants' latency, with a hostile
 * tenant, within twice the quiet run's), and its README section.
 */

interface ImportCounts {
  started: number;
  succeeded: number;
  failed: number;
  unfinished: number;
}

/** The quiet run a hostile one is compared with (soak/results.json), as far as the comparison needs. */
export interface QuietReference {
  date: string;
  minutes: number;
  warmUpMinutes: number;
  ratePerSecond: number;
  seedRecords: number;
  /** Absent from runs before the load was dealt among keys. */
  tenants?: number;
  /** The highest p99 of its measured minutes. */
  worstP99Ms: number;
}

export interface HostileResults {
  listings: number;
  uploadBytes: number;
  answers: AnswerFigures;
  /** Its import bombs, each of which must end failed. */
  imports: ImportCounts;
  quiet: QuietReference | null;
}

export interface SoakResults {
  date: string;
  machine: string;
  postgres: PostgresFigures;
  minutes: number;
  warmUpMinutes: number;
  ratePerSecond: number;
  seedRecords: number;
  perMinute: MinuteFigures[];
  /** Each service's V8 heap when the warm-up ended and when the load did. */
  heap: { afterWarmUp: Record<string, HeapFigures>; atEnd: Record<string, HeapFigures> };
  operations: { name: string; requests: number; errors: number; p50Ms: number; p99Ms: number }[];
  events: { appended: number; delivered: number; drainSeconds: number };
  imports: ImportCounts;
  errorSamples: ErrorSample[];
  // Absent from runs before tenants had keys of their own: the root key did all the requests, no
  // quota was set.
  /** API keys the normal load was dealt among: the other tenants. */
  tenants?: number;
  storageQuotaBytes?: number;
  /** Each process (the gateway's too) at the load's start and at the end. */
  processes?: { name: string; pidAtStart: number; pidAtEnd: number; restarts: number; aliveAtEnd: boolean }[];
  /** Read-only SQL's backends at the end. */
  queryRoleBackends?: QueryRoleBackends;
  /** Set by a run with SOAK_HOSTILE=1. */
  hostile?: HostileResults;
}

export const RESULTS_PATH = join(__dirname, 'results.json');
export const HOSTILE_RESULTS_PATH = join(__dirname, 'results-hostile.json');

const worstMeasuredP99 = (results: SoakResults) =>
  Math.max(...results.perMinute.filter((minute) => !minute.warmUp).map((minute) => minute.p99Ms));

/** The last quiet full-length run's figures, which a hostile run's are compared with; null if none. */
export function quietReference(): QuietReference | null {
  if (!existsSync(RESULTS_PATH)) return null;
  const quiet = JSON.parse(readFileSync(RESULTS_PATH, 'utf8')) as SoakResults;
  return {
    date: quiet.date,
    minutes: quiet.minutes,
    warmUpMinutes: quiet.warmUpMinutes,
    ratePerSecond: quiet.ratePerSecond,
    seedRecords: quiet.seedRecords,
    ...(quiet.tenants === undefined ? {} : { tenants: quiet.tenants }),
    worstP99Ms: worstMeasuredP99(quiet),
  };
}

/** How the quiet run's settings differ from this run's, if they do: then the two do not compare. */
function settingsDiffer(results: SoakResults, quiet: QuietReference): string[] {
  const differ: string[] = [];
  const compare = (name: string, ours: unknown, theirs: unknown) => {
    if (ours !== theirs) differ.push(`${name} ${String(theirs ?? 'root key only')} there`);
  };
  compare('SOAK_MINUTES', results.minutes, quiet.minutes);
  compare('SOAK_WARMUP_MINUTES', results.warmUpMinutes, quiet.warmUpMinutes);
  compare('SOAK_RATE', results.ratePerSecond, quiet.ratePerSecond);
  compare('SOAK_SEED_RECORDS', results.seedRecords, quiet.seedRecords);
  compare('SOAK_TENANTS', results.tenants, quiet.tenants);
  return differ;
}

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '–');

export interface Verdict {
  target: string;
  measured: string;
  met: boolean;
}

export function verdicts(results: SoakResults): Verdict[] {
  const measured = results.perMinute.filter((minute) => !minute.warmUp);
  const first = measured[0];
  const last = measured.at(-1);
  const out: Verdict[] = [];
  if (first && last) {
    for (const name of Object.keys(first.rssMiB)) {
      const growth = (last.rssMiB[name]! - first.rssMiB[name]!) / first.rssMiB[name]!;
      out.push({
        target: `${name}: memory flat (RSS growth under 10%, last measured minute's median over the first's)`,
        measured: `${fixed(first.rssMiB[name]!)} → ${fixed(last.rssMiB[name]!)} MiB (${fixed(growth * 100)}%)`,
        met: growth < 0.1,
      });
    }
    const worst = Math.max(...measured.map((minute) => minute.p99Ms));
    out.push({
      target: "p99 of every measured minute within 2x of the first one's",
      measured: `first ${fixed(first.p99Ms)} ms, worst ${fixed(worst)} ms (${fixed(worst / first.p99Ms, 2)}x)`,
      met: worst <= 2 * first.p99Ms,
    });
  }
  const hostile = results.hostile;
  if (hostile && first) {
    const worst = worstMeasuredP99(results);
    if (!hostile.quiet) {
      out.push({
        target: "the other tenants' p99 within 2x of a quiet run's (worst measured minute)",
        measured: `worst ${fixed(worst)} ms; no quiet run in soak/results.json to compare with`,
        met: false,
      });
    } else {
      const differ = settingsDiffer(results, hostile.quiet);
      out.push({
        target: "the other tenants' p99 within 2x of a quiet run's (worst measured minute)",
        measured: `${fixed(worst)} ms against ${fixed(hostile.quiet.worstP99Ms)} ms in the quiet run of ${hostile.quiet.date} (${fixed(worst / hostile.quiet.worstP99Ms, 2)}x)${differ.length > 0 ? `; not comparable: ${differ.join(', ')}` : ''}`,
        met: differ.length === 0 && worst <= 2 * hostile.quiet.worstP99Ms,
      });
    }
  }
  const errors = results.perMinute.reduce((sum, minute) => sum + minute.errors, 0);
  out.push({ target: 'zero errors, warm-up included', measured: `${errors} errors`, met: errors === 0 });
  out.push({
    target: 'every event delivered',
    measured: `${results.events.delivered} of ${results.events.appended} (within ${results.events.drainSeconds} s of the load's end)`,
    met: results.events.delivered === results.events.appended,
  });
  out.push({
    target: 'every import finished',
    measured: `${results.imports.succeeded} succeeded, ${results.imports.failed} failed, ${results.imports.unfinished} unfinished of ${results.imports.started}`,
    met: results.imports.succeeded === results.imports.started,
  });
  if (results.processes) {
    const changed = results.processes.filter(
      (p) => p.pidAtEnd !== p.pidAtStart || p.restarts > 0 || !p.aliveAtEnd,
    );
    out.push({
      target: 'every process stayed up: the pid it started with, no restart',
      measured:
        changed.length === 0
          ? `${results.processes.length} of ${results.processes.length}`
          : changed
              .map(
                (p) =>
                  `${p.name} ${p.pidAtStart} → ${p.pidAtEnd}, ${p.restarts} restarts${p.aliveAtEnd ? '' : ', gone'}`,
              )
              .join('; '),
      met: changed.length === 0,
    });
  }
  if (results.queryRoleBackends) {
    const { running, idle } = results.queryRoleBackends;
    out.push({
      target:
        "no backend of a query role still running at the end (10 s or more after the last query's answer)",
      measured: `${running.length} running, ${idle} idle connections kept for the next queries`,
      met: running.length === 0,
    });
  }
  if (hostile) {
    out.push({
      target:
        'the hostile tenant got no 5xx, no dropped connection, no request left unanswered, no success it must not have',
      measured: `${hostile.answers.findings} such answers`,
      met: hostile.answers.findings === 0,
    });
    out.push({
      target: "every one of the hostile tenant's import bombs ended failed",
      measured: `${hostile.imports.failed} failed, ${hostile.imports.succeeded} succeeded, ${hostile.imports.unfinished} unfinished of ${hostile.imports.started}`,
      met: hostile.imports.failed === hostile.imports.started,
    });
  }
  return out;
}

/** A message in a table cell: one line, no column break. */
const cell = (text: string) => text.replace(/\s+/g, ' ').replaceAll('|', '\\|');

function renderHostile(hostile: HostileResults): string[] {
  const { answers } = hostile;
  const lines = [
    `Hostile tenant (not in the figures above): a base of its own, with keys limited to it, attacking in a loop through the whole load (${hostile.listings} slow listings at once, uploads of ${(hostile.uploadBytes / 1024).toLocaleString('en-US')} KiB). Its answers by attack, and what the first of each kind said:`,
    '',
    '| Attack | Answers | What they said |',
    '|---|---|---|',
    ...answers.attacks.map((attack) => {
      const counts = Object.entries(attack.answers)
        .map(([answer, count]) => `${answer} × ${count}`)
        .join(', ');
      const said = Object.entries(attack.examples)
        .map(
          ([answer, message]) => `${answer}: ${message.length > 160 ? `${message.slice(0, 160)}…` : message}`,
        )
        .join('<br>');
      return `| ${cell(attack.name)} | ${counts || 'none'} | ${cell(said)} |`;
    }),
    '',
    `Its import bombs: ${hostile.imports.failed} failed, ${hostile.imports.succeeded} succeeded, ${hostile.imports.unfinished} unfinished of ${hostile.imports.started} started.`,
  ];
  if (answers.findingSamples.length > 0) {
    lines.push(
      '',
      `Findings (${answers.findings}; the first ${answers.findingSamples.length}): a 5xx, no answer, or a success the attack must never get.`,
      '',
      ...answers.findingSamples.map(
        (f) =>
          `- at ${f.atSecond} s, ${f.attack}: \`${f.request}\` → ${f.answer}${f.message === f.answer ? '' : `: ${cell(f.message)}`}`,
      ),
    );
  }
  return lines;
}

export function renderReport(results: SoakResults): string {
  const names = Object.keys(results.perMinute[0]?.rssMiB ?? {});
  const lines = [
    `- Date: ${results.date}`,
    `- Machine: ${results.machine}`,
    `- PostgreSQL ${results.postgres.version}, autovacuum ${results.postgres.autovacuum}; the table ended the load with about ${results.postgres.liveRows.toLocaleString('en-US')} live rows and ${results.postgres.deadRows.toLocaleString('en-US')} dead ones`,
    `- Load: ${results.ratePerSecond} requests/s started on schedule (an open loop) for ${results.warmUpMinutes} minutes of warm-up then ${results.minutes} measured minutes, through the nginx gateway, on a table seeded with ${results.seedRecords.toLocaleString('en-US')} records${results.tenants === undefined ? '' : `, dealt among ${results.tenants} API keys`}${results.storageQuotaBytes === undefined ? '' : `; storage quota ${(results.storageQuotaBytes / 2 ** 20).toLocaleString('en-US')} MiB per database`}${results.hostile ? '; **a hostile tenant attacking throughout** (below)' : ''}`,
    '',
    `| Minute | Requests | Errors | p50 ms | p99 ms | ${names.map((name) => `${name} RSS MiB`).join(' | ')} |`,
    `|--:|--:|--:|--:|--:|${names.map(() => '--:').join('|')}|`,
    ...results.perMinute.map(
      (minute) =>
        `| ${minute.warmUp ? `warm-up ${minute.minute}` : minute.minute} | ${minute.requests} | ${minute.errors} | ${fixed(minute.p50Ms)} | ${fixed(minute.p99Ms)} | ${names.map((name) => fixed(minute.rssMiB[name]!)).join(' | ')} |`,
    ),
    '',
    'V8 heap of each service (from its `/metrics`), when the warm-up ended → when the load ended: the young generation is what V8 sizes to the allocation rate; old space in use is where anything kept would pile up.',
    '',
    '| Service | Young generation MiB | Old space in use MiB |',
    '|---|--:|--:|',
    ...names.map((name) => {
      const before = results.heap.afterWarmUp[name];
      const after = results.heap.atEnd[name];
      return `| ${name} | ${fixed(before?.youngMiB ?? Number.NaN)} → ${fixed(after?.youngMiB ?? Number.NaN)} | ${fixed(before?.oldUsedMiB ?? Number.NaN)} → ${fixed(after?.oldUsedMiB ?? Number.NaN)} |`;
    }),
    '',
    '| Operation | Requests | Errors | p50 ms | p99 ms |',
    '|---|--:|--:|--:|--:|',
    ...results.operations.map(
      (op) => `| ${op.name} | ${op.requests} | ${op.errors} | ${fixed(op.p50Ms)} | ${fixed(op.p99Ms)} |`,
    ),
    '',
    `Events: ${results.events.appended} record events appended, ${results.events.delivered} delivered and verified by the receiver.`,
    '',
    ...(results.processes
      ? [
          '| Process | pid at the start | pid at the end | Restarts |',
          '|---|--:|--:|--:|',
          ...results.processes.map(
            (p) =>
              `| ${p.name} | ${p.pidAtStart} | ${p.pidAtEnd}${p.aliveAtEnd ? '' : ' (gone)'} | ${p.restarts} |`,
          ),
          '',
        ]
      : []),
    ...(results.queryRoleBackends && results.queryRoleBackends.running.length > 0
      ? [
          'Backends of query roles still running at the end:',
          '',
          ...results.queryRoleBackends.running.map(
            (b) => `- pid ${b.pid} (${b.role}), ${b.state} for ${fixed(b.seconds)} s: \`${cell(b.query)}\``,
          ),
          '',
        ]
      : []),
    ...(results.hostile ? [...renderHostile(results.hostile), ''] : []),
    '| Target | Measured | Met |',
    '|---|---|---|',
    ...verdicts(results).map((v) => `| ${v.target} | ${v.measured} | ${v.met ? 'yes' : '**no**'} |`),
  ];
  if (results.errorSamples.length > 0) {
    lines.push('', 'First errors:', ...results.errorSamples.map((e) => `- ${e.operation}: ${e.message}`));
  }
  return lines.join('\n');
}

const readResults = (path: string): SoakResults | undefined =>
  existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as SoakResults) : undefined;

/** Writes the run's results.json (quiet or hostile) and the section with both runs' figures. */
export function writeResults(results: SoakResults): string {
  writeFileSync(
    results.hostile ? HOSTILE_RESULTS_PATH : RESULTS_PATH,
    `${JSON.stringify(results, null, 2)}\n`,
  );
  const quiet = readResults(RESULTS_PATH);
  const hostile = readResults(HOSTILE_RESULTS_PATH);
  return replaceReadmeSection(
    'soak',
    [
      `${prose(__dirname, 'intro.md')}\n`,
      ...(quiet ? [`### Results\n\n${renderReport(quiet)}\n`] : []),
      ...(hostile ? [`### Results with a hostile tenant\n\n${renderReport(hostile)}\n`] : []),
    ].join('\n'),
  );
}
