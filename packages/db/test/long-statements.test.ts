import { type ChildProcess, spawn } from 'node:child_process';
import { getPriority } from 'node:os';
import pg from 'pg';
import { createDb } from '../src/client';
import { createLongStatements, type LongStatements, YIELDED_NICENESS } from '../src/long-statements';
import { createTestDatabase, type TestDatabase } from '../src/testing';

/**
 * Long statements yield the CPU: PostgreSQL runs on this machine and the tests run as root (as
 * `npm start` and CI do here), so the backends' real priorities are read while they work.
 */

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** The niceness of `pid`, sampled every 10 ms until `until` settles. */
async function nicenessWhile(pid: number, until: Promise<unknown>): Promise<number[]> {
  let settled = false;
  const done = until.finally(() => {
    settled = true;
  });
  const seen: number[] = [];
  while (!settled) {
    seen.push(getPriority(pid));
    await sleep(10);
  }
  await done;
  return seen;
}

async function connectedClient(): Promise<pg.Client & { processID: number }> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  return client as pg.Client & { processID: number };
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
    const seen = await nicenessWhile(client.processID, client.query('SELECT pg_sleep(0.8)'));
    expect(seen[0]).toBe(0);
    expect(seen.filter((niceness) => niceness === YIELDED_NICENESS).length).toBeGreaterThan(10);
    // Not before afterMs (200 ms, sampled every 10 ms): the first ~15 samples are at 0.
    expect(seen.slice(0, 15).every((niceness) => niceness === 0)).toBe(true);
    await sleep(60);
    expect(getPriority(client.processID)).toBe(0);
    // The next statement starts at full priority and is quick: it stays there.
    const quick = await nicenessWhile(client.processID, client.query('SELECT pg_sleep(0.1)'));
    expect(quick.every((niceness) => niceness === 0)).toBe(true);
    expect(unavailable).toEqual([]);
  });

  it('counts each statement on its own: quick statements back to back never yield', async () => {
    const many = (async () => {
      for (let i = 0; i < 12; i += 1) await client.query('SELECT pg_sleep(0.05)');
    })();
    const seen = await nicenessWhile(client.processID, many);
    expect(seen.every((niceness) => niceness === 0)).toBe(true);
  });

  it('gives the priority back when closed during a long statement', async () => {
    const running = client.query('SELECT pg_sleep(0.6)');
    await sleep(350);
    expect(getPriority(client.processID)).toBe(YIELDED_NICENESS);
    longStatements.close();
    expect(getPriority(client.processID)).toBe(0);
    await running;
  });
});

describe('a process id that is not the connection’s own backend on this machine', () => {
  let stranger: ChildProcess;
  afterEach(() => {
    stranger.kill();
  });

  it('is never touched, as when PostgreSQL runs elsewhere and its ids mean other processes here', async () => {
    stranger = spawn('sleep', ['30']);
    const client = await connectedClient();
    const longStatements = createLongStatements({ afterMs: 100, sweepMs: 20 });
    // The client as a remote server would have it: its backend's id is a process of ours.
    const realPid = client.processID;
    Object.defineProperty(client, 'processID', { value: stranger.pid, configurable: true });
    longStatements.watch(client);
    try {
      const seen = await nicenessWhile(stranger.pid!, client.query('SELECT pg_sleep(0.5)'));
      expect(seen.every((niceness) => niceness === 0)).toBe(true);
      expect(getPriority(realPid)).toBe(0);
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
      expect(seen).toContain(YIELDED_NICENESS);
      await sleep(100);
      expect(getPriority(pid)).toBe(0);
    }
    // Prisma's statements run on the same pool, watched alike (its promise runs once awaited, and
    // its first query loads its compiler).
    const prismaSleep = db.prisma.$executeRawUnsafe('SELECT pg_sleep(2)').then(() => undefined);
    let pid: number | undefined;
    for (const giveUpAt = Date.now() + 1500; pid === undefined && Date.now() < giveUpAt; await sleep(20)) {
      const { rows } = await db.pool.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(2)' AND state = 'active'",
      );
      pid = rows[0]?.pid;
    }
    expect(pid).toBeDefined();
    await sleep(300);
    expect(getPriority(pid!)).toBe(YIELDED_NICENESS);
    await prismaSleep;
  } finally {
    await db.close();
  }
});
