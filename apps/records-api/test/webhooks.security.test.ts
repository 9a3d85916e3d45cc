import { decryptSecret } from '@recordbase/db';
import { createBase, type Harness, startHarness } from './harness';

let h: Harness;
let root: string;
let baseA: string;
let baseB: string;

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
  const tables = [{ name: 'Tasks', fields: [{ name: 'Name', type: 'single_line_text' }] }];
  baseA = (await createBase(h, { name: 'A', tables })).body.id;
  baseB = (await createBase(h, { name: 'B', tables })).body.id;
});
afterAll(() => h.close());

const url = (databaseId: string, path = '') => `/api/v1/bases/${databaseId}/webhooks${path}`;
const valid = { url: 'https://example.com/hook', events: ['record.created'] };

async function createKey(body: object): Promise<string> {
  const response = await h.api.post('/api/v1/api-keys').set('Authorization', root).send(body).expect(201);
  return h.bearer(response.body.key);
}

async function createWebhook(databaseId: string, authorization = root) {
  const response = await h.api
    .post(url(databaseId))
    .set('Authorization', authorization)
    .send(valid)
    .expect(201);
  return response.body as { id: number; secret: string };
}

async function insertDelivery(webhookId: number): Promise<string> {
  const result = await h.db.pool.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (event_id, webhook_id, event_type, status)
     VALUES (gen_random_uuid(), $1, 'record.created', 'failed') RETURNING id::text AS id`,
    [webhookId],
  );
  return result.rows[0]!.id;
}

/** Every webhook route, addressed at one database and webhook. */
function everyRoute(databaseId: string, webhookId: number | string, deliveryId: string) {
  return [
    { method: 'post', path: url(databaseId), body: valid },
    { method: 'get', path: url(databaseId) },
    { method: 'get', path: url(databaseId, `/${webhookId}`) },
    { method: 'patch', path: url(databaseId, `/${webhookId}`), body: { active: false } },
    { method: 'delete', path: url(databaseId, `/${webhookId}`) },
    { method: 'get', path: url(databaseId, `/${webhookId}/deliveries`) },
    { method: 'post', path: url(databaseId, `/${webhookId}/deliveries/${deliveryId}/retry`) },
  ] as const;
}

function call(route: ReturnType<typeof everyRoute>[number], authorization?: string) {
  const request = h.api[route.method](route.path);
  if (authorization !== undefined) request.set('Authorization', authorization);
  return 'body' in route ? request.send(route.body) : request;
}

describe('the signing secret', () => {
  it('is shown once: never in list, get or patch answers', async () => {
    const created = await createWebhook(baseA);
    const answers = [
      await h.api.get(url(baseA)).set('Authorization', root).expect(200),
      await h.api
        .get(url(baseA, `/${created.id}`))
        .set('Authorization', root)
        .expect(200),
      await h.api
        .patch(url(baseA, `/${created.id}`))
        .set('Authorization', root)
        .send({ events: ['record.updated'] })
        .expect(200),
      await h.api
        .get(url(baseA, `/${created.id}/deliveries`))
        .set('Authorization', root)
        .expect(200),
    ];
    for (const answer of answers) {
      expect(answer.text).not.toContain(created.secret);
      expect(answer.text).not.toContain(created.secret.slice('whsec_'.length));
      expect(answer.text).not.toContain('secret');
    }
  });

  it('is stored only encrypted with WEBHOOK_SECRET_KEY', async () => {
    const created = await createWebhook(baseA);
    const stored = await h.db.pool.query('SELECT * FROM webhooks WHERE id = $1', [created.id]);
    const row = stored.rows[0];
    const raw = created.secret.slice('whsec_'.length);
    expect(JSON.stringify(row)).not.toContain(raw);
    expect(JSON.stringify(row)).not.toContain(Buffer.from(raw, 'base64').toString('hex'));
    expect(row.secret_ciphertext).toMatch(/^v1:/);
    expect(decryptSecret(h.webhookSecretKey, row.secret_ciphertext)).toBe(created.secret);
  });

  it('differs in ciphertext even for webhooks created back to back', async () => {
    const first = await createWebhook(baseA);
    const second = await createWebhook(baseA);
    const stored = await h.db.pool.query(
      'SELECT secret_ciphertext FROM webhooks WHERE id = ANY($1::int[]) ORDER BY id',
      [[first.id, second.id]],
    );
    expect(stored.rows[0].secret_ciphertext).not.toBe(stored.rows[1].secret_ciphertext);
  });
});

describe('authentication and scope', () => {
  let webhookId: number;
  let deliveryId: string;
  beforeAll(async () => {
    webhookId = (await createWebhook(baseA)).id;
    deliveryId = await insertDelivery(webhookId);
  });

  it.each([
    ['no Authorization header', undefined],
    ['an unknown key', 'Bearer rb_notARealKey0000000000000000000000000000'],
  ])('answers 401 UNAUTHORIZED with %s on every route', async (_case, header) => {
    for (const route of everyRoute(baseA, webhookId, deliveryId)) {
      const response = await call(route, header);
      expect([route.method, route.path, response.status, response.body.error?.code]).toEqual([
        route.method,
        route.path,
        401,
        'UNAUTHORIZED',
      ]);
    }
  });

  it('answers 403 FORBIDDEN, naming webhooks:manage, to a key without that scope', async () => {
    const key = await createKey({
      name: 'no webhooks',
      scopes: ['schema:read', 'schema:write', 'records:read', 'records:write'],
    });
    for (const route of everyRoute(baseA, webhookId, deliveryId)) {
      const response = await call(route, key);
      expect([route.method, route.path, response.status, response.body.error]).toEqual([
        route.method,
        route.path,
        403,
        { code: 'FORBIDDEN', message: expect.stringContaining('webhooks:manage') },
      ]);
    }
    const stored = await h.db.pool.query('SELECT active FROM webhooks WHERE id = $1', [webhookId]);
    expect(stored.rows[0].active).toBe(true);
  });

  it('lets a key with webhooks:manage and the read scope of its events manage webhooks', async () => {
    const key = await createKey({ name: 'hooks', scopes: ['webhooks:manage', 'records:read'] });
    const created = await createWebhook(baseA, key);
    await h.api
      .get(url(baseA, `/${created.id}`))
      .set('Authorization', key)
      .expect(200);
    await h.api
      .delete(url(baseA, `/${created.id}`))
      .set('Authorization', key)
      .expect(200);
  });
});

describe('database scope', () => {
  it('gives the same 404 for deleting an unknown id, a webhook of another database, and a database outside the key', async () => {
    const inA = await createWebhook(baseA);
    const inB = await createWebhook(baseB);
    const onlyA = await createKey({ name: 'only A', scopes: ['webhooks:manage'], databaseIds: [baseA] });
    const expected = { error: { code: 'NOT_FOUND', message: `Webhook ${inB.id} not found` } };

    const otherDatabase = await h.api.delete(url(baseA, `/${inB.id}`)).set('Authorization', root);
    const noAccess = await h.api.delete(url(baseB, `/${inB.id}`)).set('Authorization', onlyA);
    const stillThere = await h.db.pool.query(
      'SELECT id FROM webhooks WHERE id = ANY($1::int[]) ORDER BY id',
      [[inA.id, inB.id]],
    );
    expect(stillThere.rows.map((r) => r.id)).toEqual([inA.id, inB.id]);
    // The same id once it exists nowhere.
    await h.api
      .delete(url(baseB, `/${inB.id}`))
      .set('Authorization', root)
      .expect(200);
    const unknown = await h.api.delete(url(baseA, `/${inB.id}`)).set('Authorization', root);

    for (const response of [unknown, otherDatabase, noAccess]) {
      expect([response.status, response.body]).toEqual([404, expected]);
    }
    const unknownNoAccess = await h.api.delete(url(baseB, `/${inB.id}`)).set('Authorization', onlyA);
    expect([unknownNoAccess.status, unknownNoAccess.body]).toEqual([404, expected]);
    await h.api
      .delete(url(baseA, `/${inA.id}`))
      .set('Authorization', onlyA)
      .expect(200);
  });

  it('answers 404 on every route for a database outside the key, changing nothing', async () => {
    const inB = await createWebhook(baseB);
    const deliveryId = await insertDelivery(inB.id);
    const onlyA = await createKey({ name: 'only A', scopes: ['webhooks:manage'], databaseIds: [baseA] });
    const before = await h.db.pool.query('SELECT * FROM webhooks WHERE database_id = $1 ORDER BY id', [
      baseB,
    ]);
    for (const route of everyRoute(baseB, inB.id, deliveryId)) {
      const response = await call(route, onlyA);
      expect([route.method, route.path, response.status, response.body.error?.code]).toEqual([
        route.method,
        route.path,
        404,
        'NOT_FOUND',
      ]);
    }
    const after = await h.db.pool.query('SELECT * FROM webhooks WHERE database_id = $1 ORDER BY id', [baseB]);
    expect(after.rows).toEqual(before.rows);
    const delivery = await h.db.pool.query('SELECT status FROM webhook_deliveries WHERE id = $1', [
      deliveryId,
    ]);
    expect(delivery.rows[0].status).toBe('failed');
  });

  it('answers 404 for a webhook of another database addressed through one the key can reach', async () => {
    const inB = await createWebhook(baseB);
    const deliveryId = await insertDelivery(inB.id);
    for (const route of everyRoute(baseA, inB.id, deliveryId).slice(2)) {
      const response = await call(route, root);
      expect([route.method, route.path, response.status, response.body]).toEqual([
        route.method,
        route.path,
        404,
        { error: { code: 'NOT_FOUND', message: `Webhook ${inB.id} not found` } },
      ]);
    }
    await h.api
      .get(url(baseB, `/${inB.id}`))
      .set('Authorization', root)
      .expect(200);
  });

  it('lists only the webhooks of the addressed database', async () => {
    const inB = await createWebhook(baseB);
    const listed = await h.api.get(url(baseA)).set('Authorization', root).expect(200);
    expect(listed.body.webhooks.map((w: { id: number }) => w.id)).not.toContain(inB.id);
  });
});
