import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import {
  cpuSeconds,
  machineTicks,
  ourCpuSeconds,
  RSS_SAMPLER_SOURCE,
  rssBytes,
  TICKS_PER_SECOND,
} from '../lib/proc';

/**
 * Memory and CPU of the processes under test over a case's window, from Linux /proc: VmRSS sampled
 * every ~20 ms (the peak is what the target is about), CPU time read at the window's two
 * ends (../lib/proc.ts), and what the rest of the machine kept busy meanwhile.
 */

const MiB = 1024 * 1024;

export interface ProcessFigures {
  /** RSS just before the measured uploads (after the warm-up), MiB. */
  rssBeforeMiB: number;
  /** Highest RSS seen while they ran, MiB. */
  rssPeakMiB: number;
  /** rssPeakMiB - rssBeforeMiB: the "peak RSS growth". */
  rssGrowthMiB: number;
  /** CPU seconds of the process over the measured window. */
  cpuSeconds: number;
}

export interface WindowFigures {
  processes: Record<string, ProcessFigures>;
  /** Samples taken and the longest gap between two. */
  samples: number;
  maxGapMs: number;
  /** Cores the whole machine kept busy over the window (of os.availableParallelism()). */
  machineBusyCores: number;
  /**
   * Of those, cores busy outside the benchmark (its process, `cp` and `sync`, the watched
   * processes): other work on a shared machine, which makes the row's figures less reliable.
   */
  otherCores: number;
}

/**
 * The sampler runs in a worker thread: the load generator's loop can be busy for tens of
 * milliseconds at a time (spawning `cp`, hashing a part for S3's signature), which must not stretch
 * the sampling interval. Plain JavaScript, so that the worker needs no loader.
 */
const SAMPLER = `
const { parentPort, workerData } = require('node:worker_threads');${RSS_SAMPLER_SOURCE}
const peaks = workerData.pids.map(rss);
let samples = 0;
let last = performance.now();
let maxGapMs = 0;
const sample = () => {
  const now = performance.now();
  maxGapMs = Math.max(maxGapMs, now - last);
  last = now;
  samples++;
  workerData.pids.forEach((pid, i) => { peaks[i] = Math.max(peaks[i], rss(pid)); });
};
const timer = setInterval(sample, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  sample();
  parentPort.postMessage({ peaks, samples, maxGapMs });
});
parentPort.postMessage('started');
`;

interface SamplerAnswer {
  peaks: number[];
  samples: number;
  maxGapMs: number;
}

/**
 * Starts watching `pids` (by role): RSS every `intervalMs` from now (in a worker thread), CPU
 * from now. `stop()` ends the window and gives the figures.
 */
export async function watchProcesses(pids: Record<string, number>, intervalMs: number) {
  const roles = Object.entries(pids);
  const before = new Map(roles.map(([role, pid]) => [role, rssBytes(pid)]));
  const worker = new Worker(SAMPLER, {
    eval: true,
    workerData: { pids: roles.map(([, pid]) => pid), intervalMs },
  });
  await once(worker, 'message');
  const cpuStart = new Map(roles.map(([role, pid]) => [role, cpuSeconds(pid)]));
  const ourStart = ourCpuSeconds();
  const machineStart = machineTicks();
  const started = performance.now();
  return {
    async stop(): Promise<WindowFigures> {
      const machineEnd = machineTicks();
      const seconds = (performance.now() - started) / 1000;
      const cpuEnd = new Map(roles.map(([role, pid]) => [role, cpuSeconds(pid)]));
      const ourEnd = ourCpuSeconds();
      const answered = once(worker, 'message');
      worker.postMessage('stop');
      const [answer] = (await answered) as [SamplerAnswer];
      await worker.terminate();
      const processes: Record<string, ProcessFigures> = {};
      roles.forEach(([role], index) => {
        const rssBeforeMiB = before.get(role)! / MiB;
        const rssPeakMiB = Math.max(answer.peaks[index]!, before.get(role)!) / MiB;
        processes[role] = {
          rssBeforeMiB,
          rssPeakMiB,
          rssGrowthMiB: rssPeakMiB - rssBeforeMiB,
          cpuSeconds: cpuEnd.get(role)! - cpuStart.get(role)!,
        };
      });
      const machineBusyCores = (machineEnd.busy - machineStart.busy) / TICKS_PER_SECOND / seconds;
      const watched = Object.values(processes).reduce((sum, p) => sum + p.cpuSeconds, 0);
      return {
        processes,
        samples: answer.samples,
        maxGapMs: answer.maxGapMs,
        machineBusyCores,
        otherCores: Math.max(0, machineBusyCores - (watched + ourEnd - ourStart) / seconds),
      };
    },
  };
}
