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

/**
 * A key that may not read record values must not be able to point a webhook
 * that still has record deliveries to send at its own address (nor one with table or field
 * deliveries, without schema:read), and no retry may send an event the webhook no longer hears.
 */
describe('retargeting a webhook with deliveries still open', () => {
  let base: string;
  let tasks: string;
  let notes: string;
  beforeAll(async () => {
    const created = await createBase(h, {
      name: 'Retarget',
      tables: [
        { name: 'Tasks', fields: [{ name: 'Name', type: 'single_line_text' }] },
        { name: 'Notes', fields: [{ name: 'Body', type: 'single_line_text' }] },
      ],
    });
    base = created.body.id;
    [tasks, notes] = created.body.tables.map((table: { id: string }) => table.id);
  });

  /** A webhook made by a key that may read what it hears, with one delivery of `eventType` left open (its receiver failed). */
  async function webhookWithOpenDelivery(options: {
    events: string[];
    eventType: string;
    tableId: string;
    scopes: string[];
    status?: 'retrying' | 'pending' | 'failed';
  }) {
    const owner = await createKey({ name: 'owner', scopes: ['webhooks:manage', ...options.scopes] });
    const webhook = await h.api
      .post(url(base))
      .set('Authorization', owner)
      .send({ url: 'https://example.com/owner', events: options.events, tableId: options.tableId })
      .expect(201);
    const delivery = await h.db.pool.query<{ id: string }>(
      `WITH event AS (
         INSERT INTO outbox_events (id, database_id, table_id, type, source, data)
         VALUES (gen_random_uuid(), $1, $2, $3, 'public_api', '{"records": [{"Name": "payroll"}]}')
         RETURNING id
       )
       INSERT INTO webhook_deliveries (event_id, webhook_id, event_type, status, attempts, last_status_code, next_attempt_at)
       SELECT id, $4, $3, $5, 1, 500, now() + interval '2 hours' FROM event
       RETURNING id::text AS id`,
      [base, options.tableId, options.eventType, webhook.body.id, options.status ?? 'retrying'],
    );
    return { webhookId: webhook.body.id as number, deliveryId: delivery.rows[0]!.id };
  }

  async function webhookRow(webhookId: number) {
    const result = await h.db.pool.query('SELECT url, events, table_id FROM webhooks WHERE id = $1', [
      webhookId,
    ]);
    return result.rows[0];
  }

  it('refuses a new url from a key without records:read while record deliveries are open, 403 naming the scope', async () => {
    const { webhookId } = await webhookWithOpenDelivery({
      events: ['record.created', 'record.updated'],
      eventType: 'record.updated',
      tableId: tasks,
      scopes: ['records:read'],
    });
    const attacker = await createKey({ name: 'attacker', scopes: ['webhooks:manage', 'schema:read'] });
    const before = await webhookRow(webhookId);

    const refused = await h.api
      .patch(url(base, `/${webhookId}`))
      .set('Authorization', attacker)
      .send({ url: 'https://attacker.example/collect', events: ['table.created'] })
      .expect(403);
    expect(refused.body.error).toEqual({
      code: 'FORBIDDEN',
      message: expect.stringContaining('records:read'),
    });
    expect(refused.body.error.message).toContain('record.updated');
    expect(await webhookRow(webhookId)).toEqual(before);

    // In two steps: dropping the record events sends nothing anywhere new, but the url still cannot follow.
    await h.api
      .patch(url(base, `/${webhookId}`))
      .set('Authorization', attacker)
      .send({ events: ['table.created'] })
      .expect(200);
    const second = await h.api
      .patch(url(base, `/${webhookId}`))
      .set('Authorization', attacker)
      .send({ url: 'https://attacker.example/collect' })
      .expect(403);
    expect(second.body.error.message).toContain('records:read');
    // Nor can it move the webhook to another table, which changes what its open deliveries match.
    const moved = await h.api
      .patch(url(base, `/${webhookId}`))
      .set('Authorization', attacker)
      .send({ tableId: notes })
      .expect(403);
    expect(moved.body.error.message).toContain('records:read');
    expect(await webhookRow(webhookId)).toEqual({ ...before, events: ['table.created'] });
  });

  it('lets the url change once no record delivery is open, or for a key with records:read', async () => {
    const open = await webhookWithOpenDelivery({
      events: ['record.created'],
      eventType: 'record.created',
      tableId: tasks,
      scopes: ['records:read'],
    });
    const reader = await createKey({ name: 'reader', scopes: ['webhooks:manage', 'records:read'] });
    await h.api
      .patch(url(base, `/${open.webhookId}`))
      .set('Authorization', reader)
      .send({ url: 'https://example.com/moved' })
      .expect(200);

    const closed = await webhookWithOpenDelivery({
      events: ['record.created'],
      eventType: 'record.created',
      tableId: tasks,
      scopes: ['records:read'],
      status: 'failed',
    });
    const schemaOnly = await createKey({ name: 'schema', scopes: ['webhooks:manage', 'schema:read'] });
    const patched = await h.api
      .patch(url(base, `/${closed.webhookId}`))
      .set('Authorization', schemaOnly)
      .send({ url: 'https://example.com/elsewhere', events: ['table.created'] })
      .expect(200);
    expect(patched.body).toMatchObject({ url: 'https://example.com/elsewhere', events: ['table.created'] });
  });

  it('refuses a new url from a key without schema:read while table or field deliveries are open', async () => {
    const { webhookId } = await webhookWithOpenDelivery({
      events: ['table.created', 'field.updated'],
      eventType: 'field.updated',
      tableId: tasks,
      scopes: ['schema:read'],
      status: 'pending',
    });
    const recordsOnly = await createKey({ name: 'records', scopes: ['webhooks:manage', 'records:read'] });
    const before = await webhookRow(webhookId);
    const refused = await h.api
      .patch(url(base, `/${webhookId}`))
      .set('Authorization', recordsOnly)
      .send({ url: 'https://attacker.example/schema', events: ['record.created'] })
      .expect(403);
    expect(refused.body.error).toEqual({
      code: 'FORBIDDEN',
      message: expect.stringContaining('schema:read'),
    });
    expect(await webhookRow(webhookId)).toEqual(before);
  });

  it('refuses to retry a delivery of an event the webhook no longer subscribes to, 400 naming why', async () => {
    const byType = await webhookWithOpenDelivery({
      events: ['record.created', 'record.updated'],
      eventType: 'record.updated',
      tableId: tasks,
      scopes: ['records:read'],
      status: 'failed',
    });
    await h.api
      .patch(url(base, `/${byType.webhookId}`))
      .set('Authorization', root)
      .send({ events: ['record.created'] })
      .expect(200);
    const refused = await h.api
      .post(url(base, `/${byType.webhookId}/deliveries/${byType.deliveryId}/retry`))
      .set('Authorization', root)
      .expect(400);
    expect(refused.body.error).toEqual({
      code: 'BAD_REQUEST',
      message: expect.stringContaining('no longer subscribes to record.updated'),
    });

    const byTable = await webhookWithOpenDelivery({
      events: ['record.created'],
      eventType: 'record.created',
      tableId: tasks,
      scopes: ['records:read'],
      status: 'failed',
    });
    await h.api
      .patch(url(base, `/${byTable.webhookId}`))
      .set('Authorization', root)
      .send({ tableId: notes })
      .expect(200);
    const otherTable = await h.api
      .post(url(base, `/${byTable.webhookId}/deliveries/${byTable.deliveryId}/retry`))
      .set('Authorization', root)
      .expect(400);
    expect(otherTable.body.error.message).toContain(`no longer subscribes to events of table ${tasks}`);

    const statuses = await h.db.pool.query(
      'SELECT status FROM webhook_deliveries WHERE id = ANY($1::bigint[]) ORDER BY id',
      [[byType.deliveryId, byTable.deliveryId]],
    );
    expect(statuses.rows.map((row) => row.status)).toEqual(['failed', 'failed']);
  });
});
