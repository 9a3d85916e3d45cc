// First: makes sure the Prisma client exists before anything loads @recordbase/db.
import '../lib/prisma-client';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_ATTACHMENT_BYTES } from '@recordbase/contracts/uploads';
import { dropDatabase } from '../lib/database';
import { abortCase, type CaseRun, runCase } from './case';
import { loadConfig } from './config';
import { makePayload } from './payload';
import {
  loadResults,
  machineInfo,
  RECEIVER,
  renderReport,
  saveResults,
  type UploadsResults,
  writeReadmeSection,
} from './report';
import { prepareStack } from './services';
import { probeStatus } from './targets';

/**
 * `npm run bench:uploads`: a 20 MB attachment uploaded at concurrency 1 and 8 through the
 * upload-service with each storage driver, against `cp`, a raw HTTP stream and a direct s3rver
 * PUT in the same run. See the "uploads" section of ../README.md.
 */

function reportOnly(): void {
  const results = loadResults();
  console.log(renderReport(results));
  console.log(`\nwrote ${writeReadmeSection(results)}`);
}

function line(run: CaseRun): string {
  const role = RECEIVER[run.target];
  const memory = role
    ? `; ${role} RSS ${run.window.processes[role]!.rssBeforeMiB.toFixed(1)} → peak +${run.window.processes[role]!.rssGrowthMiB.toFixed(1)} MiB`
    : '';
  const s3rver =
    run.target === 's3' ? `; s3rver +${run.window.processes.s3rver!.rssGrowthMiB.toFixed(1)} MiB` : '';
  return `  ${run.target} c${run.concurrency} round ${run.repeat}: ${run.mibPerSecond.toFixed(1)} MiB/s, p50 ${(run.load.p50Ms / 1000).toFixed(2)} s, errors ${run.load.errors}${memory}${s3rver}; other load ${run.window.otherCores.toFixed(2)} cores (waited ${(run.quiet.waitedMs / 1000).toFixed(0)} s for ${run.quiet.busyCores.toFixed(2)})`;
}

async function main(): Promise<void> {
  if (process.argv.includes('--report-only')) return reportOnly();
  const config = loadConfig();
  const startedAt = new Date().toISOString();
  // Before anything starts, so that the load average is the machine's, not ours.
  const machine = machineInfo(config.tmpRoot);
  console.log(
    `uploads benchmark: ${config.targets.join(', ')} at concurrency ${config.concurrencies.join(', ')}; ${config.uploadsPerCase} uploads of ${config.fileBytes} bytes per case, ${config.repeats} round(s)`,
  );
  const scratch = await mkdtemp(join(config.tmpRoot, 'recordbase-bench-uploads-'));
  // Once, whether the run ends, fails or is interrupted; every caller waits for the same work.
  let cleaning: Promise<void> | undefined;
  const cleanUp = () => {
    cleaning ??= (async () => {
      await dropDatabase(config.databaseUrl).catch((error: unknown) =>
        console.error('drop database:', error),
      );
      await rm(scratch, { recursive: true, force: true });
    })();
    return cleaning;
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: cleaning up`);
      void abortCase()
        .catch(() => {})
        .then(cleanUp)
        .finally(() => process.exit(130));
    });
  }
  const runs: CaseRun[] = [];
  let results: UploadsResults;
  try {
    const stack = await prepareStack(config);
    console.log(
      `database created and migrated in ${stack.databaseSeconds.toFixed(1)} s; base ${stack.target.baseId}`,
    );
    const probeDir = await mkdtemp(join(scratch, 'limit-'));
    const overLimit = MAX_ATTACHMENT_BYTES + 1;
    const limitStatus = await probeStatus(
      stack,
      await makePayload(overLimit, join(probeDir, 'over.png')),
      probeDir,
    );
    await rm(probeDir, { recursive: true, force: true });
    console.log(`a file of ${overLimit} bytes (the limit + 1): ${limitStatus}`);
    const payload = await makePayload(config.fileBytes, join(scratch, 'file.png'));
    for (let repeat = 1; repeat <= config.repeats; repeat++) {
      for (const concurrency of config.concurrencies) {
        for (const target of config.targets) {
          const run = await runCase({
            target,
            concurrency,
            repeat,
            uploads: config.uploadsPerCase,
            warmupUploads: config.warmupUploads,
            rssIntervalMs: config.rssIntervalMs,
            quietCores: config.quietCores,
            quietWaitMs: config.quietWaitMs,
            waitForOtherBench: config.waitForOtherBench,
            payload,
            stack,
            tmpRoot: scratch,
          });
          console.log(line(run));
          runs.push(run);
        }
      }
    }
    results = {
      config,
      machine,
      startedAt,
      databaseSeconds: stack.databaseSeconds,
      limitProbe: { bytes: overLimit, status: limitStatus },
      runs,
    };
  } finally {
    await cleanUp();
  }
  console.log(`\n${renderReport(results)}`);
  if (config.writeReadme) {
    saveResults(results);
    console.log(`\nwrote ${writeReadmeSection(results)}`);
  } else {
    console.log(
      '\n(README not rewritten: BENCH_UPLOADS_TARGETS, BENCH_CONCURRENCY, BENCH_FILE_BYTES or BENCH_WRITE_README=0 set)',
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
