// First: makes sure the Prisma client exists before anything loads @recordbase/db.
import '../lib/prisma-client';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_IMPORT_FILE_BYTES } from '@recordbase/contracts/uploads';
import { deleteQueueKeys, dropDatabase } from '../lib/database';
import { type Format, loadConfig } from './config';
import { DATA_DIR, type DataFile, dataFile } from './dataset';
import {
  type ImportsResults,
  loadResults,
  machineInfo,
  renderReport,
  saveResults,
  writeReadmeSection,
} from './report';
import { abortRound, type RoundResult, runRound } from './round';
import { type Stack, startStack, stopStack } from './stack';

/**
 * `npm run bench:imports`: a generated ~49 MB CSV (500,000 rows of mixed types) and a ~48 MB
 * XLSX imported end to end through the API (upload, import, poll), against PostgreSQL's own COPY
 * of the same rows in the same run. See the "imports" section of ../README.md.
 */

function reportOnly(): void {
  const results = loadResults();
  console.log(renderReport(results));
  console.log(`\nwrote ${writeReadmeSection(results)}`);
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

function line(round: RoundResult): string {
  const phases = round.import.phases.map((phase) => `${phase.name} ${phase.seconds.toFixed(1)} s`).join(', ');
  return (
    `  ${round.format} round ${round.repeat}: upload ${round.upload.seconds.toFixed(2)} s, import ${round.import.seconds.toFixed(2)} s ` +
    `(${Math.round(round.import.rowsPerSecond).toLocaleString('en-US')} rows/s; ${phases}); ` +
    `COPY ${round.copy.seconds.toFixed(2)} s → ${round.ratio.import.toFixed(2)}x (end to end ${round.ratio.endToEnd.toFixed(2)}x); ` +
    (round.floor
      ? `history floor ${round.floor.seconds.toFixed(2)} s (COPY into the table ${round.floor.copySeconds.toFixed(2)}, indexes ${round.floor.indexSeconds.toFixed(2)}, revisions ${round.floor.revisionSeconds.toFixed(2)}) = ${round.ratio.floor.toFixed(2)}x COPY, import ${round.ratio.importToFloor.toFixed(2)}x the floor; `
      : '') +
    `worker RSS ${round.worker.rssIdleMiB.toFixed(1)} → peak +${round.worker.rssGrowthMiB.toFixed(1)} MiB at ${round.worker.rssPeakAtSeconds.toFixed(1)} s; ` +
    `check ${round.check.ok ? 'ok' : `FAILED (${round.check.mismatches.join('; ')})`}; ` +
    `other load ${round.worker.cpu.otherCores.toFixed(2)} cores (waited ${(round.quiet.waitedMs / 1000).toFixed(0)} s for ${round.quiet.busyCores.toFixed(2)})\n` +
    `    statuses: ${round.import.changes.map((change) => `${change.status} ${change.rowsImported}/${change.rowsTotal ?? '-'} seen at ${(change.atMs / 1000).toFixed(2)} s (written ${(change.updatedMs / 1000).toFixed(2)} s)`).join(', ')}`
  );
}

async function files(format: Format, rows: number, seed: number): Promise<{ file: DataFile; csv: DataFile }> {
  const file = await dataFile(format, rows, seed);
  // COPY reads CSV: for the XLSX, the same rows (same seed and count) as a CSV.
  const csv = format === 'csv' ? file : await dataFile('csv', rows, seed);
  for (const made of new Set([file, csv])) {
    if (made.generatedSeconds > 0)
      console.log(`generated ${made.path} (${mb(made.bytes)}) in ${made.generatedSeconds.toFixed(1)} s`);
  }
  if (file.bytes > MAX_IMPORT_FILE_BYTES)
    throw new Error(
      `${file.path} has ${file.bytes} bytes, over upload-service's limit of ${MAX_IMPORT_FILE_BYTES}`,
    );
  return { file, csv };
}

async function main(): Promise<void> {
  if (process.argv.includes('--report-only')) return reportOnly();
  const config = loadConfig();
  const startedAt = new Date().toISOString();
  console.log(
    `imports benchmark: ${config.formats.join(', ')}; CSV ${config.csvRows} rows, XLSX ${config.xlsxRows} rows; ${config.repeats} round(s); files cached in ${DATA_DIR}`,
  );
  const inputs: ImportsResults['files'] = {};
  for (const format of config.formats)
    inputs[format] = await files(format, format === 'csv' ? config.csvRows : config.xlsxRows, config.seed);
  // Before the services start, so that the load average is the machine's, not ours.
  const scratch = await mkdtemp(join(config.tmpRoot, 'recordbase-bench-imports-'));
  const machine = await machineInfo(config.databaseUrl, scratch);
  let stack: Stack | undefined;
  // Once, whether the run ends, fails or is interrupted; every caller waits for the same work.
  let cleaning: Promise<void> | undefined;
  const cleanUp = () => {
    cleaning ??= (async () => {
      if (stack) {
        await stopStack(stack).catch((error: unknown) => console.error('stop services:', error));
        await deleteQueueKeys(config.redisUrl, stack.queuePrefix).catch(() => 0);
      }
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
      void abortRound()
        .catch(() => {})
        .then(cleanUp)
        .finally(() => process.exit(130));
    });
  }
  const rounds: RoundResult[] = [];
  let results: ImportsResults;
  try {
    stack = await startStack(config, scratch);
    console.log(`database created and migrated in ${stack.databaseSeconds.toFixed(1)} s; services up`);
    for (let repeat = 1; repeat <= config.repeats; repeat++) {
      for (const format of config.formats) {
        const { file, csv } = inputs[format]!;
        const round = await runRound({ format, repeat, file, csv, config, stack });
        console.log(line(round));
        rounds.push(round);
      }
    }
    results = { config, machine, startedAt, databaseSeconds: stack.databaseSeconds, files: inputs, rounds };
  } finally {
    await cleanUp();
  }
  console.log(`\n${renderReport(results)}`);
  const failed = rounds.filter((round) => !round.check.ok);
  if (config.writeReadme && failed.length === 0) {
    saveResults(results);
    console.log(`\nwrote ${writeReadmeSection(results)}`);
  } else if (failed.length > 0) {
    console.log(`\n(README not rewritten: ${failed.length} round(s) failed the check)`);
    process.exitCode = 1;
  } else {
    console.log(
      '\n(README not rewritten: BENCH_IMPORT_ROWS, BENCH_XLSX_ROWS, BENCH_SEED, BENCH_IMPORT_FORMATS or BENCH_WRITE_README=0 set)',
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
