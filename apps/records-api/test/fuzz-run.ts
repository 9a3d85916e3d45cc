import { Agent, createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from '@recordbase/db';
import fc from 'fast-check';
import {
  describeRequest,
  type FuzzRequest,
  type FuzzRoute,
  type Known,
  requestArbitrary,
  send,
} from './fuzz-routes';
import type { SchemaContext } from './fuzz-schema';
import { databaseSnapshot } from './harness';

/** How a fuzz run is sized and timed, from the environment (see the top of fuzz.test.ts). */
export const FUZZ = {
  runs: Number(process.env.FUZZ_RUNS ?? 25),
  seed: process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED),
  long: process.env.FUZZ_RUNS !== undefined,
  debug: process.env.FUZZ_DEBUG,
  statementTimeoutMs: 2000,
  /** Parsing and validating a 100,000-item or 1 MB body on a busy 2-core machine, beyond SQL. */
  marginMs: 8000,
};
export const ANSWER_WITHIN_MS = FUZZ.statementTimeoutMs + FUZZ.marginMs;
/** A jest timeout that a run of FUZZ.runs requests, each as slow as allowed, stays under. */
export const ROUTE_TIMEOUT_MS = Math.max(60_000, FUZZ.runs * 3 * ANSWER_WITHIN_MS);

export type FuzzOrigin = Parameters<typeof send>[0];

/**
 * Serves `app` on a free port of 127.0.0.1 for a fuzz run, through one kept-alive connection (the
 * requests go one at a time); `close` ends both.
 */
export async function serveForFuzz(
  app: RequestListener,
): Promise<{ origin: FuzzOrigin; close(): Promise<void> }> {
  const server = createServer(app).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const origin = {
    host: '127.0.0.1',
    port: (server.address() as AddressInfo).port,
    agent: new Agent({ keepAlive: true, maxSockets: 1 }),
  };
  return {
    origin,
    close: async () => {
      origin.agent.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** GETs between two snapshots. */
const READ_BATCH = 10;

/**
 * Checks that refused requests write nothing, with as few snapshots as that allows: a baseline is
 * taken before a request when there is none; a refused write is compared with it at once (so the
 * request is named); a success only drops the baseline; GETs are compared in batches.
 */
export class WriteChecker {
  private baseline: Record<string, string> | undefined;
  private reads: FuzzRequest[] = [];

  constructor(private readonly db: Db) {}

  async before(request: FuzzRequest) {
    if (!this.baseline) this.baseline = await databaseSnapshot(this.db);
    else if (request.method !== 'GET' && this.reads.length > 0) await this.checkReads();
  }

  async after(request: FuzzRequest, status: number) {
    if (request.method === 'GET') {
      this.reads.push(request);
      if (this.reads.length >= READ_BATCH) await this.checkReads();
      return;
    }
    if (status < 400) {
      this.baseline = undefined;
      return;
    }
    const now = await databaseSnapshot(this.db);
    this.compare(now, `the refused (${status}) request\n${describeRequest(request)}`);
  }

  private async checkReads() {
    const now = await databaseSnapshot(this.db);
    this.compare(now, `one of these reads:\n${this.reads.map(describeRequest).join('\n')}`);
    this.reads = [];
  }

  private compare(now: Record<string, string>, what: string) {
    const before = this.baseline ?? now;
    this.baseline = now;
    const changed = Object.keys({ ...before, ...now }).filter((table) => before[table] !== now[table]);
    if (changed.length > 0) throw new Error(`${what}\nwrote to ${changed.join(', ')}`);
  }
}

export interface Figures {
  requests: number;
  durationMs: number;
  statuses: Record<number, number>;
  slowestMs: number;
}

/** Per-route figures of a long run, as the closing note of a fuzzing run gives them. */
export function printFigures(figures: Map<string, Figures>): void {
  let requests = 0;
  let durationMs = 0;
  const lines = [...figures].map(([route, f]) => {
    requests += f.requests;
    durationMs += f.durationMs;
    const statuses = Object.entries(f.statuses)
      .map(([status, count]) => `${status}×${count}`)
      .join(' ');
    return `${route}: ${f.requests} requests in ${Math.round(f.durationMs / 1000)} s, slowest ${Math.round(f.slowestMs)} ms, ${statuses}`;
  });
  process.stdout.write(
    `fuzz figures: ${figures.size} routes, ${requests} requests in ${Math.round(durationMs / 1000)} s\n${lines.join('\n')}\n`,
  );
}

export interface FuzzTarget {
  origin: FuzzOrigin;
  authorization: string;
  db: Db;
}

/**
 * Sends `runs` (FUZZ.runs) generated requests to one route: never a 5xx, an answer within the
 * statement timeout plus the margin, a 429 always with Retry-After, and nothing written by a
 * refused request. A failure is shrunk by
 * fast-check and names the request.
 */
export async function fuzzRoute(
  target: FuzzTarget,
  route: FuzzRoute,
  context: SchemaContext,
  known: Known,
  counts: Figures,
  runs: number = FUZZ.runs,
): Promise<void> {
  const checker = new WriteChecker(target.db);
  const started = performance.now();
  const traced = FUZZ.debug !== undefined && route.path.includes(FUZZ.debug);
  const requests = requestArbitrary(route, context, known).map((request) =>
    Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) }),
  );
  await fc.assert(
    fc.asyncProperty(requests, async (request) => {
      await checker.before(request);
      const response = await send(target.origin, request, target.authorization, ANSWER_WITHIN_MS).catch(
        (error: Error) => {
          throw new Error(`${error.message}:\n${describeRequest(request)}`);
        },
      );
      counts.requests++;
      counts.statuses[response.status] = (counts.statuses[response.status] ?? 0) + 1;
      counts.slowestMs = Math.max(counts.slowestMs, response.durationMs);
      if (traced)
        process.stdout.write(
          `${response.status} ${describeRequest(request).slice(0, 300)}\n  answer: ${response.text.slice(0, 200)}\n`,
        );
      if (response.status >= 500)
        throw new Error(`${response.status} ${response.text.slice(0, 500)}\nfor ${describeRequest(request)}`);
      // A caller past a bound is told when to come back.
      if (response.status === 429 && !/^[1-9]\d*$/.test(response.retryAfter ?? ''))
        throw new Error(`429 without a Retry-After of whole seconds\nfor ${describeRequest(request)}`);
      await checker.after(request, response.status);
    }),
    { numRuns: runs, ...(FUZZ.seed !== undefined ? { seed: FUZZ.seed } : {}) },
  );
  counts.durationMs = performance.now() - started;
}
