import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type pg from 'pg';
import { createBase, databaseSnapshot, type Harness, schemaNameOf, startHarness } from './harness';

/**
 * No request holds the database without bound: statements time out, a request whose client went
 * away stops its statements, a full pool answers 503 instead of queueing forever, and an address
 * that keeps presenting bad keys is turned away before each one costs a lookup.
 */

const tableSpec = { name: 'T', fields: [{ name: 'Name', type: 'single_line_text' }] };

async function baseWithTable(h: Harness) {
  const base = await createBase(h, { name: 'Limits', tables: [tableSpec] });
  return {
    baseId: base.body.id as string,
    physical: `"${schemaNameOf(base.body.id)}"."${base.body.tables[0].id}"`,
  };
}

/** Holds an exclusive lock on a table from outside the app's pool, so its statements wait. */
async function lockTable(h: Harness, physical: string): Promise<() => Promise<void>> {
  const { Client } = await import('pg');
  const client: pg.Client = new Client({
    connectionString: (h.db.pool.options as { connectionString: string }).connectionString,
  });
  await client.connect();
  await client.query('BEGIN');
  await client.query(`LOCK TABLE ${physical} IN ACCESS EXCLUSIVE MODE`);
  return async () => {
    await client.query('ROLLBACK');
    await client.end();
  };
}

async function waitingOnLocks(h: Harness): Promise<number> {
  const result = await h.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
  );
  return result.rows[0]!.n;
}

async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The app on a real port, for tests that need a connection to close or to time. */
async function listeningHarness(): Promise<{ h: Harness; server: Server }> {
  const h = await startHarness();
  const server = h.app.listen(0, '127.0.0.1');
  await new Promise((done) => server.once('listening', done));
  return { h, server };
}

describe('statement timeout', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ statementTimeoutMs: 300 });
  });
  afterAll(() => h.close());

  it('stops a read past the limit and answers 503 with a message saying so', async () => {
    const { baseId, physical } = await baseWithTable(h);
    const unlock = await lockTable(h, physical);
    try {
      const response = await h.api
        .post(`/api/v1/bases/${baseId}/tables/T/records/list`)
        .set('Authorization', h.bearer(h.rootKey))
        .send({ filter: { field: 'Name', contains: 'x' } });
      expect(response.status).toBe(503);
      expect(response.body.error).toEqual({
        code: 'SERVICE_UNAVAILABLE',
        message: expect.stringMatching(/time limit/),
      });
    } finally {
      await unlock();
    }
  });

  it('stops a write past the limit, writing nothing', async () => {
    const { baseId, physical } = await baseWithTable(h);
    const before = await databaseSnapshot(h.db);
    const unlock = await lockTable(h, physical);
    try {
      await h.api
        .post(`/api/v1/bases/${baseId}/tables/T/records/bulk`)
        .set('Authorization', h.bearer(h.rootKey))
        .send({ records: [{ Name: 'a' }, { Name: 'b' }] })
        .expect(503);
    } finally {
      await unlock();
    }
    expect(await databaseSnapshot(h.db)).toEqual(before);
  });
});

describe('a client that goes away', () => {
  let h: Harness;
  let server: Server;
  beforeAll(async () => {
    ({ h, server } = await listeningHarness());
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
    await h.close();
  });

  it('has its running statement cancelled, freeing the connection at once', async () => {
    const { baseId, physical } = await baseWithTable(h);
    const unlock = await lockTable(h, physical);
    try {
      const { port } = server.address() as AddressInfo;
      const body = JSON.stringify({ filter: { field: 'Name', contains: 'x' } });
      const request = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `/api/v1/bases/${baseId}/tables/T/records/list`,
        headers: {
          authorization: h.bearer(h.rootKey),
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      });
      request.on('error', () => {});
      request.end(body);
      await eventually(async () => (await waitingOnLocks(h)) === 1, 'the list to wait on the lock');
      request.destroy();
      // The lock is still held: only a cancel can end the wait.
      await eventually(async () => (await waitingOnLocks(h)) === 0, 'the statement to be cancelled');
    } finally {
      await unlock();
    }
  });
});

describe('a full pool', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ maxConnections: 2, acquireTimeoutMs: 200 });
  });
  afterAll(() => h.close());

  it('answers 503 with Retry-After instead of waiting forever for a connection', async () => {
    const { baseId } = await baseWithTable(h);
    const held = [await h.db.pool.connect(), await h.db.pool.connect()];
    try {
      const response = await h.api
        .post(`/api/v1/bases/${baseId}/tables/T/records/list`)
        .set('Authorization', h.bearer(h.rootKey));
      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBe('1');
      expect(response.body.error.message).toMatch(/busy/);
    } finally {
      for (const client of held) client.release();
    }
    await h.api
      .post(`/api/v1/bases/${baseId}/tables/T/records/list`)
      .set('Authorization', h.bearer(h.rootKey))
      .expect(200);
  });
});

describe('failed authentications', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ authFailureBurst: 5 });
  });
  afterAll(() => h.close());

  it('are throttled per address: past the burst, 429 with Retry-After before any lookup', async () => {
    const badKey = `Bearer rb_${'x'.repeat(40)}`;
    for (let attempt = 0; attempt < 5; attempt += 1) {
      await h.api.get('/api/v1/bases').set('Authorization', badKey).expect(401);
    }
    const throttled = await h.api.get('/api/v1/bases').set('Authorization', badKey).expect(429);
    expect(throttled.body.error.code).toBe('RATE_LIMITED');
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    // Until the address has waited, even a key that would pass is not looked at.
    await h.api.get('/api/v1/bases').set('Authorization', h.bearer(h.rootKey)).expect(429);
  });

  it('do not throttle another address', async () => {
    const other = await h.api
      .get('/api/v1/bases')
      .set('X-Forwarded-For', '203.0.113.7')
      .set('Authorization', h.bearer(h.rootKey));
    // Behind a trusted (loopback) proxy the forwarded address is the client's.
    expect(other.status).toBe(200);
  });
});

describe('the event loop', () => {
  let h: Harness;
  let server: Server;
  beforeAll(async () => {
    ({ h, server } = await listeningHarness());
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
    await h.close();
  });

  it('is not stalled by an email built to make the pattern backtrack: /healthz answers within 100 ms meanwhile', async () => {
    const base = await createBase(h, {
      name: 'ReDoS',
      tables: [{ name: 'T', fields: [{ name: 'Mail', type: 'email' }] }],
    });
    const { port } = server.address() as AddressInfo;
    const origin = `http://127.0.0.1:${port}`;
    const hostile = `a@${'a.'.repeat(40_000)}@`;
    const post = () =>
      fetch(`${origin}/api/v1/bases/${base.body.id}/tables/T/records/bulk`, {
        method: 'POST',
        headers: { authorization: h.bearer(h.rootKey), 'content-type': 'application/json' },
        body: JSON.stringify({ records: Array.from({ length: 5 }, () => ({ Mail: hostile })) }),
      });
    const health = async () => {
      const started = performance.now();
      const response = await fetch(`${origin}/healthz`);
      await response.arrayBuffer();
      return { status: response.status, ms: performance.now() - started };
    };
    // The server runs in this process: the event loop's delay is the stall a request causes.
    const attempt = async () => {
      const loopDelay = monitorEventLoopDelay({ resolution: 10 });
      loopDelay.enable();
      const writes = Array.from({ length: 5 }, post);
      const probes: { status: number; ms: number }[] = [];
      for (let i = 0; i < 10; i += 1) probes.push(await health());
      const answers = await Promise.all(writes);
      loopDelay.disable();
      expect(answers.map((answer) => answer.status)).toEqual([400, 400, 400, 400, 400]);
      expect(probes.every((probe) => probe.status === 200)).toBe(true);
      const sorted = probes.map((probe) => probe.ms).sort((a, b) => a - b);
      return { medianMs: sorted[Math.floor(sorted.length / 2)]!, loopDelayMs: loopDelay.max / 1e6 };
    };
    // Before the fix each value held the loop for seconds, on every attempt. The median and the
    // loop's own delay stand firm when two cores are shared with other test files, but a machine
    // busy with a whole CI run can take the process off its core for 100 ms and more once: a
    // second and third attempt tell such a pause from a stall the values cause.
    let measured = await attempt();
    for (let retry = 0; retry < 2 && (measured.medianMs >= 100 || measured.loopDelayMs >= 100); retry += 1) {
      measured = await attempt();
    }
    expect(measured.medianMs).toBeLessThan(100);
    expect(measured.loopDelayMs).toBeLessThan(100);
  });
});
