import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { replaceReadmeSection } from '../lib/readme';
import type { HeapFigures } from './heap';
import type { AnswerFigures, ErrorSample, MinuteFigures } from './measure';
import type { PostgresFigures, QueryRoleBackends } from './postgres';

/**
 * The soak's figures, its verdicts against issue 16's targets (and issue 25's with a hostile
 * tenant), and its README section.
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
  // Absent from runs before issue 25's: the root key did all the requests, no quota was set.
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

const SECTION_INTRO = `## soak

\`npm run bench:soak\` (\`bench/soak\`): the whole stack as \`npm start\` runs it with nginx, driven through the gateway at a steady rate by a mixed workload (lists with a filter and a sort, aggregates, bulk creates, upserts, single updates, read-only SQL, attachment uploads, CSV imports into the table, and bulk deletes of the oldest records, as many as the rest adds, so the table stays near its seeded size and every minute does the same work) through \`@recordbase/client\`, dealt among the keys of the other tenants (below; retries off, so every 429/503 counts as an error), with a webhook receiving every record event. Per minute: requests, errors, p50/p99 and each service's median RSS; at the end, every record event appended must have been delivered. The same load runs for a warm-up first, whose minutes count for errors and events but not for the memory and p99 targets: in its first minutes of load V8 grows each heap's young generation to the allocation rate it meets (the webhook dispatcher's from 8 to 32 MiB, which a soak without warm-up reported as 18% RSS growth from minute 1 to 3 and none after) and compiles the hot paths. The young generation and the old space in use are shown per service, so growth that is not warm-up shows there. The PostgreSQL server is \`TEST_DATABASE_URL\`'s (the machine's own by default). Its autovacuum matters: this machine's shared server has it off (a CI setting), and there every update and delete leaves a dead row that each later list, aggregate and SQL scan reads again, so their latency creeps up through the run (p50 7.1 → 10.3 ms over ten minutes, with 78,000 dead rows beside 11,000 live after six); the figures below are from a cluster with PostgreSQL's stock settings (autovacuum on, as in production; \`max_connections\` raised to 200), where the median stays between 6.0 and 7.2 ms: \`initdb\`, \`pg_ctl start -o "-p 5433 -c max_connections=200"\`, then \`TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5433/postgres npm run bench:soak\`. Settings: \`SOAK_MINUTES\` (10, measured), \`SOAK_WARMUP_MINUTES\` (2), \`SOAK_RATE\` (40 requests/s), \`SOAK_SEED_RECORDS\` (10,000), \`SOAK_DRAIN_SECONDS\` (120), \`SOAK_TENANTS\` (8), \`SOAK_STORAGE_QUOTA_MIB\` (64), and for the hostile tenant \`SOAK_HOSTILE\` (off; 1 turns it on), \`SOAK_HOSTILE_LISTINGS\` (24), \`SOAK_HOSTILE_UPLOAD_KIB\` (1,024). Only a run of 10 minutes or more writes this section: a quiet one \`soak/results.json\` and its Results, a hostile one \`soak/results-hostile.json\` and its Results with a hostile tenant, each keeping the other's.

The stack runs with the services' own bounds (their defaults): per key 50 requests/s (burst 100), 8 MiB of uploads a second (64 MiB at once), 16 requests in flight, 2 database connections of a process (1 once it has spent half its database time) and 15 s of database time a minute, 10 s of the import worker's; 8 read-only SQL queries in flight per base and per key; and a storage quota per database of \`SOAK_STORAGE_QUOTA_MIB\` (\`STORAGE_QUOTA_BYTES_PER_DATABASE\`), in the quiet run as in the hostile one, so that both measure the same stack. The normal load is dealt round robin among \`SOAK_TENANTS\` keys of its base, the other tenants: each stays well within its bounds (5 requests/s at the default rate), where one key for all of them meets its 16 requests in flight as soon as latency rises (a 1-minute run on a busy machine did, with 174 errors). Each process, the gateway's included, runs under \`npm start\`'s supervisor, which starts one that dies again: every run reports each one's pid at the start and at the end and its restarts, which must be unchanged and none, and the backends of read-only SQL's roles still running 10 s after the last query was answered, of which there must be none. A run that misses a target leaves each process's last output in a temporary directory it names.

\`SOAK_HOSTILE=1\` adds a hostile tenant (issue 25), in a process of its own so that its work takes no turn of the load generator's event loop: a base of its own with a table of 400 records of two 45,000-character texts, a key of every scope limited to that base, and a second key with only \`webhooks:manage\` and \`schema:read\`. From the load's first request to its last it runs, each in a loop: the SQL attacks (a \`DO\` block trapping the cancel in a loop, \`SELECT repeat('x', 600000000)\`, the same cast to \`int\`, \`SELECT pg_sleep(60)\`, a cross join of 10^10 rows); \`SOAK_HOSTILE_LISTINGS\` slow listings at once (more than the key's 16 in flight; a \`contains\` filter over the long texts, sorted by one); a \`records/list\` of the long texts with \`limit: 2000\` (past the 32 MB page); two loops of attachment uploads of \`SOAK_HOSTILE_UPLOAD_KIB\` to its base, until the quota answers 413; xlsx import bombs, one at a time (3,000,000 empty shared strings; one 100,000-character shared string in 4,000 cells); and once a second, retargeting its own record webhook, whose delivery to an address nobody answers stays open, to its own address with the second key, and the other tenants' webhook with the first. A loop told 429 waits its Retry-After (10 ms to 2 s), as a tenant pushing at its bounds would; a flood of requests refused at once is the network's matter, not this soak's. Its answers are counted by attack and status, never in the other tenants' figures: 400, 403, 404, 413 and 429 are the refusals the fixes promise; a 5xx, a dropped connection, no answer within 30 s, or a success an attack must never get (its webhook retargeted, say) is a finding, printed at once with the exact request. Each of its bombs must end \`failed\`. The other tenants must lose nothing (zero errors, every event delivered, every import succeeded), and their worst measured minute's p99 must stay within 2x of the quiet run's in \`soak/results.json\`, compared only when the two runs' settings are the same.

The comparison is two full runs on the same quiet machine and cluster with the same settings, the quiet one first, since the hostile one reads its figures: \`TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5433/postgres npm run bench:soak\`, then \`TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5433/postgres SOAK_HOSTILE=1 npm run bench:soak\`. A shorter run checks that it works and writes nothing: \`SOAK_MINUTES=1 SOAK_WARMUP_MINUTES=0 SOAK_HOSTILE=1 npm run bench:soak\`.
`;

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
      SECTION_INTRO,
      ...(quiet ? [`### Results\n\n${renderReport(quiet)}\n`] : []),
      ...(hostile ? [`### Results with a hostile tenant\n\n${renderReport(hostile)}\n`] : []),
    ].join('\n'),
  );
}
