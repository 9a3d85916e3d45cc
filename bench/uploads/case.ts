import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { waitForOtherBenchmark, waitForQuiet } from '../lib/proc';
import type { Target } from './config';
import { closedLoop, type LoadRun } from './load';
import type { Payload } from './payload';
import { type WindowFigures, watchProcesses } from './rss';
import type { Stack } from './services';
import { type PreparedTarget, prepareTarget } from './targets';

/**
 * One case: a target at one concurrency, in a fresh scratch directory with fresh processes.
 * The warm-up uploads run one at a time and the first stored copy is read back and compared;
 * then, once the machine is quiet, RSS is taken ("before") and the measured uploads run while RSS
 * is sampled.
 */

export interface CaseRun {
  target: Target;
  concurrency: number;
  repeat: number;
  load: Omit<LoadRun, 'latenciesMs'>;
  /** MiB (2^20 bytes) of file per second of the window. */
  mibPerSecond: number;
  window: WindowFigures;
  /** Cores the machine kept busy in the second before the window, and how long the case waited for quiet. */
  quiet: { busyCores: number; waitedMs: number };
}

const MiB = 1024 * 1024;

export interface CaseSettings {
  target: Target;
  concurrency: number;
  repeat: number;
  uploads: number;
  warmupUploads: number;
  rssIntervalMs: number;
  quietCores: number;
  quietWaitMs: number;
  /** Wait until the records benchmark is not running (as the webhooks benchmark does). */
  waitForOtherBench: boolean;
  payload: Payload;
  stack: Stack;
  tmpRoot: string;
}

/** How to stop the processes of the case in progress, for a signal. */
let stopCurrent: (() => Promise<void>) | undefined;

/** Stops the processes of the case in progress (on SIGINT or SIGTERM). */
export async function abortCase(): Promise<void> {
  await stopCurrent?.();
}

export async function runCase(settings: CaseSettings): Promise<CaseRun> {
  const { target, concurrency, payload } = settings;
  if (settings.waitForOtherBench) await waitForOtherBenchmark();
  const dir = await mkdtemp(join(settings.tmpRoot, `${target}-c${concurrency}-`));
  let prepared: PreparedTarget | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= prepared?.stop() ?? Promise.resolve());
  try {
    prepared = await prepareTarget({ target, concurrency, payload, stack: settings.stack, dir });
    stopCurrent = stop;
    const warmup = await closedLoop(settings.warmupUploads, 1, (index) => prepared!.operation(index));
    if (warmup.errors > 0) throw new Error(`warm-up failed: ${warmup.firstError}`);
    await prepared.verify();
    // Lets the warm-up settle, and waits for whatever else shares the machine to pause.
    const quiet = await waitForQuiet(settings.quietCores, settings.quietWaitMs);
    const watch = await watchProcesses(prepared.pids, settings.rssIntervalMs);
    const { latenciesMs: _latencies, ...load } = await closedLoop(settings.uploads, concurrency, (index) =>
      prepared!.operation(settings.warmupUploads + index),
    );
    const window = await watch.stop();
    const stored = load.count - load.errors;
    return {
      target,
      concurrency,
      repeat: settings.repeat,
      load,
      mibPerSecond: (stored * payload.file.length) / MiB / load.seconds,
      window,
      quiet,
    };
  } catch (error) {
    const output = prepared?.output() ?? '';
    if (output) console.error(`--- service output (last 3000 characters):\n${output.slice(-3000)}`);
    throw error;
  } finally {
    stopCurrent = undefined;
    await stop();
    await rm(dir, { recursive: true, force: true });
  }
}
