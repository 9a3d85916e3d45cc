/**
 * Keeps a process running: when it exits unasked (a crash, the kernel's OOM killer), it is
 * launched again after a delay that doubles with each exit in a row, up to a ceiling, and starts
 * over once a run has lasted. One crashing service then costs its own requests, not the whole
 * installation, and a service that cannot stay up is not relaunched in a tight loop.
 */

export interface Supervisable {
  pid: number;
  /** Resolves when the process exits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once it answers; rejects (and the process is killed) if it never does. */
  ready: Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface SupervisorOptions {
  /** How the process is named in what is reported. */
  label: string;
  /** Delay before the first restart (default 1 s); doubled for each further exit in a row. */
  initialDelayMs?: number;
  /** Longest delay between restarts (default 30 s). */
  maxDelayMs?: number;
  /** A run at least this long (default 60 s) makes the next delay the initial one again. */
  stableAfterMs?: number;
  /** Each exit and each return, as one line. */
  report(line: string): void;
}

export interface Supervised<Process extends Supervisable> {
  /** The process now running (or the last one, while waiting to relaunch). */
  current(): Process;
  /** The first launch's readiness: a process that never comes up is not relaunched. */
  ready: Promise<void>;
  /** How many times it was relaunched. */
  restarts(): number;
  /** Stops the process and relaunches nothing more. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export function supervise<Process extends Supervisable>(
  launch: () => Process,
  options: SupervisorOptions,
): Supervised<Process> {
  const initialDelayMs = options.initialDelayMs ?? 1000;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const stableAfterMs = options.stableAfterMs ?? 60_000;
  let stopped = false;
  let restarts = 0;
  let delayMs = initialDelayMs;
  let pending: NodeJS.Timeout | undefined;
  let current: Process;
  // Until the first launch is ready, an exit is a failure to start: reported by `ready`, not retried.
  let started = false;

  const start = (): Process => {
    const process = launch();
    const startedAt = Date.now();
    current = process;
    process.exited.then(({ code, signal }) => {
      if (stopped || !started || current !== process) return;
      if (Date.now() - startedAt >= stableAfterMs) delayMs = initialDelayMs;
      const delay = delayMs;
      delayMs = Math.min(delayMs * 2, maxDelayMs);
      restarts += 1;
      options.report(
        `${options.label} exited (${signal ?? `exit code ${code}`}); starting it again in ${delay / 1000} s (restart ${restarts})`,
      );
      pending = setTimeout(() => {
        pending = undefined;
        if (stopped) return;
        const next = start();
        next.ready.then(
          () => options.report(`${options.label} is running again (pid ${next.pid})`),
          () => {},
        );
      }, delay);
    });
    return process;
  };

  const first = start();
  first.ready.then(
    () => {
      started = true;
    },
    () => {},
  );
  return {
    current: () => current,
    ready: first.ready,
    restarts: () => restarts,
    async stop(signal) {
      stopped = true;
      clearTimeout(pending);
      await current.stop(signal);
    },
  };
}
