import { createHash, randomUUID } from 'node:crypto';
import { apiKeyScopes } from '@recordbase/contracts/api-keys';
import { createInFlightLimiter, requestsOfKey } from '@recordbase/server-kit/in-flight';
import { createRateLimiter } from '@recordbase/server-kit/rate-limit';
import { Redis } from 'ioredis';
import { operations } from '../src/http/openapi/document';
import { type Operation, scopesOpening } from '../src/http/openapi/operation';
import { createBase, databaseSnapshot, type Harness, startHarness } from './harness';
import {
  contractOutcome,
  describeOperation,
  exampleBody,
  type FixtureIds,
  fillPath,
  type KeyCase,
  keyCases,
  MALFORMED_AUTHORIZATIONS,
  refusedAsExpected,
  servedRoutes,
} from './route-table';

/**
 * The authorization matrix of records-api: every route of the OpenAPI document that
 * records-api serves, called with each of the five keys of `keyCases`, answers exactly what the
 * contract says and changes nothing. Path parameters name real fixtures and bodies are the
 * document's examples (valid against the route's schema), so each refusal is about the key alone.
 * The first test holds the list to the app's own routes, so a new route cannot be left out.
 */

const served = operations.filter((op) => op.servers === undefined);

let h: Harness;
let root: string;
let ids: FixtureIds;
let otherDatabaseId: string;
const authorization = new Map<KeyCase, (op: Operation) => string | undefined>();

async function createKey(body: object): Promise<{ id: string; authorization: string }> {
  const created = await h.api.post('/api/v1/api-keys').set('Authorization', root).send(body).expect(201);
  return { id: created.body.id, authorization: h.bearer(created.body.key) };
}

function exampleOf(operationId: string): object {
  const op = operations.find((candidate) => candidate.operationId === operationId);
  if (!op?.bodyExample) throw new Error(`the document has no example for ${operationId}`);
  return op.bodyExample as object;
}

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
  // The document's own example database (Sales: a Deals table of Name, Status, Amount), so its
  // example bodies fit the fixtures.
  const base = await createBase(h, exampleOf('createDatabase'));
  const table = base.body.tables[0];
  const databaseId: string = base.body.id;
  const status = table.fields.find((field: { name: string }) => field.name === 'Status');
  const api = (path: string) => `/api/v1/bases/${databaseId}${path}`;
  const record = await h.api
    .post(api(`/tables/${table.id}/records`))
    .set('Authorization', root)
    .send(exampleOf('createRecord'))
    .expect(201);
  const webhook = await h.api
    .post(api('/webhooks'))
    .set('Authorization', root)
    .send({ url: 'https://example.com/hook', events: ['record.created'], tableId: table.id })
    .expect(201);
  const view = await h.api
    .post(api(`/tables/${table.id}/views`))
    .set('Authorization', root)
    .send({ name: 'Matrix', sort: [{ field: 'Amount', direction: 'desc' }] })
    .expect(201);
  const delivery = await h.db.pool.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (event_id, webhook_id, event_type, status, attempts, next_attempt_at)
     VALUES ($1, $2, 'record.created', 'failed', 1, NULL) RETURNING id::text AS id`,
    [randomUUID(), webhook.body.id],
  );
  // An import file as upload-service records one (the key the document's example names), and an
  // import of it, which stays queued: no worker runs here.
  const s3Key = `imports/${databaseId}/deals.csv`;
  const csv = Buffer.from('Name,Amount\nAcme,10\n');
  await h.db.prisma.uploadedFile.create({
    data: {
      id: randomUUID(),
      key: s3Key,
      kind: 'import',
      fileName: 'deals.csv',
      size: BigInt(csv.length),
      mimeType: 'text/csv',
      sha256: createHash('sha256').update(csv).digest('hex'),
      apiKeyId: null,
    },
  });
  const started = await h.api
    .post(api('/imports'))
    .set('Authorization', root)
    .send({ s3Key, tableName: 'Imported' })
    .expect(202);
  const spare = await createKey({ name: 'spare', scopes: ['records:read'] });
  const revision = await h.db.pool.query<{ id: string }>(
    `SELECT event_seq || '-' || position AS id FROM record_revisions WHERE record_id = $1::uuid`,
    [record.body.id],
  );
  ids = {
    databaseId,
    tableId: table.id,
    fieldId: status.id,
    recordId: record.body.id,
    revisionId: revision.rows[0]!.id,
    webhookId: String(webhook.body.id),
    viewId: view.body.id,
    deliveryId: delivery.rows[0]!.id,
    importId: started.body.id,
    apiKeyId: spare.id,
  };

  // Used once before it is revoked, so that a process keeping keys has this one at hand.
  const revoked = await createKey({ name: 'revoked', scopes: apiKeyScopes });
  await h.api.get('/api/v1/bases').set('Authorization', revoked.authorization).expect(200);
  await h.api.delete(`/api/v1/api-keys/${revoked.id}`).set('Authorization', root).expect(200);
  const other = await createBase(h, { name: 'Other' });
  otherDatabaseId = other.body.id;
  const otherDatabase = await createKey({
    name: 'other database',
    scopes: apiKeyScopes,
    databaseIds: [otherDatabaseId],
  });
  // Every scope but the route's own (or but each of those that would open it), on every database.
  const lacking = new Map<string, string>();
  for (const op of served) {
    const opening = scopesOpening(op.access);
    const name = `all but ${opening.join(' and ')}`;
    if (opening.length === 0 || lacking.has(name)) continue;
    const key = await createKey({ name, scopes: apiKeyScopes.filter((s) => !opening.includes(s)) });
    lacking.set(name, key.authorization);
  }
  authorization.set('no key', () => undefined);
  authorization.set('a revoked key', () => revoked.authorization);
  authorization.set('a key of another database', () => otherDatabase.authorization);
  // A root-only route lacks nothing a key can have: a key with every scope is still not root.
  const allScopes = await createKey({ name: 'all scopes', scopes: apiKeyScopes });
  authorization.set("a key lacking the route's scope", (op) =>
    op.access === 'root' || op.access === 'public'
      ? allScopes.authorization
      : lacking.get(`all but ${scopesOpening(op.access).join(' and ')}`),
  );
});
afterAll(() => h.close());

function send(op: Operation, key: string | undefined) {
  const path = fillPath(op, ids);
  let request = h.api[op.method](path);
  if (key !== undefined) request = request.set('Authorization', key);
  const body = exampleBody(op, ids);
  return body === undefined ? request : request.send(body as object);
}

test('the matrix holds every route records-api serves, and only those', () => {
  const tested = served.map((op) => `${op.method.toUpperCase()} ${op.path}`).sort();
  expect(servedRoutes(h.app).sort()).toEqual(tested);
});

test('every route can be filled: its path parameters by fixtures, its body by a valid example', () => {
  for (const op of served) {
    expect(() => fillPath(op, ids)).not.toThrow();
    expect(() => exampleBody(op, ids)).not.toThrow();
  }
});

/** What a route answers a key the contract admits there (it is not a refusal of that key). */
async function expectAdmitted(
  op: Operation,
  keyCase: KeyCase,
  response: { status: number; body: { bases?: { id: string }[] } },
) {
  if (op.access === 'public') {
    // Public routes ignore keys, good or bad: the same answer for all five.
    expect(response.status).toBe(200);
    return;
  }
  const listsBases = op.operationId === 'listDatabases' || op.operationId === 'airtableListBases';
  if (listsBases && keyCase === 'a key of another database') {
    // A database outside the key's reach is not listed, as if it did not exist (in both APIs).
    expect(response.status).toBe(200);
    expect(response.body.bases?.map((base) => base.id)).toEqual([otherDatabaseId]);
    return;
  }
  throw new Error(`${describeOperation(op)} admits ${keyCase}: the matrix does not say what it answers`);
}

describe.each(served.map((op) => [describeOperation(op), op] as const))('%s', (_name, op) => {
  test('answers each of the five keys as the contract says and changes nothing', async () => {
    const before = await databaseSnapshot(h.db);
    for (const keyCase of keyCases) {
      const keys =
        keyCase === 'a malformed key' ? MALFORMED_AUTHORIZATIONS : [authorization.get(keyCase)!(op)];
      for (const key of keys) {
        const response = await send(op, key);
        if (!refusedAsExpected(op, keyCase, key, response)) await expectAdmitted(op, keyCase, response);
        expect({ keyCase, snapshot: await databaseSnapshot(h.db) }).toEqual({ keyCase, snapshot: before });
      }
    }
  });
});

/**
 * The capacity bounds, route by route: a key past its rate limit, or with every place of its
 * requests in flight taken (by its requests on another replica, here held directly in Redis), is
 * 429 with Retry-After on every route that takes a key, before anything is read or written.
 */
describe('past the per-key rate limit and the bound on requests in flight', () => {
  const rate = { perSecond: 0.01, burst: 1 };
  let bounded: Harness;
  let redis: Redis;
  const keyed = served.filter((op) => op.access !== 'public');

  beforeAll(async () => {
    bounded = await startHarness({
      sameDatabaseAs: h,
      ratePerSecond: rate.perSecond,
      rateBurst: rate.burst,
      requestsInFlightPerKey: 2,
    });
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { keyPrefix: bounded.redisPrefix });
  });
  afterAll(async () => {
    redis.disconnect();
    await bounded.close();
  });

  async function expectRefused(op: Operation, key: string) {
    const before = await databaseSnapshot(h.db);
    const path = fillPath(op, ids);
    const body = exampleBody(op, ids);
    const request = bounded.api[op.method](path).set('Authorization', key);
    const response = await (body === undefined ? request : request.send(body as object));
    expect({ route: describeOperation(op), ...contractOutcome(op, response) }).toEqual({
      route: describeOperation(op),
      status: 429,
      code: 'RATE_LIMITED',
    });
    expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(await databaseSnapshot(h.db)).toEqual(before);
  }

  test.each(keyed.map((op) => [describeOperation(op), op] as const))(
    '%s answers 429 to a key past its rate limit and to one with no place in flight, changing nothing',
    async (_name, op) => {
      const spent = await createKey({ name: 'spent', scopes: apiKeyScopes });
      // Its one token spent elsewhere: every replica shares the bucket.
      await createRateLimiter(redis, rate)(spent.id);
      await expectRefused(op, spent.authorization);

      const busy = await createKey({ name: 'busy', scopes: apiKeyScopes });
      const elsewhere = createInFlightLimiter(redis);
      const held = await Promise.all([1, 2].map(() => elsewhere.admit([requestsOfKey(busy.id, 2)])));
      try {
        await expectRefused(op, busy.authorization);
      } finally {
        for (const admission of held) if (admission.admitted) admission.lease.release();
        elsewhere.close();
      }
    },
  );
});
