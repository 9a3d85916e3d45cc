import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * The one way the services are started, for `npm start` (scripts/stack.ts), the e2e tests
 * (e2e/test/stack.ts), the client's tests and the benchmarks: `node --import tsx <entry>` from
 * the repository root with the given environment and PORT, ready once `GET /readyz` answers 200.
 * The environment a stack of them shares, its secrets made once, and the start of all of them
 * with it are ./stack (stackEnv, startStack). What each caller adds (its database, flags, log
 * prefixes, counters) stays with the caller. The nginx gateway in front of them is ./gateway.
 */

export const REPO_ROOT = join(__dirname, '..', '..', '..');
export const serviceNames = ['records-api', 'upload-service', 'webhook-dispatcher', 'import-worker'] as const;
export type ServiceName = (typeof serviceNames)[number];

/** Each service's entry point. */
export const serviceEntries: Record<ServiceName, string> = {
  'records-api': 'apps/records-api/src/main.ts',
  'upload-service': 'apps/upload-service/src/main.ts',
  'webhook-dispatcher': 'apps/webhook-dispatcher/src/main.ts',
  'import-worker': 'apps/import-worker/src/main.ts',
};

/** A port of 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface ServiceOptions<Name extends ServiceName = ServiceName> {
  name: Name;
  port: number;
  /** The child's whole environment (include process.env yourself); PORT is added. */
  env: NodeJS.ProcessEnv;
  /** Node flags before `--import tsx`. */
  execArgv?: string[];
  /**
   * 'pipe': kept for output() and error messages; 'inherit': this process's stdout and stderr;
   * a function: called with each line, nothing kept.
   */
  output: 'pipe' | 'inherit' | ((line: string, stream: 'stdout' | 'stderr') => void);
  /** With 'pipe': how many of the last characters output() keeps (default: all). */
  keepOutput?: number;
  /** How long /readyz may take to answer 200 (default 60 s); then the process is killed. */
  readyTimeoutMs?: number;
  /** stop(): SIGKILL when the process has not exited this long after the signal (default: never). */
  killAfterMs?: number;
}

export interface RunningService<Name extends ServiceName = ServiceName> {
  name: Name;
  pid: number;
  port: number;
  /** What the process printed ('pipe'), else ''. */
  output(): string;
  /** Sends the signal (SIGTERM) unless the process has exited, and resolves once it has. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Resolves when the process exits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once /readyz answered 200; rejects with the output if the process exits or times out. */
  ready: Promise<void>;
}

const POLL_MS = 200;

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Polls `url` until it answers 200; kills the process and throws with its output if it never does. */
export async function waitReady(
  child: ChildProcess,
  name: string,
  url: string,
  timeoutMs: number,
  output: () => string,
) {
  const withOutput = (message: string) => (output() ? `${message}:\n${output()}` : message);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (hasExited(child)) {
      throw new Error(withOutput(`${name} exited with ${child.signalCode ?? `code ${child.exitCode}`}`));
    }
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, POLL_MS));
  }
  if (!hasExited(child)) child.kill('SIGKILL');
  throw new Error(withOutput(`${name} was not ready at ${url} within ${timeoutMs / 1000} s`));
}

export type OutputOption = ServiceOptions['output'];

/** A child process whose output goes where `output` says; `output()` reads what 'pipe' kept. */
export function spawnWithOutput(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  output: OutputOption,
  keepOutput = Number.POSITIVE_INFINITY,
): { child: ChildProcess; output: () => string; exited: RunningService['exited'] } {
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', output === 'inherit' ? 'inherit' : 'pipe', output === 'inherit' ? 'inherit' : 'pipe'],
  });
  let kept = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.once('exit', (code, signal) => done({ code, signal }));
    // A command that cannot be started never exits; without a listener its error would throw.
    child.once('error', (error) => {
      kept += `${error.message}\n`;
      if (typeof output === 'function') output(error.message, 'stderr');
      done({ code: null, signal: null });
    });
  });
  if (output === 'pipe') {
    const keep = keepOutput;
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        kept = kept + chunk;
        if (kept.length > keep) kept = kept.slice(-keep);
      });
    }
  } else if (typeof output === 'function') {
    for (const [stream, which] of [
      [child.stdout, 'stdout'],
      [child.stderr, 'stderr'],
    ] as const) {
      if (stream) createInterface({ input: stream }).on('line', (line) => output(line, which));
    }
  }
  return { child, output: () => kept, exited };
}

/** Sends `signal` unless the child has exited, SIGKILL after `killAfterMs`; resolves once it has exited. */
export async function stopChild(
  child: ChildProcess,
  exited: Promise<unknown>,
  signal: NodeJS.Signals,
  killAfterMs?: number,
): Promise<void> {
  if (hasExited(child)) return;
  const kill = killAfterMs ? setTimeout(() => child.kill('SIGKILL'), killAfterMs) : undefined;
  child.kill(signal);
  await exited;
  clearTimeout(kill);
}

/** Spawns the service and returns at once; `ready` tells when it answers. */
export function launchService<Name extends ServiceName>(options: ServiceOptions<Name>): RunningService<Name> {
  const { name, port } = options;
  const {
    child,
    output: readOutput,
    exited,
  } = spawnWithOutput(
    process.execPath,
    [...(options.execArgv ?? []), '--import', 'tsx', join(REPO_ROOT, serviceEntries[name])],
    { ...options.env, PORT: String(port) },
    options.output,
    options.keepOutput,
  );
  const ready = waitReady(
    child,
    name,
    `http://127.0.0.1:${port}/readyz`,
    options.readyTimeoutMs ?? 60_000,
    readOutput,
  );
  // Handled where the caller awaits it; not an unhandled rejection before then.
  ready.catch(() => {});
  return {
    name,
    pid: child.pid ?? 0,
    port,
    output: readOutput,
    exited,
    ready,
    stop: (signal: NodeJS.Signals = 'SIGTERM') => stopChild(child, exited, signal, options.killAfterMs),
  };
}

/** Spawns the service and resolves once it is ready. */
export async function startService<Name extends ServiceName>(
  options: ServiceOptions<Name>,
): Promise<RunningService<Name>> {
  const service = launchService(options);
  await service.ready;
  return service;
}

/** Stops them all (each with its own killAfterMs), resolving once every one has exited. */
export async function stopAll(
  services: readonly { stop(signal?: NodeJS.Signals): Promise<void> }[],
  signal?: NodeJS.Signals,
): Promise<void> {
  await Promise.all(services.map((service) => service.stop(signal)));
}
