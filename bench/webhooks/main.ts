import { type CaseResult, runCase } from './case';
import { loadConfig } from './config';
import { dropDatabase } from './database';
import {
  caseTitle,
  loadResults,
  machineInfo,
  renderReport,
  saveResults,
  sourceFingerprint,
  type WebhooksResults,
  writeReadmeSection,
} from './report';

/**
 * `pnpm run bench:webhooks`: for every case, a fresh database and stack, a load of record creates,
 * and every delivery verified at a local receiver. See the "webhooks" section of ../README.md.
 */

const ms = (value: number) => (value === Number.POSITIVE_INFINITY ? 'undelivered' : value.toFixed(1));

function summary(result: CaseResult): string {
  const f = result.figures;
  return [
    `  events/s written ${f.eventsPerSecond.toFixed(0)} (errors ${f.writeErrors}, skipped ${f.skipped}); API p50 ${ms(f.api.p50)} p99 ${ms(f.api.p99)} ms`,
    `  deliveries/s ${f.deliveriesPerSecond.toFixed(0)} (overall ${f.deliveriesPerSecondOverall.toFixed(0)}); commit → receipt p50 ${ms(f.latency.p50)} p99 ${ms(f.latency.p99)} ms; from API answer p50 ${ms(f.latencyFromAnswer.p50)} p99 ${ms(f.latencyFromAnswer.p99)} ms`,
    `  received ${f.received} of ${f.expected}, missing ${f.missing}, duplicates ${f.duplicates}, unexpected ${f.unexpected}, bad signatures ${result.receiver.invalid}; tail ${f.tailSeconds.toFixed(1)} s${result.drainTimedOut ? ' (timed out)' : ''}`,
    `  cpu: ${Object.entries(result.cpu.cores)
      .map(([group, cores]) => `${group} ${cores.toFixed(2)}`)
      .join(', ')}; machine ${result.cpu.machineBusy.toFixed(2)}`,
  ].join('\n');
}

function reportOnly(): void {
  const results = loadResults();
  console.log(renderReport(results));
  console.log(`\nwrote ${writeReadmeSection(results)}`);
}

async function main(): Promise<void> {
  if (process.argv.includes('--report-only')) return reportOnly();
  const config = loadConfig();
  const startedAt = new Date().toISOString();
  const source = sourceFingerprint();
  console.log(
    `webhooks benchmark: ${config.cases.map((c) => c.id).join(', ')}; tuning ${JSON.stringify(config.tuning)}`,
  );
  const adminUrl = new URL(config.databaseUrl);
  adminUrl.pathname = '/postgres';
  // Before any case, so the load average is the machine's, not ours.
  const machine = await machineInfo(adminUrl.toString(), source);
  const cases: CaseResult[] = [];
  try {
    for (const spec of config.cases) {
      console.log(`--- ${spec.id}`);
      const result = await runCase(config, spec);
      console.log(`${caseTitle(result)}\n${summary(result)}`);
      cases.push(result);
    }
  } finally {
    await dropDatabase(config.databaseUrl).catch(() => {});
  }
  const results: WebhooksResults = { config, machine, startedAt, cases };
  console.log(`\n${renderReport(results)}`);
  if (config.writeReadme) {
    saveResults(results);
    console.log(`\nwrote ${writeReadmeSection(results)}`);
  } else {
    console.log('\n(README not rewritten: BENCH_WEBHOOKS_CASES or BENCH_WRITE_README=0 set)');
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
