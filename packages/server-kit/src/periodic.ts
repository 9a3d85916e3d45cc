import type { Logger } from './logger';

/**
 * A periodic task of a service (the dispatcher's sweeps, upload-service's orphan sweep, the import
 * worker's sweep of stale runs): run at start, then `intervalMs` after each run ends and whenever
 * woken, never twice at once (a wake during a run schedules one more right after it). A failed
 * run is logged (at most every 10 s per loop) and the loop goes on. The timer never keeps the
 * process alive; `stop` waits for a run in progress.
 */
export interface Loop {
  start(): void;
  wake(): void;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

export function createLoop(
  name: string,
  intervalMs: number,
  task: () => Promise<void>,
  logger: Logger,
): Loop {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = true;
  let lastErrorLog = 0;

  const schedule = (ms: number) => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(run, ms);
    timer.unref();
  };

  function run(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    running = (async () => {
      try {
        await task();
      } catch (error) {
        const now = Date.now();
        if (now - lastErrorLog > 10_000) {
          lastErrorLog = now;
          logger.warn({ err: error, loop: name }, `${name} failed; retrying`);
        }
      } finally {
        running = undefined;
        if (again) {
          again = false;
          schedule(0);
        } else {
          schedule(intervalMs);
        }
      }
    })();
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      schedule(0);
    },
    wake() {
      if (!stopped) run();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
