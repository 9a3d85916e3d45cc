import { readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import type pg from 'pg';

/**
 * Long statements yield the CPU to short ones. A statement that has run past `afterMs` (a slow
 * listing, a tenant's heavy SQL, a background index build) has its PostgreSQL backend moved to the
 * back of the machine's CPU queue (niceness 19) until it ends, when the backend gets its priority
 * back. On a machine whose cores PostgreSQL shares with the services, one tenant's CPU-bound
 * statement otherwise takes a whole core from everyone else's quick requests for as long as it
 * runs, whatever its key's budget: the scheduler, not a queue of ours, is what can share a core
 * while a statement runs. A demoted statement still gets every cycle nobody else wants.
 *
 * Only backends on this machine can be moved, and only by a process allowed to (root, or
 * CAP_SYS_NICE to give the priority back): a backend is taken to be ours only when /proc shows a
 * PostgreSQL backend whose title names this connection's own port, so a remote server whose
 * process ids mean something else here is never touched. Where moving is not possible (another
 * machine, no /proc, no permission) statements run as they would have, and `onUnavailable` is
 * told once why.
 */

export interface LongStatementsOptions {
  /** How long a statement runs before its backend yields. */
  afterMs: number;
  /** How often running statements are looked at: a statement yields within afterMs + this. */
  sweepMs?: number;
  /** Told once, when backends turn out not to be movable from this process. */
  onUnavailable?: (reason: string) => void;
}

export interface LongStatements {
  /** Watches a connected client's statements until its connection ends. */
  watch(client: pg.ClientBase): void;
  /** Gives every demoted backend its priority back and stops watching. */
  close(): void;
}

/** The lowest CPU priority: the backend runs on cycles nobody else at a normal priority wants. */
export const YIELDED_NICENESS = 19;
const DEFAULT_SWEEP_MS = 50;

interface ClientInternals {
  processID: number | null;
  connection?: { stream?: { localPort?: number; remoteAddress?: string } };
  /** pg's own record of the statement it is running (a new object per statement), null between them. */
  _getActiveQuery?: () => unknown;
}

interface Watched {
  /** The statement seen running at the last sweep, and since when. */
  statement: unknown;
  since: number;
  /** The backend's niceness before it yielded, while it is yielding. */
  restoreTo?: number;
  /** Whether the backend is this connection's own on this machine: looked up once, when first needed. */
  local?: boolean;
}

// A pg without it (its public getter is deprecated) leaves every statement at its priority; the
// package's tests see that.
const runningStatement = (client: ClientInternals): unknown =>
  typeof client._getActiveQuery === 'function' ? (client._getActiveQuery() ?? null) : null;

/**
 * Whether `pid` is this client's own backend on this machine: PostgreSQL titles each backend
 * "postgres: user database host(port) state", naming the client's port (or [local] for a socket).
 */
function isOwnLocalBackend(client: ClientInternals, pid: number): boolean {
  let title: string;
  try {
    title = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
  } catch {
    return false;
  }
  if (!title.startsWith('postgres: ')) return false;
  const stream = client.connection?.stream;
  if (stream?.remoteAddress === undefined) return title.includes(' [local] ');
  return stream.localPort !== undefined && title.includes(`(${stream.localPort})`);
}

const errorCode = (error: unknown): string =>
  String((error as { info?: { code?: unknown } }).info?.code ?? (error as { code?: unknown }).code ?? error);

export function createLongStatements(options: LongStatementsOptions): LongStatements {
  const sweepMs = options.sweepMs ?? DEFAULT_SWEEP_MS;
  const watched = new Map<ClientInternals, Watched>();
  let available = true;
  let sweeper: NodeJS.Timeout | undefined;

  const unavailable = (reason: string) => {
    if (!available) return;
    available = false;
    options.onUnavailable?.(reason);
  };

  const demote = (client: ClientInternals, state: Watched) => {
    const pid = client.processID;
    if (!available || pid === null) return;
    state.local ??= isOwnLocalBackend(client, pid);
    if (!state.local) return;
    try {
      const before = getPriority(pid);
      setPriority(pid, YIELDED_NICENESS);
      state.restoreTo = before;
    } catch (error) {
      // ESRCH: the backend ended between the two calls; anything else is a lack of permission.
      if (errorCode(error) !== 'ESRCH') unavailable(`cannot lower a backend's priority: ${errorCode(error)}`);
    }
  };

  const restore = (client: ClientInternals, state: Watched) => {
    const restoreTo = state.restoreTo;
    if (restoreTo === undefined) return;
    state.restoreTo = undefined;
    const pid = client.processID;
    if (pid === null) return;
    try {
      setPriority(pid, restoreTo);
    } catch (error) {
      // Raising a priority needs more permission than lowering it: without it, no backend is
      // lowered again, and this one keeps its low priority until its connection ends.
      if (errorCode(error) !== 'ESRCH')
        unavailable(`cannot give a backend its priority back: ${errorCode(error)}`);
    }
  };

  const sweep = () => {
    const now = performance.now();
    for (const [client, state] of watched) {
      const statement = runningStatement(client);
      if (statement !== state.statement) {
        restore(client, state);
        state.statement = statement;
        state.since = now;
      } else if (
        statement !== null &&
        state.restoreTo === undefined &&
        now - state.since >= options.afterMs
      ) {
        demote(client, state);
      }
    }
  };

  const unwatch = (client: ClientInternals) => {
    watched.delete(client);
    if (watched.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };

  return {
    watch(client) {
      const internals = client as unknown as ClientInternals;
      if (watched.has(internals)) return;
      watched.set(internals, { statement: null, since: performance.now() });
      (client as unknown as pg.Client).once('end', () => unwatch(internals));
      if (!sweeper) {
        sweeper = setInterval(sweep, sweepMs);
        sweeper.unref();
      }
    },
    close() {
      for (const [client, state] of watched) restore(client, state);
      watched.clear();
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
    },
  };
}
