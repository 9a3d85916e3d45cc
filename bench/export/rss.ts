import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { RSS_SAMPLER_SOURCE, rssBytes, sampleProcesses } from '../lib/proc';

/**
 * records-api's resident memory during an export: the VmRSS of the service's process and of its
 * children (the cluster's workers when RECORDS_API_PROCESSES > 1), summed, sampled every
 * `intervalMs` from a worker thread so that this process reading the export's body cannot stretch
 * the interval (as the imports and uploads suites sample).
 */

const MiB = 1024 * 1024;

/** `root` and its descendants now. */
export function processTree(root: number): number[] {
  const samples = sampleProcesses();
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const sample of samples) {
      if (tree.has(sample.ppid) && !tree.has(sample.pid)) {
        tree.add(sample.pid);
        grew = true;
      }
    }
  }
  return [...tree];
}

const SAMPLER = `
const { parentPort, workerData } = require('node:worker_threads');${RSS_SAMPLER_SOURCE}
const sums = [];
const peaks = workerData.pids.map(() => 0);
const sample = () => {
  let sum = 0;
  workerData.pids.forEach((pid, index) => {
    const bytes = rss(pid);
    sum += bytes;
    peaks[index] = Math.max(peaks[index], bytes);
  });
  sums.push(sum);
};
const timer = setInterval(sample, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  sample();
  parentPort.postMessage({ sums, peaks });
});
parentPort.postMessage('started');
`;

export interface RssWindow {
  processes: number;
  /** The sum over the processes just before the window, MiB. */
  beforeMiB: number;
  /** The largest sum sampled during it, MiB. */
  peakMiB: number;
  /** peak − before of the sum: what the target bounds. */
  growthMiB: number;
  /** The largest growth of any one process (its own peak − its own before), MiB. */
  maxProcessGrowthMiB: number;
  samples: number;
}

export async function watchRss(pids: readonly number[], intervalMs: number) {
  const before = pids.map(rssBytes);
  const worker = new Worker(SAMPLER, { eval: true, workerData: { pids, intervalMs } });
  await once(worker, 'message');
  return {
    async stop(): Promise<RssWindow> {
      const answered = once(worker, 'message');
      worker.postMessage('stop');
      const [answer] = (await answered) as [{ sums: number[]; peaks: number[] }];
      await worker.terminate();
      const beforeSum = before.reduce((sum, bytes) => sum + bytes, 0);
      const peak = Math.max(beforeSum, ...answer.sums);
      return {
        processes: pids.length,
        beforeMiB: beforeSum / MiB,
        peakMiB: peak / MiB,
        growthMiB: (peak - beforeSum) / MiB,
        maxProcessGrowthMiB: Math.max(...answer.peaks.map((bytes, i) => (bytes - before[i]!) / MiB)),
        samples: answer.sums.length,
      };
    },
  };
}
