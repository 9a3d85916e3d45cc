import { dropDatabase } from '../lib/database';
import { type ReceiverBaselineResult, runReceiverBaseline } from './baselines';
import { type CaseResult, runCase } from './case';
import { type CaseSpec, loadConfig } from './config';
import {
  caseTitle,
  loadResults,
  machineInfo,
  renderReport,
  type SaturationStep,
  saturationVerdict,
  saveResults,
  sourceFingerprint,
  type WebhooksResults,
  writeReadmeSection,
} from './report';

/**
 * `pnpm run bench:webhooks`: the baselines (the receiver alone, the API's write ceiling), then
 * every steady case, each run `repeats` times (interleaved, so a busy moment of the machine does
 * not fall on one case only), then the saturation search. Every case run has a fresh database and
 * stack, and every delivery is verified at a local receiver. See the "webhooks" section of
 * ../README.md.
 */

const ms = (value: number) => (value === Number.POSITIVE_INFINITY ? 'undelivered' : value.toFixed(1));

function summary(result: CaseResult): string {
  const f = result.figures;
  const svc = result.counters?.services ?? {};
  const n = result.spec.webhooks === 0 ? result.window.events : result.window.deliveries;
  const per = (value: number | undefined) => (n > 0 && value !== undefined ? (value / n).toFixed(2) : 'n/a');
  return [
    `  events/s written ${f.eventsPerSecond.toFixed(0)} (errors ${f.writeErrors}, skipped ${f.skipped}); API p50 ${ms(f.api.p50)} p99 ${ms(f.api.p99)} ms`,
    `  deliveries/s ${f.deliveriesPerSecond.toFixed(0)}; commit → receipt p50 ${ms(f.latency.p50)} p99 ${ms(f.latency.p99)} ms`,
    `  received ${f.received} of ${f.expected}, missing ${f.missing}, duplicates ${f.duplicates}, unexpected ${f.unexpected}, bad signatures ${result.receiver.invalid}; tail ${f.tailSeconds.toFixed(1)} s${result.drainTimedOut ? ' (timed out)' : ''}; undispatched at load end ${result.backlogAtLoadEnd.undispatched}`,
    `  per ${result.spec.webhooks === 0 ? 'event' : 'delivery'}: dispatcher PG ${per(svc['webhook-dispatcher']?.pgStatements)} redis ${per(svc['webhook-dispatcher']?.redisCommands)}; api PG ${per(svc['records-api']?.pgStatements)} redis ${per(svc['records-api']?.redisCommands)}`,
    `  cpu: ${Object.entries(result.cpu.cores)
      .map(([group, cores]) => `${group} ${cores.toFixed(2)}`)
      .join(', ')}; machine ${result.cpu.machineBusy.toFixed(2)}`,
  ].join('\n');
}

function receiverSummary(result: ReceiverBaselineResult): string {
  return `  deliveries/s ${result.deliveriesPerSecond.toFixed(0)} (${result.concurrency} in flight); request p50 ${ms(result.latency.p50)} p99 ${ms(result.latency.p99)} ms; errors ${result.errors}, bad signatures ${result.invalid}; receiver ${result.cpu.cores.receiver.toFixed(2)} cores, client ${result.cpu.cores['load generator'].toFixed(2)}, machine ${result.cpu.machineBusy.toFixed(2)}`;
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
    `webhooks benchmark: ${config.cases.map((c) => c.id).join(', ')} x ${config.repeats}${config.saturation ? `, saturation search (${config.saturation.webhooks} webhooks, ${config.saturation.rates.join(', ')} events/s)` : ''}; tuning ${JSON.stringify(config.tuning)}`,
  );
  const adminUrl = new URL(config.databaseUrl);
  adminUrl.pathname = '/postgres';
  // Before any case, so the load average is the machine's, not ours.
  const machine = await machineInfo(adminUrl.toString(), source);
  const results: WebhooksResults = { config, machine, startedAt, receiver: [], cases: [], saturation: null };
  try {
    for (let repeat = 1; repeat <= config.repeats; repeat++) {
      for (const spec of config.cases) {
        console.log(`--- ${spec.id} (run ${repeat} of ${config.repeats})`);
        if (spec.kind === 'receiver') {
          const result = await runReceiverBaseline(config, spec, repeat);
          console.log(`receiver alone\n${receiverSummary(result)}`);
          results.receiver.push(result);
        } else {
          const result = await runCase(config, spec, repeat);
          console.log(`${caseTitle(result)}\n${summary(result)}`);
          results.cases.push(result);
        }
      }
    }
    const search = config.saturation;
    if (search) {
      const steps: SaturationStep[] = [];
      results.saturation = { settings: search, steps };
      for (const rate of search.rates) {
        const spec: CaseSpec = {
          id: `saturation-${search.webhooks}wh-${rate}eps`,
          kind: 'steady',
          webhooks: search.webhooks,
          rate,
          saturation: true,
        };
        console.log(`--- ${spec.id} (saturation search)`);
        const result = await runCase(config, spec, 1, search.durationMs);
        const verdict = saturationVerdict(result, search.p99LimitMs);
        console.log(
          `${caseTitle(result)}\n${summary(result)}\n  ${verdict.passed ? 'kept up' : `did not keep up: ${verdict.why}`}`,
        );
        steps.push({ result, ...verdict });
        if (!verdict.passed) break;
      }
    }
  } finally {
    await dropDatabase(config.databaseUrl).catch(() => {});
  }
  console.log(`\n${renderReport(results)}`);
  if (config.writeReadme) {
    saveResults(results);
    console.log(`\nwrote ${writeReadmeSection(results)}`);
  } else {
    saveResults(results, true);
    console.log(
      '\n(README not rewritten: BENCH_WEBHOOKS_CASES or BENCH_WRITE_README=0 set; results in results.last.json)',
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
