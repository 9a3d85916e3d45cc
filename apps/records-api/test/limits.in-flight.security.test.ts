import { createBase, type Harness, startHarness } from './harness';

/**
 * Capacity shared between keys: one key may hold a bounded number of requests in flight, across
 * every replica, and a database (and a key across its databases) a bounded number of SQL queries;
 * past them 429 with Retry-After at once, while other keys are served as usual.
 */

const PER_KEY = 4;
const SQL_PER_BASE = 2;

let h: Harness;
let replica: Harness;
let baseId: string;
let otherBaseId: string;
let hostile: string;
let neighbour: string;

async function createKey(body: object): Promise<string> {
  const created = await h.api.post('/api/v1/api-keys').set('Authorization', h.bearer(h.rootKey)).send(body);
  expect(created.status).toBe(201);
  return created.body.key;
}

/** A request that holds its place for `seconds`: a read-only query sleeping. */
const slowQuery = (api: Harness, key: string, base: string, seconds: number) =>
  api.api
    .post(`/api/v1/bases/${base}/sql`)
    .set('Authorization', api.bearer(key))
    .send({ query: `SELECT pg_sleep(${seconds})` });

/** The same, sent at once (supertest sends a request only once it is awaited). */
const hold = (api: Harness, key: string, base: string, seconds: number) =>
  slowQuery(api, key, base, seconds).then((answer) => answer);

/** Waits until `count` requests are running (they are admitted before they query). */
async function running(count: number): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const { rows } = await h.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(%' AND state = 'active'`,
    );
    if ((rows[0]?.n ?? 0) >= count) return;
    if (Date.now() > deadline) throw new Error(`only ${rows[0]?.n} of ${count} requests running`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Two replicas of one installation, sharing its database and its Redis. */
async function installation(options: {
  requestsInFlightPerKey: number;
  sqlInFlightPerBase: number;
  dbConnectionsPerKey?: number;
  acquireTimeoutMs?: number;
  dbSecondsPerMinutePerKey?: number;
}) {
  h = await startHarness(options);
  replica = await startHarness({ ...options, sameDatabaseAs: h });
  const tables = [{ name: 'People', fields: [{ name: 'Name', type: 'single_line_text' }] }];
  baseId = (await createBase(h, { name: 'Theirs', tables })).body.id;
  otherBaseId = (await createBase(h, { name: 'Theirs too', tables })).body.id;
  hostile = await createKey({ name: 'hostile', scopes: ['sql:read', 'records:read', 'schema:read'] });
  neighbour = await createKey({ name: 'neighbour', scopes: ['sql:read', 'records:read', 'schema:read'] });
  // Each database's query role exists before the timing below.
  for (const base of [baseId, otherBaseId]) await slowQuery(h, hostile, base, 0).expect(200);
}

async function closeInstallation(): Promise<void> {
  await replica.close();
  await h.close();
}

/** Until the key is admitted again: a place is given back as soon as its answer is sent or its client gone. */
async function admittedAgain(key: string): Promise<void> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const answer = await h.api.get('/api/v1/bases').set('Authorization', h.bearer(key));
    if (answer.status === 200) return;
    if (Date.now() > deadline) throw new Error(`still ${answer.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('requests of one key in flight', () => {
  beforeAll(() => installation({ requestsInFlightPerKey: PER_KEY, sqlInFlightPerBase: 1000 }));
  afterAll(closeInstallation);

  it('past the bound, across replicas: 429 with Retry-After, and other keys are served', async () => {
    // Two queries on each replica: the key's 4.
    const held = [
      hold(h, hostile, baseId, 1.5),
      hold(h, hostile, otherBaseId, 1.5),
      hold(replica, hostile, baseId, 1.5),
      hold(replica, hostile, otherBaseId, 1.5),
    ];
    await running(4);
    for (const api of [h, replica]) {
      const refused = await api.api.get('/api/v1/bases').set('Authorization', api.bearer(hostile));
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.body.error).toEqual({
        code: 'RATE_LIMITED',
        message: 'Too many requests of this API key in flight at once (at most 4); retry after 1 s',
      });
      await api.api.get('/api/v1/bases').set('Authorization', api.bearer(neighbour)).expect(200);
    }
    for (const answer of await Promise.all(held)) expect(answer.status).toBe(200);
    await admittedAgain(hostile);
  });

  it('gives the place back when the client goes away before its answer', async () => {
    const gone = Array.from({ length: PER_KEY }, () => {
      const request = slowQuery(h, hostile, baseId, 3).timeout(300);
      return request.then(
        () => 'answered',
        () => 'gone',
      );
    });
    expect(await Promise.all(gone)).toEqual(Array(PER_KEY).fill('gone'));
    await admittedAgain(hostile);
  });
});

describe('SQL queries in flight', () => {
  beforeAll(() => installation({ requestsInFlightPerKey: 1000, sqlInFlightPerBase: SQL_PER_BASE }));
  afterAll(closeInstallation);

  it("past a database's bound: 429 at once, while another key's database is served", async () => {
    const held = [hold(h, hostile, baseId, 1.5), hold(replica, hostile, baseId, 1.5)];
    await running(2);
    const started = Date.now();
    const refused = await slowQuery(h, neighbour, baseId, 0);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body.error.message).toBe(
      'Too many SQL queries of this base in flight at once (at most 2); retry after 1 s',
    );
    await slowQuery(replica, neighbour, otherBaseId, 0).expect(200);
    for (const answer of await Promise.all(held)) expect(answer.status).toBe(200);
    await slowQuery(h, neighbour, baseId, 0).expect(200);
  });

  it("past a key's bound across its databases: 429, so one key cannot take a process's connections", async () => {
    const held = [hold(h, hostile, baseId, 1.5), hold(h, hostile, otherBaseId, 1.5)];
    await running(2);
    const refused = await slowQuery(replica, hostile, otherBaseId, 0);
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toBe(
      'Too many SQL queries of this API key in flight at once (at most 2); retry after 1 s',
    );
    for (const answer of await Promise.all(held)) expect(answer.status).toBe(200);
  });
});

describe("a key's share of a process's database connections", () => {
  beforeAll(() =>
    installation({
      requestsInFlightPerKey: 1000,
      sqlInFlightPerBase: 1000,
      dbConnectionsPerKey: 2,
      acquireTimeoutMs: 1000,
    }),
  );
  afterAll(closeInstallation);

  const list = (key: string) =>
    h.api
      .post(`/api/v1/bases/${baseId}/tables/People/records/list`)
      .set('Authorization', h.bearer(key))
      .send({ limit: 10 });

  it("queues a key's requests past its share behind its own, and serves other keys at once", async () => {
    const held = [hold(h, hostile, baseId, 0.6), hold(h, hostile, otherBaseId, 0.6)];
    await running(2);
    const started = Date.now();
    const [queued, neighbours] = await Promise.all([
      list(hostile).then((answer) => ({ answer, ms: Date.now() - started })),
      list(neighbour).then((answer) => ({ answer, ms: Date.now() - started })),
    ]);
    expect(neighbours.answer.status).toBe(200);
    expect(neighbours.ms).toBeLessThan(400);
    // Served once one of the key's own statements ended.
    expect(queued.answer.status).toBe(200);
    expect(queued.ms).toBeGreaterThan(300);
    for (const answer of await Promise.all(held)) expect(answer.status).toBe(200);
  });

  it('answers 429 with Retry-After to a request that waited past the acquire timeout', async () => {
    const held = [hold(h, hostile, baseId, 2), hold(h, hostile, otherBaseId, 2)];
    await running(2);
    const refused = await list(hostile);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body.error).toEqual({
      code: 'RATE_LIMITED',
      message:
        "Too many slow requests at once: this API key's requests hold their share of database connections (2 at once); retry after 1 s",
    });
    await list(neighbour).expect(200);
    for (const answer of await Promise.all(held)) expect(answer.status).toBe(200);
  });
});

describe("a key's budget of database time", () => {
  // Half a second a minute: one query of 0.6 s spends it all and more.
  beforeAll(() =>
    installation({ requestsInFlightPerKey: 1000, sqlInFlightPerBase: 1000, dbSecondsPerMinutePerKey: 0.5 }),
  );
  afterAll(closeInstallation);

  it('refuses a key that spent it, on every replica, until it has refilled; other keys are served', async () => {
    await slowQuery(h, hostile, baseId, 0.6).expect(200);
    const deadline = Date.now() + 2000;
    let refused = await slowQuery(replica, hostile, otherBaseId, 0);
    // The spending is recorded as the connection is given back, just after the answer.
    while (refused.status !== 429 && Date.now() < deadline)
      refused = await slowQuery(replica, hostile, otherBaseId, 0);
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(
      /^This API key has used its database time \(0\.5 s a minute\); retry after \d+ s$/,
    );
    // 0.6 s and more (the connection's own statements) of a 0.5 s budget refilling at 0.5 s a
    // minute: 12 s or a little more until it may start again. How much more is how long the
    // connection's other statements took: up to 0.3 s on a machine the whole suite keeps busy.
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(12);
    expect(retryAfter).toBeLessThanOrEqual(48);
    const list = await h.api
      .post(`/api/v1/bases/${baseId}/tables/People/records/list`)
      .set('Authorization', h.bearer(hostile))
      .send({ limit: 1 });
    expect(list.status).toBe(429);
    await slowQuery(h, neighbour, baseId, 0).expect(200);
  });
});
