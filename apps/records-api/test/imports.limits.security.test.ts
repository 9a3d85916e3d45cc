import { createHash, randomUUID } from 'node:crypto';
import { MAX_OPEN_IMPORTS_PER_KEY } from '@recordbase/domain/imports';
import { createTimeBudget } from '@recordbase/server-kit/time-budget';
import { Redis } from 'ioredis';
import { createBase, type Harness, startHarness } from './harness';
import { type ImportFixture, importFixture } from './import-fixture';

/**
 * The import worker reads one file at a time for everyone: one key may have only a few imports
 * queued or running, so that its files (a tenant's bombs among them) cannot stand in front of
 * every other key's. No worker runs here: what is started stays queued.
 */

let h: Harness;
let databaseId: string;

async function createKey(name: string): Promise<{ id: string; bearer: string }> {
  const created = await h.api
    .post('/api/v1/api-keys')
    .set('Authorization', h.bearer(h.rootKey))
    .send({ name, scopes: ['records:write', 'schema:write', 'records:read'] })
    .expect(201);
  return { id: created.body.id, bearer: h.bearer(created.body.key) };
}

/** An import file as upload-service records one, uploaded by `apiKeyId`. */
async function uploaded(apiKeyId: string): Promise<string> {
  const key = `imports/${randomUUID()}/people.csv`;
  const csv = Buffer.from('Name\nAda\n');
  await h.db.prisma.uploadedFile.create({
    data: {
      id: randomUUID(),
      key,
      kind: 'import',
      fileName: 'people.csv',
      size: BigInt(csv.length),
      mimeType: 'text/csv',
      sha256: createHash('sha256').update(csv).digest('hex'),
      apiKeyId,
    },
  });
  return key;
}

const start = async (key: { id: string; bearer: string }) =>
  h.api
    .post(`/api/v1/bases/${databaseId}/imports`)
    .set('Authorization', key.bearer)
    .send({ s3Key: await uploaded(key.id), tableName: `People ${randomUUID()}` });

beforeAll(async () => {
  h = await startHarness();
  databaseId = (await createBase(h, { name: 'Imports' })).body.id;
});
afterAll(() => h.close());

it("refuses a key's import past the few it may have open, until one has ended; others are served", async () => {
  const busy = await createKey('busy');
  const started: string[] = [];
  for (let i = 0; i < MAX_OPEN_IMPORTS_PER_KEY; i += 1)
    started.push((await start(busy).then((r) => r.body)).id);
  expect(started.every(Boolean)).toBe(true);
  const refused = await start(busy);
  expect(refused.status).toBe(429);
  expect(refused.headers['retry-after']).toBe('5');
  expect(refused.body.error.message).toBe(
    `This API key has ${MAX_OPEN_IMPORTS_PER_KEY} imports queued or running, the most it may have at once; start this one when one of them has finished`,
  );
  const before = await h.db.prisma.import.count();
  expect((await start(busy)).status).toBe(429);
  expect(await h.db.prisma.import.count()).toBe(before);
  // Another key is not behind them.
  await start(await createKey('other')).then((answer) => expect(answer.status).toBe(202));
  // An import that has ended frees its place.
  await h.api
    .delete(`/api/v1/bases/${databaseId}/imports/${started[0]}`)
    .set('Authorization', busy.bearer)
    .expect(200);
  expect((await start(busy)).status).toBe(202);
});

it('counts starts made at the same moment against each other', async () => {
  const racing = await createKey('racing');
  const answers = await Promise.all(Array.from({ length: 8 }, () => start(racing)));
  const statuses = answers.map((answer) => answer.status).sort();
  expect(statuses).toEqual([
    ...Array(MAX_OPEN_IMPORTS_PER_KEY).fill(202),
    ...Array(8 - MAX_OPEN_IMPORTS_PER_KEY).fill(429),
  ]);
});

describe("a key's budget of the worker's time", () => {
  let timed: Harness;
  let fixture: ImportFixture;
  let budgets: Redis;

  beforeAll(async () => {
    // A tenth of a second a minute: any run spends it all.
    timed = await startHarness({ importSecondsPerMinutePerKey: 0.1 });
    fixture = await importFixture(timed);
    budgets = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { keyPrefix: timed.redisPrefix });
    fixture.startWorker(
      {},
      { importTime: createTimeBudget(budgets, { kind: 'import', secondsPerMinute: 0.1 }) },
    );
  });
  afterAll(async () => {
    await fixture.close();
    budgets.disconnect();
    await timed.close();
  });

  it('refuses to start the imports of a key whose runs took it, with the wait; others are served', async () => {
    const base = (await createBase(timed, { name: 'Timed' })).body.id;
    const keyOf = async (name: string) => {
      const created = await timed.api
        .post('/api/v1/api-keys')
        .set('Authorization', timed.bearer(timed.rootKey))
        .send({ name, scopes: ['records:write', 'schema:write', 'records:read'] })
        .expect(201);
      return { id: created.body.id as string, bearer: timed.bearer(created.body.key) };
    };
    const startFor = async (key: { id: string; bearer: string }) =>
      timed.api
        .post(`/api/v1/bases/${base}/imports`)
        .set('Authorization', key.bearer)
        .send({
          s3Key: await fixture.upload('rows.csv', 'Name\nAda\nGrace\n', undefined, key.id),
          tableName: `T ${randomUUID()}`,
        });
    const busy = await keyOf('busy');
    const first = await startFor(busy);
    expect(first.status).toBe(202);
    expect((await fixture.finished(base, first.body.id)).status).toBe('succeeded');
    // The run's time is spent once it has ended, just after its status: an import started in
    // between is accepted, and is let finish before the next try, so that the key's bound of
    // imports queued at once is never what refuses it.
    const deadline = Date.now() + 10_000;
    let refused = await startFor(busy);
    while (refused.status === 202 && Date.now() < deadline) {
      expect((await fixture.finished(base, refused.body.id)).status).toBe('succeeded');
      refused = await startFor(busy);
    }
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(
      /^This API key has used its import time \(0\.1 s a minute\); retry after \d+ s$/,
    );
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await startFor(await keyOf('other'))).status).toBe(202);
  });
});
