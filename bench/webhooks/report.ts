import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Percentiles } from './analyze';
import type { CaseResult } from './case';
import type { WebhooksBenchConfig } from './config';
import { CPU_GROUPS } from './cpu';
import { STAGES } from './stages';

/** Figures of a run as markdown, kept in results.json and placed in bench/README.md. */

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
  postgres: string;
  redis: string;
  loadAverage: string;
  source: string;
}

export interface WebhooksResults {
  config: WebhooksBenchConfig;
  machine: Machine;
  startedAt: string;
  cases: CaseResult[];
}

const SOURCE_DIRS = [
  'apps/records-api/src',
  'apps/webhook-dispatcher/src',
  'packages/contracts/src',
  'packages/db/src',
  'packages/db/migrations',
  'packages/server-kit/src',
];

/** sha256 over the services' sources (by default the webhook path's), and when the newest of them changed. */
export function sourceFingerprint(dirs: readonly string[] = SOURCE_DIRS): string {
  const root = join(__dirname, '..', '..');
  const hash = createHash('sha256');
  let newest = 0;
  for (const dir of dirs) {
    const files = readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && !entry.parentPath.includes('generated'))
      .map((entry) => join(entry.parentPath, entry.name))
      .sort();
    for (const file of files) {
      hash.update(file.slice(root.length)).update(readFileSync(file));
      newest = Math.max(newest, statSync(file).mtimeMs);
    }
  }
  return `sha256 ${hash.digest('hex').slice(0, 12)} of ${dirs.join(', ')} (newest file changed ${new Date(newest).toISOString()})`;
}

export async function machineInfo(databaseUrl: string, source: string): Promise<Machine> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  let postgres = 'unknown';
  try {
    postgres = (await client.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? postgres;
  } finally {
    await client.end();
  }
  let redis = 'unknown';
  try {
    const info = execFileSync('redis-cli', ['info', 'server'], { encoding: 'utf8' });
    redis = /redis_version:(\S+)/.exec(info)?.[1] ?? redis;
  } catch {
    // no redis-cli
  }
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    postgres,
    redis,
    loadAverage: os
      .loadavg()
      .map((value) => value.toFixed(2))
      .join(', '),
    source,
  };
}

const int = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');
const ms = (value: number) =>
  value === Number.POSITIVE_INFINITY
    ? 'undelivered'
    : Number.isNaN(value)
      ? 'n/a'
      : value >= 100
        ? int(value)
        : value.toFixed(1);
const withUnit = (value: number) => (Number.isFinite(value) ? `${ms(value)} ms` : ms(value));
const pair = (p: Percentiles) => `${ms(p.p50)} / ${ms(p.p99)}`;
const cores = (value: number) => value.toFixed(2);

export function caseTitle(result: CaseResult): string {
  const { spec, load } = result;
  const hooks =
    spec.webhooks === 0 ? 'no webhook' : `${spec.webhooks} webhook${spec.webhooks > 1 ? 's' : ''}`;
  if (spec.kind === 'steady') return `${hooks}, steady ${spec.rate} events/s`;
  return `${hooks}, burst of ${int(load.events ?? 0)} events (bulk of ${load.recordsPerRequest}, ${load.concurrency} writers)`;
}

function deliveriesTable(cases: CaseResult[]): string {
  const lines = [
    '| Case | Demand deliveries/s | Events/s written | API p50 / p99 ms | **Deliveries/s** | **Commit → receipt p50 / p99 ms** | API answer → receipt p50 / p99 ms | Received / expected | Missing | Duplicates | Bad signatures | Tail s |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of cases) {
    const f = r.figures;
    const demand = r.spec.kind === 'steady' ? int(r.spec.rate * r.spec.webhooks) : 'max';
    const written = `${int(f.eventsPerSecond)}${f.writeErrors ? ` (${f.writeErrors} errors)` : ''}${f.skipped ? ` (${f.skipped} skipped)` : ''}`;
    const rate =
      r.spec.kind === 'burst'
        ? `${int(f.deliveriesPerSecond)} (overall ${int(f.deliveriesPerSecondOverall)})`
        : int(f.deliveriesPerSecond);
    const tail = `${Number.isFinite(f.tailSeconds) ? f.tailSeconds.toFixed(1) : 'n/a'}${r.drainTimedOut ? ' (timed out)' : ''}`;
    lines.push(
      `| ${caseTitle(r)} | ${demand} | ${written} | ${pair(f.api)} | ${rate} | ${pair(f.latency)} | ${pair(f.latencyFromAnswer)} | ${int(f.received)} / ${int(f.expected)} | ${int(f.missing)} | ${int(f.duplicates)} | ${int(r.receiver.invalid)} | ${tail} |`,
    );
  }
  return lines.join('\n');
}

function stagesTable(cases: CaseResult[]): string {
  const lines = [`| Case | n | ${STAGES.join(' | ')} |`, `|---|--:|${STAGES.map(() => '--:').join('|')}|`];
  for (const r of cases.filter((c) => c.spec.webhooks > 0)) {
    lines.push(
      `| ${caseTitle(r)} | ${int(r.stages.total.n)} | ${STAGES.map((stage) => pair(r.stages[stage])).join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

function cpuTable(cases: CaseResult[]): string {
  const lines = [
    `| Case | ${CPU_GROUPS.join(' | ')} | machine busy |`,
    `|---|${CPU_GROUPS.map(() => '--:').join('|')}|--:|`,
  ];
  for (const r of cases) {
    lines.push(
      `| ${caseTitle(r)} | ${CPU_GROUPS.map((group) => cores(r.cpu.cores[group])).join(' | ')} | ${cores(r.cpu.machineBusy)} of ${os.availableParallelism()} |`,
    );
  }
  return lines.join('\n');
}

/** Work per delivery over the CPU window (the API's share included: one write per event). */
function perDeliveryTable(cases: CaseResult[]): string {
  const lines = [
    '| Case | Deliveries in window (events, with no webhook) | Dispatcher CPU ms | PG for dispatcher CPU ms | Redis CPU ms | Machine CPU ms | Redis commands | PG transactions | PG rows written | Busiest Redis commands (calls per delivery) |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|---|',
  ];
  for (const r of cases) {
    const n = r.spec.webhooks === 0 ? r.window.events : r.window.deliveries;
    if (!r.counters || n <= 0) continue;
    const cpuMs = (value: number) => ((value * r.cpu.seconds * 1000) / n).toFixed(2);
    const per = (value: number) => (value / n).toFixed(1);
    const top = Object.entries(r.counters.redisTop)
      .map(([command, calls]) => `${command} ${per(calls)}`)
      .join(', ');
    lines.push(
      `| ${caseTitle(r)} | ${int(n)} | ${cpuMs(r.cpu.cores.dispatcher)} | ${cpuMs(r.cpu.cores['PG for dispatcher'])} | ${cpuMs(r.cpu.cores.redis)} | ${cpuMs(r.cpu.machineBusy)} | ${per(r.counters.redisCommands)} | ${per(r.counters.pgTransactions)} | ${per(r.counters.pgRowsWritten)} | ${top} |`,
    );
  }
  return lines.join('\n');
}

function backlogTable(cases: CaseResult[]): string {
  const lines = [
    '| Case | When | Events | Not relayed | Relayed, not fanned out | Delivery rows (expected) | Open deliveries | Succeeded |',
    '|---|---|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of cases) {
    for (const [when, b] of [
      ['load ended', r.backlogAtLoadEnd],
      [`${r.drainSeconds.toFixed(0)} s later`, r.backlogAtEnd],
    ] as const) {
      lines.push(
        `| ${caseTitle(r)} | ${when} | ${int(b.events)} | ${int(b.unrelayed)} | ${int(b.relayedNotFannedOut)} | ${int(b.deliveries)} (${int(b.events * r.spec.webhooks)}) | ${int(b.openDeliveries)} | ${int(b.succeeded)} |`,
      );
    }
  }
  return lines.join('\n');
}

interface Verdict {
  target: string;
  measured: string;
  met: boolean;
}

export function verdicts(cases: CaseResult[]): Verdict[] {
  const verdicts: Verdict[] = [];
  const best = [...cases].sort((a, b) => b.figures.deliveriesPerSecond - a.figures.deliveriesPerSecond)[0];
  if (best) {
    verdicts.push({
      target: '>= 2,000 deliveries/s (best case of the run)',
      measured: `${int(best.figures.deliveriesPerSecond)} deliveries/s (${caseTitle(best)})`,
      met: best.figures.deliveriesPerSecond >= 2000 && best.figures.missing === 0,
    });
  }
  const steady = cases.filter((c) => c.spec.kind === 'steady' && c.spec.webhooks > 0);
  for (const r of steady.filter((c) => c.spec.rate === 500)) {
    const f = r.figures;
    const sustained = f.eventsPerSecond >= 0.98 * r.spec.rate && f.skipped === 0 && f.writeErrors === 0;
    verdicts.push({
      target: `p99 commit → receipt < 250 ms at a steady 500 events/s, ${r.spec.webhooks} webhook${r.spec.webhooks > 1 ? 's' : ''} (${int(500 * r.spec.webhooks)} deliveries/s)`,
      measured: `p99 ${withUnit(f.latency.p99)}, ${int(f.deliveriesPerSecond)} deliveries/s, ${int(f.eventsPerSecond)} events/s written${f.missing ? `, ${int(f.missing)} undelivered at the end` : ''}`,
      met: f.latency.p99 < 250 && sustained,
    });
  }
  for (const r of steady.filter((c) => c.spec.rate !== 500)) {
    const demand = r.spec.rate * r.spec.webhooks;
    const f = r.figures;
    verdicts.push({
      target: `(extra) steady ${int(demand)} deliveries/s (${r.spec.webhooks} webhooks x ${r.spec.rate} events/s) with p99 < 250 ms`,
      measured: `p99 ${withUnit(f.latency.p99)}, ${int(f.deliveriesPerSecond)} deliveries/s${f.missing ? `, ${int(f.missing)} undelivered at the end` : ''}`,
      met: f.latency.p99 < 250 && f.deliveriesPerSecond >= 0.98 * demand,
    });
  }
  return verdicts;
}

function targetsTable(cases: CaseResult[]): string {
  const lines = ['| Target | Measured | Met |', '|---|---|---|'];
  for (const v of verdicts(cases))
    lines.push(`| ${v.target} | ${v.measured} | ${v.met ? 'yes' : '**no**'} |`);
  return lines.join('\n');
}

function tuningLine(config: WebhooksBenchConfig): string {
  const set = Object.entries(config.tuning).map(([name, value]) => `${name}=${value}`);
  return set.length > 0
    ? `service variables set for this run: ${set.join(', ')} (others at their defaults)`
    : 'service defaults (DISPATCH_CONCURRENCY=50, DISPATCH_POLL_INTERVAL_MS=1000, WEBHOOK_TIMEOUT_MS=10000; no variable tuned)';
}

function serviceLogLines(cases: CaseResult[]): string[] {
  const lines: string[] = [];
  for (const r of cases) {
    for (const [name, log] of Object.entries(r.serviceLog)) {
      if (log.count > 0)
        lines.push(
          `- ${caseTitle(r)}: ${name} logged ${log.count} warning(s)/error(s); first: \`${(log.first ?? '').replace(/`/g, "'").slice(0, 300)}\``,
        );
    }
    if (r.receiver.invalid > 0)
      lines.push(
        `- ${caseTitle(r)}: ${r.receiver.invalid} deliveries failed verification (${r.receiver.firstInvalid})`,
      );
  }
  return lines;
}

export function renderReport(results: WebhooksResults): string {
  const m = results.machine;
  const c = results.config;
  const logs = serviceLogLines(results.cases);
  return [
    `- Date: ${results.startedAt}`,
    `- Machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB memory, ${m.os}; load average at start ${m.loadAverage}`,
    `- Node.js ${m.node}; ${m.postgres}; Redis ${m.redis}`,
    `- Code measured: ${m.source}`,
    `- Dispatcher tuning: ${tuningLine(c)}`,
    `- Steady cases: ${c.durationMs / 1000} s measured after ${c.warmupMs / 1000} s warm-up; burst cases: ${int(c.burstDeliveries)} deliveries' worth of events; tail wait up to ${c.drainTimeoutMs / 1000} s; receiver verifies with ${c.verify === 'crypto' ? 'node:crypto (same check as standardwebhooks)' : 'the standardwebhooks library'}`,
    '',
    '#### Deliveries',
    '',
    deliveriesTable(results.cases),
    '',
    'Deliveries/s: verified receipts per second within the measured window (steady), or between the 10th and 90th percentile of receipt times (burst; "overall" is all receipts over first write → last receipt). Latencies count a delivery still missing at the end as infinitely late ("undelivered"). Tail: last receipt after the last request was sent.',
    '',
    '#### Where the time goes (p50 / p99 ms, first attempts of the measured window that arrived)',
    '',
    stagesTable(results.cases),
    '',
    '#### CPU (cores, average; steady: measured window, burst: first write → last receipt)',
    '',
    cpuTable(results.cases),
    '',
    "#### Work per delivery (same window; Redis and PostgreSQL counts include the API's writes, one per event)",
    '',
    perDeliveryTable(results.cases),
    '',
    '#### Work left in PostgreSQL',
    '',
    backlogTable(results.cases),
    '',
    '#### Targets',
    '',
    targetsTable(results.cases),
    ...(logs.length ? ['', '#### Service warnings', '', ...logs] : []),
  ].join('\n');
}

const SECTION_INTRO = `## webhooks

Events per second from an API write to a verified receipt at a local receiver, and the latency
from commit to receipt, with 1 and 50 webhooks subscribed (issue: 2,000 deliveries/s, and p99
under 250 ms at a steady 500 events/s, on this machine).

### How to run

\`\`\`sh
pnpm install
npm run bench:webhooks       # from the repository root (pnpm run bench:webhooks works too)
DISPATCH_CONCURRENCY=100 npm run bench:webhooks    # tuning: service variables are passed on
\`\`\`

Needs PostgreSQL (\`postgres\` user, trust auth) at 127.0.0.1:5432 and Redis at 127.0.0.1:6379.
Every case drops, recreates and migrates the database \`recordbase_bench_webhooks\` (a case may
leave hundreds of thousands of deliveries behind) and deletes its BullMQ keys afterwards; the
database is dropped at the end. Before each case the benchmark waits until the records benchmark
is not running (\`pgrep -f records/main.ts\`, every 30 s). A full run (about 6 minutes) keeps its
figures in \`webhooks/results.json\`; \`pnpm --filter @recordbase/bench run webhooks:report\`
renders this section again from them (after editing \`webhooks/findings.md\`). Only this
section of the README is rewritten. Settings (environment variables, all optional):

| Variable | Default | Meaning |
|---|---|---|
| BENCH_WEBHOOKS_CASES | \`steady:0:500,steady:1:500,burst:1,steady:50:500,steady:50:40,burst:50\` | cases: \`steady:<webhooks>:<events/s>\`, \`burst:<webhooks>\` (setting it leaves this README alone) |
| BENCH_DURATION_S | 20 | measured seconds of a steady case |
| BENCH_WARMUP_S | 2 | seconds of the same load before it (delivered and counted, not timed) |
| BENCH_DRAIN_TIMEOUT_S | 60 | wait for the tail after the load, before counting deliveries missing |
| BENCH_BURST_DELIVERIES | 10000 | burst: deliveries to produce (events = this / webhooks) |
| BENCH_BURST_CONCURRENCY | 16 | burst: writers |
| BENCH_BURST_RECORDS | 10 | burst: records per bulk request (one event per request) |
| BENCH_CONNECTIONS | 64 | HTTP connections of the load generator |
| BENCH_MAX_IN_FLIGHT | 1000 | steady: due requests beyond this many outstanding are skipped (and reported) |
| BENCH_WEBHOOKS_VERIFY | standardwebhooks | \`crypto\`: the same check with node:crypto's HMAC |
| BENCH_SERVICE_LOG | warn | LOG_LEVEL of the services |
| BENCH_DISPATCHER_EXEC_ARGV, BENCH_API_EXEC_ARGV | none | extra node flags, such as \`--cpu-prof --cpu-prof-dir=/tmp/prof\` |
| BENCH_WAIT_FOR_RECORDS | 1 | 0 skips waiting for the records benchmark |
| BENCH_WEBHOOKS_DATABASE_URL | postgresql://postgres@127.0.0.1:5432/recordbase_bench_webhooks | benchmark database |
| BENCH_WRITE_README | 1 | 0 leaves this README alone |
| DISPATCH_*, WEBHOOK_TIMEOUT_MS, WEBHOOK_RETRY_SCHEDULE, WEBHOOK_DISABLE_AFTER | service defaults | passed to the services and named in the results |

### What it does

1. **Services.** records-api and webhook-dispatcher as child processes, exactly as \`npm start\`
   and the e2e stack run them (\`node --import tsx apps/<name>/src/main.ts\`), with
   DATABASE_URL, REDIS_URL, a random ROOT_API_KEY and WEBHOOK_SECRET_KEY, their own
   QUEUE_PREFIX, WEBHOOK_ALLOWED_CIDRS=127.0.0.1/32, rate limits of 1,000,000/s, LOG_LEVEL=warn.
   The upload service is not started.
2. **Receiver.** An HTTP server on 127.0.0.1 in **its own child process** (so verifying and
   answering does not delay the load generator's schedule; it still shares the two cores). Webhook
   number i is subscribed at \`/h/i\`; the receiver verifies every delivery with that webhook's
   secret (standardwebhooks' \`Webhook.verify\`: HMAC-SHA256 over \`id.timestamp.body\`, timestamp
   tolerance), checks that \`metadata.webhookId\` and the body's \`id\` match, takes the receipt
   time when the body has arrived (before verifying), answers 200, and streams
   (event id, webhook id, first record id, receipt time, event timestamp, attempt) to the parent.
   A delivery that fails verification is answered 400 and counted, not received.
3. **Setup per case.** A base with one table \`Events\` (Name, Seq), N webhooks subscribed to
   \`record.created\`, then one write that must arrive at every webhook before the load starts.
   The case with no webhook (\`steady:0:500\`) runs the same writes while the dispatcher relays
   and fans out every event to nobody: what the pipeline costs before any delivery.
   (\`BENCH_WITHOUT_DISPATCHER=1 BENCH_WEBHOOKS_CASES=steady:0:500\` measures the API alone.)
4. **Load.** *Steady*: open loop, request i due at start + i / rate, one \`POST …/records\` (one
   record, one event) each, over an undici Pool of 64 keep-alive connections; API latency counts
   from the due time. *Burst*: 16 writers send \`POST …/records/bulk\` of 10 records back to back
   (one event per request) until events x webhooks = 10,000 deliveries.
5. **Measure.** A delivery is an (event, webhook) pair, matched by the first record id of the
   write (the event carries it in \`data.recordIds\`). Commit time = the delivered \`timestamp\`:
   the outbox row's \`created_at\`, \`now()\` of the API's writing transaction, i.e. its start,
   a few ms before the commit (it overstates the latency by the transaction's length; the
   "API answer → receipt" column, measured from when the answer reached the client, after the
   commit, bounds it from below). Percentiles are nearest-rank over every expected delivery of
   the measured window, missing ones counted as infinitely late. After the load the benchmark
   waits for every expected delivery (up to the tail timeout, then 2 s more for duplicates) and
   counts missing and duplicated deliveries (same event and webhook received twice).
6. **Evidence.** CPU per process group from /proc (PostgreSQL backends attributed to their
   service by \`application_name\`), the stages of each delivery from the dispatcher's own
   timestamps (outbox \`created_at\` → \`relayed_at\` → \`fanned_out_at\` → attempt start →
   receipt), and the work left in PostgreSQL when the load ended.
`;

export const RESULTS_PATH = join(__dirname, 'results.json');
export const README_PATH = join(__dirname, '..', 'README.md');

/** JSON has no Infinity (an undelivered latency) nor NaN (no value): they are kept as strings. */
export function saveResults(results: WebhooksResults): void {
  const replacer = (_key: string, value: unknown) =>
    typeof value === 'number' && !Number.isFinite(value) ? String(value) : value;
  writeFileSync(RESULTS_PATH, `${JSON.stringify(results, replacer, 2)}\n`);
}

export function loadResults(): WebhooksResults {
  const reviver = (_key: string, value: unknown) =>
    value === 'Infinity' || value === 'NaN' || value === '-Infinity' ? Number(value) : value;
  return JSON.parse(readFileSync(RESULTS_PATH, 'utf8'), reviver) as WebhooksResults;
}

/** Replaces (or appends) the "## webhooks" section of bench/README.md; the rest stays as it is. */
export function writeReadmeSection(results: WebhooksResults): string {
  const findingsPath = join(__dirname, 'findings.md');
  const findings = existsSync(findingsPath) ? `\n${readFileSync(findingsPath, 'utf8').trim()}\n` : '';
  return replaceReadmeSection(
    'webhooks',
    `${SECTION_INTRO}\n### Results\n\n${renderReport(results)}\n${findings}`,
  );
}

/**
 * Puts `section` (which starts with its own `## <name>` heading) in place of the README's section
 * of that name, up to the next `## ` heading, or appends it; the other sections stay as they are.
 */
export function replaceReadmeSection(name: string, section: string): string {
  const readme = existsSync(README_PATH) ? readFileSync(README_PATH, 'utf8') : '# Benchmarks\n';
  const start = readme.search(new RegExp(`^## ${name}\\s*$`, 'm'));
  let updated: string;
  if (start === -1) {
    updated = `${readme.trimEnd()}\n\n${section}`;
  } else {
    const rest = readme.slice(start + 1);
    const nextHeading = rest.search(/^## /m);
    const end = nextHeading === -1 ? readme.length : start + 1 + nextHeading;
    updated = `${readme.slice(0, start)}${section}${end < readme.length ? `\n${readme.slice(end)}` : ''}`;
  }
  writeFileSync(README_PATH, updated);
  return README_PATH;
}
