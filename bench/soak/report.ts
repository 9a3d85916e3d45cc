import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { replaceReadmeSection } from '../webhooks/report';
import type { ErrorSample, MinuteFigures } from './measure';

/** The soak's figures, its verdicts against issue 16's targets, and its README section. */

export interface SoakResults {
  date: string;
  machine: string;
  minutes: number;
  ratePerSecond: number;
  seedRecords: number;
  perMinute: MinuteFigures[];
  operations: { name: string; requests: number; errors: number; p50Ms: number; p99Ms: number }[];
  events: { appended: number; delivered: number; drainSeconds: number };
  imports: { started: number; succeeded: number; failed: number; unfinished: number };
  errorSamples: ErrorSample[];
}

export const RESULTS_PATH = join(__dirname, 'results.json');

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '–');

export interface Verdict {
  target: string;
  measured: string;
  met: boolean;
}

export function verdicts(results: SoakResults): Verdict[] {
  const first = results.perMinute[0];
  const last = results.perMinute.at(-1);
  const out: Verdict[] = [];
  if (first && last) {
    for (const name of Object.keys(first.rssMiB)) {
      const growth = (last.rssMiB[name]! - first.rssMiB[name]!) / first.rssMiB[name]!;
      out.push({
        target: `${name}: memory flat (RSS growth under 10%, last minute's median over the first's)`,
        measured: `${fixed(first.rssMiB[name]!)} → ${fixed(last.rssMiB[name]!)} MiB (${fixed(growth * 100)}%)`,
        met: growth < 0.1,
      });
    }
    const worst = Math.max(...results.perMinute.map((minute) => minute.p99Ms));
    out.push({
      target: "p99 of every minute within 2x of the first minute's",
      measured: `first ${fixed(first.p99Ms)} ms, worst ${fixed(worst)} ms (${fixed(worst / first.p99Ms, 2)}x)`,
      met: worst <= 2 * first.p99Ms,
    });
  }
  const errors = results.perMinute.reduce((sum, minute) => sum + minute.errors, 0);
  out.push({ target: 'zero errors', measured: `${errors} errors`, met: errors === 0 });
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
  return out;
}

export function renderReport(results: SoakResults): string {
  const names = Object.keys(results.perMinute[0]?.rssMiB ?? {});
  const lines = [
    `- Date: ${results.date}`,
    `- Machine: ${results.machine}`,
    `- Load: ${results.ratePerSecond} requests/s started on schedule (an open loop) for ${results.minutes} minutes, through the nginx gateway, on a table seeded with ${results.seedRecords.toLocaleString('en-US')} records`,
    '',
    `| Minute | Requests | Errors | p50 ms | p99 ms | ${names.map((name) => `${name} RSS MiB`).join(' | ')} |`,
    `|--:|--:|--:|--:|--:|${names.map(() => '--:').join('|')}|`,
    ...results.perMinute.map(
      (minute) =>
        `| ${minute.minute} | ${minute.requests} | ${minute.errors} | ${fixed(minute.p50Ms)} | ${fixed(minute.p99Ms)} | ${names.map((name) => fixed(minute.rssMiB[name]!)).join(' | ')} |`,
    ),
    '',
    '| Operation | Requests | Errors | p50 ms | p99 ms |',
    '|---|--:|--:|--:|--:|',
    ...results.operations.map(
      (op) => `| ${op.name} | ${op.requests} | ${op.errors} | ${fixed(op.p50Ms)} | ${fixed(op.p99Ms)} |`,
    ),
    '',
    `Events: ${results.events.appended} record events appended, ${results.events.delivered} delivered and verified by the receiver.`,
    '',
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

\`npm run bench:soak\` (\`bench/soak\`): the whole stack as \`npm start\` runs it with nginx, driven through the gateway at a steady rate by a mixed workload (lists with a filter and a sort, aggregates, bulk creates, upserts, single updates, read-only SQL, attachment uploads, CSV imports into the table) through \`@recordbase/client\` (retries off, so every 429/503 counts as an error), with a webhook receiving every record event. Per minute: requests, errors, p50/p99 and each service's median RSS; at the end, every record event appended must have been delivered. Settings: \`SOAK_MINUTES\` (10), \`SOAK_RATE\` (40 requests/s), \`SOAK_SEED_RECORDS\` (10,000), \`SOAK_DRAIN_SECONDS\` (120). Only a run of 10 minutes or more writes this section and \`soak/results.json\`.
`;

export function writeResults(results: SoakResults): string {
  writeFileSync(RESULTS_PATH, `${JSON.stringify(results, null, 2)}\n`);
  return replaceReadmeSection('soak', `${SECTION_INTRO}\n### Results\n\n${renderReport(results)}\n`);
}
