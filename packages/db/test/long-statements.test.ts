import { type ChildProcess, spawn } from 'node:child_process';
import pg from 'pg';
import { createDb } from '../src/client';
import { createLongStatements, type LongStatements } from '../src/long-statements';
import {
  backendPriority,
  createTestDatabase,
  NORMAL_PRIORITY,
  type TestDatabase,
  YIELDED_PRIORITY,
} from '../src/testing';

/**
 * Long statements yield the CPU: PostgreSQL runs on this machine and the tests run as root (as
 * `npm start` and CI do here), so the backends' real priorities are read while they work: the
 * process's niceness and, where the kernel schedules each session as a group (as here), the
 * niceness of the backend's group, the one that weighs against other processes.
 */

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** The priority of `pid`, sampled every 10 ms until `until` settles, and when (ms from the call). */
async function samplesWhile(
  pid: number,
  until: Promise<unknown>,
): Promise<{ atMs: number; priority: string }[]> {
  const began = performance.now();
  let settled = false;
  const done = until.finally(() => {
    settled = true;
  });
  const seen: { atMs: number; priority: string }[] = [];
  while (!settled) {
    seen.push({ atMs: performance.now() - began, priority: backendPriority(pid) });
    await sleep(10);
  }
  await done;
  return seen;
}

/** The priority of `pid`, sampled every 10 ms until `until` settles. */
async function nicenessWhile(pid: number, until: Promise<unknown>): Promise<string[]> {
  return (await samplesWhile(pid, until)).map((sample) => sample.priority);
}

async function connectedClient(): Promise<pg.Client & { processID: number }> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  return client as pg.Client & { processID: number };
}

let lockKeys = 0;

/**
 * A lock another session holds: `statement` waits for it, running (for the watch) until
 * `release()`, so a test decides when it ends however slow a loaded machine makes the clock.
 */
async function heldLock(): Promise<{ statement: string; release: () => Promise<void> }> {
  const holder = await connectedClient();
  lockKeys += 1;
  const key = 7_000 + lockKeys;
  await holder.query('SELECT pg_advisory_lock($1)', [key]);
  return { statement: `SELECT pg_advisory_xact_lock(${key})`, release: () => holder.end() };
}

/** Polls `check` every 10 ms until it holds or `withinMs` has passed; whether it held. */
async function eventually(check: () => boolean | Promise<boolean>, withinMs = 10_000): Promise<boolean> {
  for (const giveUpAt = Date.now() + withinMs; Date.now() < giveUpAt; await sleep(10)) {
    if (await check()) return true;
  }
  return check();
}

describe('a watched connection', () => {
  let client: pg.Client & { processID: number };
  let longStatements: LongStatements;
  const unavailable: string[] = [];

  beforeEach(async () => {
    client = await connectedClient();
    longStatements = createLongStatements({
      afterMs: 200,
      sweepMs: 20,
      onUnavailable: (reason) => unavailable.push(reason),
    });
    longStatements.watch(client);
  });
  afterEach(async () => {
    longStatements.close();
    await client.end();
  });

  it('runs a long statement at the lowest priority from afterMs on, and gives its backend its priority back', async () => {
    const samples = await samplesWhile(client.processID, client.query('SELECT pg_sleep(0.8)'));
    const seen = samples.map((sample) => sample.priority);
    expect(seen[0]).toBe(NORMAL_PRIORITY);
    expect(seen.filter((priority) => priority === YIELDED_PRIORITY).length).toBeGreaterThan(10);
    // Not before afterMs (200 ms): every sample taken in the statement's first 150 ms is at full
    // priority (by the clock, not by count: a loaded machine fires the 10 ms sampler late).
    const early = samples.filter((sample) => sample.atMs < 150);
    expect(early.length).toBeGreaterThan(0);
    expect(early.filter((sample) => sample.priority !== NORMAL_PRIORITY)).toEqual([]);
    expect(await eventually(() => backendPriority(client.processID) === NORMAL_PRIORITY)).toBe(true);
    // The next statement starts at full priority and is quick (a tenth of afterMs, so that a
    // loaded machine's late view of its end stays short of afterMs): it stays there.
    const quick = await nicenessWhile(client.processID, client.query('SELECT pg_sleep(0.02)'));
    expect(quick.every((priority) => priority === NORMAL_PRIORITY)).toBe(true);
    expect(unavailable).toEqual([]);
  });

  it('counts each statement on its own: quick statements back to back never yield', async () => {
    // Its own watch, far above each statement's 50 ms (a loaded machine delays the client's view
    // of a statement's end) and below their 1.5 s together, which a shared count would pass.
    const patient = await connectedClient();
    const watcher = createLongStatements({ afterMs: 500, sweepMs: 20 });
    watcher.watch(patient);
    try {
      const many = (async () => {
        for (let i = 0; i < 30; i += 1) await patient.query('SELECT pg_sleep(0.05)');
      })();
      const seen = await nicenessWhile(patient.processID, many);
      expect(seen.every((priority) => priority === NORMAL_PRIORITY)).toBe(true);
    } finally {
      watcher.close();
      await patient.end();
    }
  });

  it('leaves a long statement of a transaction at its priority: writers may wait on its locks', async () => {
    await client.query('BEGIN');
    const seen = await nicenessWhile(client.processID, client.query('SELECT pg_sleep(0.5)'));
    await client.query('COMMIT');
    expect(seen.every((priority) => priority === NORMAL_PRIORITY)).toBe(true);
    // Out of the transaction again, the same statement yields.
    const after = await nicenessWhile(client.processID, client.query('SELECT pg_sleep(0.5)'));
    expect(after).toContain(YIELDED_PRIORITY);
  });

  it('yields inside a transaction on a connection watched as read-only', async () => {
    const reader = await connectedClient();
    longStatements.watch(reader, { readOnly: true });
    try {
      await reader.query('BEGIN TRANSACTION READ ONLY');
      const seen = await nicenessWhile(reader.processID, reader.query('SELECT pg_sleep(0.5)'));
      await reader.query('ROLLBACK');
      expect(seen).toContain(YIELDED_PRIORITY);
    } finally {
      await reader.end();
    }
  });

  it('gives the priority back when closed during a long statement', async () => {
    const lock = await heldLock();
    const running = client.query(lock.statement);
    expect(await eventually(() => backendPriority(client.processID) === YIELDED_PRIORITY)).toBe(true);
    longStatements.close();
    expect(backendPriority(client.processID)).toBe(NORMAL_PRIORITY);
    await lock.release();
    await running;
  });
});

describe('a statement that spends its CPU', () => {
  let client: pg.Client & { processID: number };
  let longStatements: LongStatements;

  beforeEach(async () => {
    client = await connectedClient();
    // The clock's bound out of reach: only the CPU spent can make a statement yield here.
    longStatements = createLongStatements({ afterMs: 60_000, afterCpuMs: 30, sweepMs: 10 });
    longStatements.watch(client);
  });
  afterEach(async () => {
    longStatements.close();
    await client.end();
  });

  it('yields once it has spent afterCpuMs, long before afterMs, and its backend gets its priority back', async () => {
    // Far more work than any machine ends before the checks: cancelled once they are made, so
    // that a loaded machine, which gives a yielded backend almost no CPU, does not wait it out.
    const running = client.query('SELECT count(*) FROM generate_series(1, 1000000000)').then(
      () => 'ended',
      (error: { code?: string }) => error.code,
    );
    expect(await eventually(() => backendPriority(client.processID) === YIELDED_PRIORITY)).toBe(true);
    // It stays yielded while it runs.
    const seen = await nicenessWhile(client.processID, sleep(100));
    expect(seen.every((priority) => priority === YIELDED_PRIORITY)).toBe(true);
    const canceller = await connectedClient();
    try {
      await canceller.query('SELECT pg_cancel_backend($1)', [client.processID]);
    } finally {
      await canceller.end();
    }
    expect(await running).toBe('57014');
    expect(await eventually(() => backendPriority(client.processID) === NORMAL_PRIORITY)).toBe(true);
  });

  it('keeps its priority while it waits rather than works, however long', async () => {
    const seen = await nicenessWhile(client.processID, client.query('SELECT pg_sleep(0.5)'));
    expect(seen.every((priority) => priority === NORMAL_PRIORITY)).toBe(true);
  });
});

describe('a process id that is not the connection’s own backend on this machine', () => {
  let stranger: ChildProcess;
  afterEach(() => {
    stranger.kill();
  });

  it('is never touched, as when PostgreSQL runs elsewhere and its ids mean other processes here', async () => {
    // Detached, it leads a session and so a scheduling group of its own, as a backend does.
    stranger = spawn('sleep', ['30'], { detached: true });
    const client = await connectedClient();
    const longStatements = createLongStatements({ afterMs: 100, sweepMs: 20 });
    // The client as a remote server would have it: its backend's id is a process of ours.
    const realPid = client.processID;
    Object.defineProperty(client, 'processID', { value: stranger.pid, configurable: true });
    longStatements.watch(client);
    try {
      const seen = await nicenessWhile(stranger.pid!, client.query('SELECT pg_sleep(0.5)'));
      expect(seen.every((priority) => priority === NORMAL_PRIORITY)).toBe(true);
      expect(backendPriority(realPid)).toBe(NORMAL_PRIORITY);
    } finally {
      longStatements.close();
      await client.end();
    }
  });
});

it("a pool's long statements yield when createDb is given longStatementYieldMs, and every pooled connection is watched", async () => {
  const db = createDb(database.url, { maxConnections: 2, longStatementYieldMs: 150 });
  try {
    const pids = await Promise.all(
      [0, 1].map(async () => {
        const client = await db.pool.connect();
        const pid = (client as unknown as { processID: number }).processID;
        const seen = await nicenessWhile(pid, client.query('SELECT pg_sleep(0.5)'));
        client.release();
        return { pid, seen };
      }),
    );
    for (const { pid, seen } of pids) {
      expect(seen).toContain(YIELDED_PRIORITY);
      expect(await eventually(() => backendPriority(pid) === NORMAL_PRIORITY)).toBe(true);
    }
    // Prisma's statements run on the same pool, watched alike. Its statement waits for a lock until
    // the test has seen it yield: its promise runs once awaited, and its first query loads its
    // compiler, which takes seconds on a loaded machine.
    const lock = await heldLock();
    const prismaWait = db.prisma.$executeRawUnsafe(lock.statement).then(() => undefined);
    let pid: number | undefined;
    const running = await eventually(async () => {
      const { rows } = await db.pool.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE query = $1 AND state = 'active'",
        [lock.statement],
      );
      pid = rows[0]?.pid;
      return pid !== undefined;
    });
    expect(running).toBe(true);
    expect(await eventually(() => backendPriority(pid!) === YIELDED_PRIORITY)).toBe(true);
    await lock.release();
    await prismaWait;
  } finally {
    await db.close();
  }
});
