import type { Logger } from '../src/logger';
import { createLoop } from '../src/periodic';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Waits until `condition` holds (a loaded machine fires timers late), failing after 5 s. */
async function until(condition: () => boolean): Promise<void> {
  for (const giveUpAt = Date.now() + 5_000; !condition(); await sleep(5)) {
    if (Date.now() > giveUpAt) throw new Error('the condition never held');
  }
}

/** A task whose runs are counted and each held open until released. */
function gatedTask() {
  let running = 0;
  let mostAtOnce = 0;
  let runs = 0;
  const gates: Array<() => void> = [];
  return {
    task: async () => {
      runs += 1;
      running += 1;
      mostAtOnce = Math.max(mostAtOnce, running);
      await new Promise<void>((open) => gates.push(open));
      running -= 1;
    },
    openNext: () => gates.shift()?.(),
    get runs() {
      return runs;
    },
    get mostAtOnce() {
      return mostAtOnce;
    },
  };
}

const silent = { warn() {} } as unknown as Logger;

describe('a periodic loop', () => {
  it('runs at start, then once more after a run if woken during it, never two at once', async () => {
    const gated = gatedTask();
    const loop = createLoop('test loop', 60_000, gated.task, silent);
    loop.start();
    await until(() => gated.runs === 1);
    // Woken twice during the run: one more run, after it.
    loop.wake();
    loop.wake();
    await sleep(20);
    expect(gated.runs).toBe(1);
    gated.openNext();
    await until(() => gated.runs === 2);
    gated.openNext();
    await sleep(20);
    // Not again before its interval.
    expect(gated.runs).toBe(2);
    expect(gated.mostAtOnce).toBe(1);
    await loop.stop();
  });

  it('runs every interval after the last run ended, and goes on after a failed run, saying so', async () => {
    const warnings: string[] = [];
    const logger = { warn: (_: unknown, message: string) => warnings.push(message) } as unknown as Logger;
    let runs = 0;
    const loop = createLoop(
      'flaky sweep',
      30,
      async () => {
        runs += 1;
        if (runs === 1) throw new Error('no database');
      },
      logger,
    );
    loop.start();
    await until(() => runs >= 3);
    await loop.stop();
    expect(warnings).toEqual(['flaky sweep failed; retrying']);
  });

  it('waits on stop for the run in progress, and runs no more after it', async () => {
    const gated = gatedTask();
    const loop = createLoop('test loop', 10, gated.task, silent);
    loop.start();
    await until(() => gated.runs === 1);
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await sleep(20);
    expect(stopped).toBe(false);
    gated.openNext();
    await stopping;
    await sleep(50);
    loop.wake();
    await sleep(20);
    expect(gated.runs).toBe(1);
  });
});
