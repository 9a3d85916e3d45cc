import { readFileSync, writeFileSync } from 'node:fs';
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
 * A statement that has spent `afterCpuMs` of CPU (read from /proc/<pid>/schedstat) since it was
 * first seen running yields too, before `afterMs`: a CPU-bound listing of 100 ms would otherwise
 * run at full priority from start to end. CPU, not the clock, so that a quick statement kept
 * waiting for a core by an overload is not demoted for the wait.
 *
 * Where Linux groups processes by session for scheduling (sched_autogroup_enabled, the default
 * of desktop and many server kernels when no cgroup holds the process), a process's niceness only
 * weighs against the processes of its own session, and every PostgreSQL backend leads a session
 * of its own: there, only the niceness of the backend's group (/proc/<pid>/autogroup) moves it
 * against everyone else, so both are set.
 *
 * A statement inside a transaction is left alone unless its connection only reads: what the
 * transaction has written stays locked until it commits (rows, a table's row count), and a
 * demoted lock holder would make every writer waiting behind it wait at the lowest priority too.
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
  /**
   * How much CPU a statement spends before its backend yields, whatever the clock says; off where
   * the kernel does not report a process's CPU time in /proc/<pid>/schedstat.
   */
  afterCpuMs?: number;
  /** How often running statements are looked at: a statement yields within afterMs + this. */
  sweepMs?: number;
  /** Told once, when backends turn out not to be movable from this process. */
  onUnavailable?: (reason: string) => void;
}

export interface WatchOptions {
  /**
   * The connection only reads (a read-only transaction), so its statements yield inside
   * transactions too: they hold no lock a writer waits for.
   */
  readOnly?: boolean;
}

export interface LongStatements {
  /** Watches a connected client's statements until its connection ends. */
  watch(client: pg.ClientBase, options?: WatchOptions): void;
  /** Gives every demoted backend its priority back and stops watching. */
  close(): void;
}

/**
 * The CPU a statement spends before it yields under createDb's `longStatementYieldMs`: a fifth of a
 * core's 100 ms, more than a quick statement of a page or a write takes, less than a scan of a
 * table of long texts.
 */
export const LONG_STATEMENT_CPU_MS = 20;

/** The lowest CPU priority: the backend runs on cycles nobody else at a normal priority wants. */
export const YIELDED_NICENESS = 19;
const DEFAULT_SWEEP_MS = 10;

interface ClientInternals {
  processID: number | null;
  connection?: {
    stream?: { localPort?: number; remoteAddress?: string };
    on(event: 'readyForQuery', listener: (message: { status?: string }) => void): void;
  };
  /** pg's own record of the statement it is running (a new object per statement), null between them. */
  _getActiveQuery?: () => unknown;
}

interface Watched {
  /** The statement seen running at the last sweep, and since when. */
  statement: unknown;
  since: number;
  /** The backend's CPU time (ms) when the statement was first seen running, once read. */
  cpuAtStartMs?: number;
  /** The statement has spent `afterCpuMs`: it stays long until it ends. */
  spentCpu: boolean;
  readOnly: boolean;
  /** The session's transaction state the server last reported ('I' outside a transaction). */
  sessionStatus: string;
  /** Whether the running statement began inside a transaction. */
  inTransaction: boolean;
  /** The backend's niceness before it yielded, while it is yielding. */
  restoreTo?: number;
  /** Its session group's niceness before it yielded, while the group is yielding. */
  groupRestoreTo?: number;
  /** Whether the backend is this connection's own on this machine: looked up once, when first needed. */
  local?: boolean;
  /** Whether the kernel schedules the backend as a group of its own: looked up once, with `local`. */
  ownGroup?: boolean;
}

// A pg without it (its public getter is deprecated) leaves every statement at its priority; the
// package's tests see that.
const runningStatement = (client: ClientInternals): unknown =>
  typeof client._getActiveQuery === 'function' ? (client._getActiveQuery() ?? null) : null;

/** The CPU time `pid` has run, in ms (the first figure of schedstat, in ns), or null unreadable. */
function cpuTimeMs(pid: number): number | null {
  try {
    const ns = Number(readFileSync(`/proc/${pid}/schedstat`, 'latin1').split(' ')[0]);
    return Number.isFinite(ns) ? ns / 1e6 : null;
  } catch {
    return null;
  }
}

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

/** The niceness of the scheduling group of `pid` ("/autogroup-123 nice 0"), or null without one. */
function groupNiceness(pid: number): number | null {
  try {
    const match = / nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, 'latin1'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/**
 * Whether the kernel schedules `pid` as a group of its own: autogroups are on and the process
 * leads its session, so its group holds no other process (a backend forks none), and moving the
 * group moves this backend alone.
 */
function leadsOwnGroup(pid: number): boolean {
  try {
    if (readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'latin1').trim() !== '1') return false;
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // After the command's closing parenthesis: state, parent, process group, session.
    const session = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
    return session === pid && groupNiceness(pid) !== null;
  } catch {
    return false;
  }
}

type GroupWrite = 'done' | 'gone' | 'busy' | 'refused';

function setGroupNiceness(pid: number, niceness: number): { outcome: GroupWrite; code?: string } {
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(niceness));
    return { outcome: 'done' };
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ESRCH') return { outcome: 'gone' };
    // Without CAP_SYS_ADMIN the kernel takes one such change per 100 ms: tried again next sweep.
    if (code === 'EAGAIN') return { outcome: 'busy' };
    return { outcome: 'refused', code };
  }
}

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

  /** Whether the client's backend is its own on this machine: looked up once per connection. */
  const isLocal = (client: ClientInternals, state: Watched, pid: number): boolean => {
    if (state.local === undefined) {
      state.local = isOwnLocalBackend(client, pid);
      state.ownGroup = state.local && leadsOwnGroup(pid);
    }
    return state.local;
  };

  /** Whether the running statement has spent `afterCpuMs` of CPU since it was first seen. */
  const spentItsCpu = (client: ClientInternals, state: Watched): boolean => {
    const pid = client.processID;
    if (state.spentCpu) return true;
    if (options.afterCpuMs === undefined || !available || pid === null || !isLocal(client, state, pid))
      return false;
    const cpuMs = cpuTimeMs(pid);
    if (cpuMs === null) return false;
    state.cpuAtStartMs ??= cpuMs;
    state.spentCpu = cpuMs - state.cpuAtStartMs >= options.afterCpuMs;
    return state.spentCpu;
  };

  /** Called at every sweep while the statement is long: what a sweep could not do, the next does. */
  const demote = (client: ClientInternals, state: Watched) => {
    const pid = client.processID;
    if (!available || pid === null || !isLocal(client, state, pid)) return;
    if (state.restoreTo === undefined) {
      try {
        const before = getPriority(pid);
        setPriority(pid, YIELDED_NICENESS);
        state.restoreTo = before;
      } catch (error) {
        // ESRCH: the backend ended between the two calls; anything else is a lack of permission.
        if (errorCode(error) !== 'ESRCH')
          unavailable(`cannot lower a backend's priority: ${errorCode(error)}`);
        return;
      }
    }
    if (state.ownGroup && state.groupRestoreTo === undefined) {
      const before = groupNiceness(pid);
      if (before === null) return;
      const { outcome, code } = setGroupNiceness(pid, YIELDED_NICENESS);
      if (outcome === 'done') state.groupRestoreTo = before;
      else if (outcome === 'refused') unavailable(`cannot lower a backend's group priority: ${code}`);
    }
  };

  /** Called at every sweep while the statement is not long: a no-op unless the backend yielded. */
  const restore = (client: ClientInternals, state: Watched) => {
    const pid = client.processID;
    if (state.restoreTo !== undefined) {
      const restoreTo = state.restoreTo;
      state.restoreTo = undefined;
      try {
        if (pid !== null) setPriority(pid, restoreTo);
      } catch (error) {
        // Raising a priority needs more permission than lowering it: without it, no backend is
        // lowered again, and this one keeps its low priority until its connection ends.
        if (errorCode(error) !== 'ESRCH')
          unavailable(`cannot give a backend its priority back: ${errorCode(error)}`);
      }
    }
    if (state.groupRestoreTo !== undefined) {
      const { outcome, code } =
        pid === null ? { outcome: 'gone' as const } : setGroupNiceness(pid, state.groupRestoreTo);
      // A busy kernel is asked again at the next sweep: a pooled backend must not stay behind.
      if (outcome !== 'busy') state.groupRestoreTo = undefined;
      if (outcome === 'refused') unavailable(`cannot give a backend's group its priority back: ${code}`);
    }
  };

  const sweep = () => {
    const now = performance.now();
    for (const [client, state] of watched) {
      const statement = runningStatement(client);
      if (statement !== state.statement) {
        state.statement = statement;
        state.since = now;
        state.cpuAtStartMs = undefined;
        state.spentCpu = false;
        // No ReadyForQuery comes between a statement's start and its end: the last one tells
        // the state the statement began in.
        state.inTransaction = state.sessionStatus !== 'I';
      }
      const mayYield = statement !== null && (state.readOnly || !state.inTransaction);
      if (mayYield && (now - state.since >= options.afterMs || spentItsCpu(client, state)))
        demote(client, state);
      else restore(client, state);
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
    watch(client, watchOptions = {}) {
      const internals = client as unknown as ClientInternals;
      if (watched.has(internals)) return;
      const state: Watched = {
        statement: null,
        since: performance.now(),
        readOnly: watchOptions.readOnly === true,
        sessionStatus: 'I',
        inTransaction: false,
        spentCpu: false,
      };
      watched.set(internals, state);
      internals.connection?.on('readyForQuery', (message) => {
        state.sessionStatus = message.status ?? 'I';
      });
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
