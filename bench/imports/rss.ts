import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { RSS_SAMPLER_SOURCE, rssBytes } from '../lib/proc';

/**
 * VmRSS of one process sampled every `intervalMs` from a worker thread (as the uploads suite does,
 * so that the benchmark's own event loop cannot stretch the interval), keeping every sample with
 * its time, so that the peak can be placed in the import's phases.
 */

const MiB = 1024 * 1024;

const SAMPLER = `
const { parentPort, workerData } = require('node:worker_threads');${RSS_SAMPLER_SOURCE}
const times = [];
const values = [];
let maxGapMs = 0;
let last = performance.timeOrigin + performance.now();
const sample = () => {
  const now = performance.timeOrigin + performance.now();
  maxGapMs = Math.max(maxGapMs, now - last);
  last = now;
  times.push(now);
  values.push(rss(workerData.pid));
};
const timer = setInterval(sample, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  sample();
  parentPort.postMessage({ times, values, maxGapMs });
});
parentPort.postMessage('started');
`;

export interface RssSeries {
  /** Reading just before the window, MiB. */
  beforeMiB: number;
  /** When each sample was read (epoch ms, as Date.now()) and MiB. */
  samples: { ms: number; mib: number }[];
  peakMiB: number;
  /** When the peak was read (epoch ms). */
  peakAtMs: number;
  maxGapMs: number;
}

/** Starts sampling `pid`. */
export async function watchRss(pid: number, intervalMs: number) {
  const before = rssBytes(pid);
  const startedAt = Date.now();
  const worker = new Worker(SAMPLER, { eval: true, workerData: { pid, intervalMs } });
  await once(worker, 'message');
  return {
    async stop(): Promise<RssSeries> {
      const answered = once(worker, 'message');
      worker.postMessage('stop');
      const [answer] = (await answered) as [{ times: number[]; values: number[]; maxGapMs: number }];
      await worker.terminate();
      const samples = answer.times
        .map((ms, index) => ({ ms, mib: (answer.values[index] ?? 0) / MiB }))
        .filter((sample) => sample.mib > 0);
      let peak = { ms: startedAt, mib: before / MiB };
      for (const sample of samples) if (sample.mib > peak.mib) peak = sample;
      return {
        beforeMiB: before / MiB,
        samples,
        peakMiB: peak.mib,
        peakAtMs: peak.ms,
        maxGapMs: answer.maxGapMs,
      };
    },
  };
}
