import { createBase, type Harness, startHarness } from './harness';

let h: Harness;
let auth: string;
let baseId: string;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Base',
    tables: [{ name: 'Tasks', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  baseId = base.body.id;
});
afterAll(() => h.close());

const url = (path = '', databaseId = baseId) => `/api/v1/bases/${databaseId}/webhooks${path}`;
const valid = { url: 'https://example.com/hook', events: ['record.created'] };

async function newBase(): Promise<string> {
  const response = await createBase(h, { name: 'B' });
  return response.body.id;
}

async function createWebhook(databaseId = baseId, body: object = {}): Promise<number> {
  const response = await h.api
    .post(url('', databaseId))
    .set('Authorization', auth)
    .send({ ...valid, ...body })
    .expect(201);
  return response.body.id;
}

async function webhookRows(): Promise<unknown[]> {
  const result = await h.db.pool.query('SELECT * FROM webhooks ORDER BY id');
  return result.rows;
}

function expectBadRequest(response: { status: number; body: unknown }, message: RegExp | string) {
  expect(response.status).toBe(400);
  expect(response.body).toEqual({
    error: {
      code: 'BAD_REQUEST',
      message: typeof message === 'string' ? message : expect.stringMatching(message),
    },
  });
}

describe('creating a webhook refuses bad input with a 400 naming the problem, writing nothing', () => {
  const longUrl = `https://example.com/${'a'.repeat(2049 - 'https://example.com/'.length)}`;

  it.each([
    ['a url of 2049 characters', { ...valid, url: longUrl }, 'body.url: must be at most 2048 characters'],
    ['an ftp url', { ...valid, url: 'ftp://example.com/hook' }, 'body.url: must be an http or https URL'],
    [
      'a url that is not a URL',
      { ...valid, url: 'example.com/hook' },
      'body.url: must be an http or https URL',
    ],
    ['a missing url', { events: ['record.created'] }, /^body\.url: /],
    ['a url that is not a string', { ...valid, url: 42 }, /^body\.url: /],
    ['an empty event list', { ...valid, events: [] }, 'body.events: must list at least one event type'],
    [
      'an unknown event type',
      { ...valid, events: ['record.exploded'] },
      /^body\.events\[0\]: must be one of record\.created/,
    ],
    [
      'a repeated event type',
      { ...valid, events: ['record.created', 'record.created'] },
      'body.events: must not repeat an event type',
    ],
    ['events that are not an array', { ...valid, events: 'record.created' }, /^body\.events: /],
    ['missing events', { url: valid.url }, /^body\.events: /],
    ['an unknown key', { ...valid, secret: 'whsec_mine' }, 'body: unknown key "secret"'],
    ['an active flag on create', { ...valid, active: false }, 'body: unknown key "active"'],
    ['an empty tableId', { ...valid, tableId: '' }, /^body\.tableId: /],
    ['a body that is not an object', [valid], /^body: /],
  ])('%s', async (_case, body, message) => {
    const before = await webhookRows();
    const response = await h.api.post(url()).set('Authorization', auth).send(body);
    expectBadRequest(response, message);
    expect(await webhookRows()).toEqual(before);
  });

  it('malformed JSON', async () => {
    const response = await h.api
      .post(url())
      .set('Authorization', auth)
      .set('content-type', 'application/json')
      .send('{"url": "https://example.com", "events": [');
    expectBadRequest(response, /^Malformed JSON/);
  });

  it('a tableId that names no table of the database, naming it', async () => {
    const before = await webhookRows();
    const response = await h.api
      .post(url())
      .set('Authorization', auth)
      .send({ ...valid, tableId: 'Nope' });
    expectBadRequest(response, 'body.tableId: no table "Nope" in this database');
    expect(await webhookRows()).toEqual(before);
  });

  it('a tableId of a table in another database', async () => {
    const other = await createBase(h, {
      name: 'Other',
      tables: [{ name: 'Elsewhere', fields: [{ name: 'N', type: 'number' }] }],
    });
    const foreignTableId = other.body.tables[0].id;
    const response = await h.api
      .post(url())
      .set('Authorization', auth)
      .send({ ...valid, tableId: foreignTableId });
    expectBadRequest(response, `body.tableId: no table "${foreignTableId}" in this database`);
  });
});

describe('at most 100 webhooks per database', () => {
  it('refuses the 101st', async () => {
    const databaseId = await newBase();
    await h.db.pool.query(
      `INSERT INTO webhooks (database_id, url, events, secret_ciphertext)
       SELECT $1, 'https://example.com/' || n, '{record.created}', 'v1:x' FROM generate_series(1, 99) n`,
      [databaseId],
    );
    await createWebhook(databaseId);
    const response = await h.api.post(url('', databaseId)).set('Authorization', auth).send(valid);
    expectBadRequest(response, 'a database holds at most 100 webhooks');
    const count = await h.db.pool.query('SELECT count(*)::int AS n FROM webhooks WHERE database_id = $1', [
      databaseId,
    ]);
    expect(count.rows[0].n).toBe(100);
    // Room again after a delete.
    const listed = await h.api.get(url('', databaseId)).set('Authorization', auth).expect(200);
    await h.api
      .delete(url(`/${listed.body.webhooks[0].id}`, databaseId))
      .set('Authorization', auth)
      .expect(200);
    await createWebhook(databaseId);
  });

  it('holds under concurrent creates', async () => {
    const databaseId = await newBase();
    await h.db.pool.query(
      `INSERT INTO webhooks (database_id, url, events, secret_ciphertext)
       SELECT $1, 'https://example.com/' || n, '{record.created}', 'v1:x' FROM generate_series(1, 96) n`,
      [databaseId],
    );
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        h.api.post(url('', databaseId)).set('Authorization', auth).send(valid),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 201, 400, 400, 400, 400, 400, 400]);
    const count = await h.db.pool.query('SELECT count(*)::int AS n FROM webhooks WHERE database_id = $1', [
      databaseId,
    ]);
    expect(count.rows[0].n).toBe(100);
  });

  it('counts per database', async () => {
    const full = await newBase();
    await h.db.pool.query(
      `INSERT INTO webhooks (database_id, url, events, secret_ciphertext)
       SELECT $1, 'https://example.com/' || n, '{record.created}', 'v1:x' FROM generate_series(1, 100) n`,
      [full],
    );
    await h.api.post(url('', full)).set('Authorization', auth).send(valid).expect(400);
    await createWebhook(await newBase());
  });
});

describe('updating a webhook refuses bad input', () => {
  let webhookId: number;
  beforeAll(async () => {
    webhookId = await createWebhook();
  });

  it.each([
    ['an empty body', {}, /at least one of url, events, tableId, fieldIds, viewId or active/],
    ['an unknown key', { active: true, secret: 'whsec_x' }, 'body: unknown key "secret"'],
    ['only an unknown key', { secret: 'whsec_x' }, /^body: unknown key "secret"/],
    ['an ftp url', { url: 'ftp://example.com' }, 'body.url: must be an http or https URL'],
    ['empty events', { events: [] }, 'body.events: must list at least one event type'],
    ['an unknown event', { events: ['row.created'] }, /^body\.events\[0\]: /],
    ['a non-boolean active', { active: 'no' }, 'body.active: must be true or false'],
    ['an unknown table', { tableId: 'Nope' }, 'body.tableId: no table "Nope" in this database'],
  ])('%s', async (_case, body, message) => {
    const before = await webhookRows();
    const response = await h.api
      .patch(url(`/${webhookId}`))
      .set('Authorization', auth)
      .send(body);
    expectBadRequest(response, message);
    expect(await webhookRows()).toEqual(before);
  });

  it('malformed JSON', async () => {
    const response = await h.api
      .patch(url(`/${webhookId}`))
      .set('Authorization', auth)
      .set('content-type', 'application/json')
      .send('{"active": tru');
    expectBadRequest(response, /^Malformed JSON/);
  });
});

describe('webhooks and deliveries that do not exist answer 404', () => {
  it.each([
    ['an unknown id', '999999'],
    ['a non-integer id', 'abc'],
    ['a zero id', '0'],
    ['a negative id', '-1'],
    ['a fractional id', '1.5'],
    ['an id beyond int4', '99999999999'],
  ])('%s, on every webhook route', async (_case, ref) => {
    const expected = { error: { code: 'NOT_FOUND', message: `Webhook ${ref} not found` } };
    const responses = [
      await h.api.get(url(`/${ref}`)).set('Authorization', auth),
      await h.api
        .patch(url(`/${ref}`))
        .set('Authorization', auth)
        .send({ active: false }),
      await h.api.delete(url(`/${ref}`)).set('Authorization', auth),
      await h.api.get(url(`/${ref}/deliveries`)).set('Authorization', auth),
      await h.api.post(url(`/${ref}/deliveries/1/retry`)).set('Authorization', auth),
    ];
    for (const response of responses) {
      expect([response.status, response.body]).toEqual([404, expected]);
    }
  });

  it('a database that does not exist', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const listed = await h.api.get(url('', missing)).set('Authorization', auth).expect(404);
    expect(listed.body.error).toEqual({ code: 'NOT_FOUND', message: `Database ${missing} not found` });
    await h.api.post(url('', missing)).set('Authorization', auth).send(valid).expect(404);
    await h.api.post(url('', 'not-a-uuid')).set('Authorization', auth).send(valid).expect(404);
  });

  it('a delivery that is unknown, not an integer, or of another webhook', async () => {
    const webhookId = await createWebhook();
    const otherId = await createWebhook();
    const inserted = await h.db.pool.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (event_id, webhook_id, event_type, status)
       VALUES (gen_random_uuid(), $1, 'record.created', 'failed') RETURNING id::text AS id`,
      [otherId],
    );
    const foreign = inserted.rows[0]!.id;
    for (const ref of [foreign, '999999999', 'abc', '0', '99999999999999999999']) {
      const response = await h.api
        .post(url(`/${webhookId}/deliveries/${ref}/retry`))
        .set('Authorization', auth)
        .expect(404);
      expect(response.body.error).toEqual({
        code: 'NOT_FOUND',
        message: `Delivery ${ref} of webhook ${webhookId} not found`,
      });
    }
    const untouched = await h.db.pool.query('SELECT status FROM webhook_deliveries WHERE id = $1', [foreign]);
    expect(untouched.rows[0].status).toBe('failed');
  });
});

describe('retrying a delivery of an inactive webhook', () => {
  it('answers 400 "Webhook is inactive" and leaves the delivery alone', async () => {
    const webhookId = await createWebhook();
    const inserted = await h.db.pool.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (event_id, webhook_id, event_type, status)
       VALUES (gen_random_uuid(), $1, 'record.created', 'failed') RETURNING id::text AS id`,
      [webhookId],
    );
    const deliveryId = inserted.rows[0]!.id;
    await h.api
      .patch(url(`/${webhookId}`))
      .set('Authorization', auth)
      .send({ active: false })
      .expect(200);
    const response = await h.api
      .post(url(`/${webhookId}/deliveries/${deliveryId}/retry`))
      .set('Authorization', auth);
    expectBadRequest(response, 'Webhook is inactive');
    const stored = await h.db.pool.query(
      'SELECT status, next_attempt_at FROM webhook_deliveries WHERE id = $1',
      [deliveryId],
    );
    expect(stored.rows[0]).toEqual({ status: 'failed', next_attempt_at: null });
  });
});

describe('the delivery log limit', () => {
  it.each(['0', '201', 'ten', '1.5', '-3'])('refuses limit=%s', async (limit) => {
    const webhookId = await createWebhook();
    const response = await h.api
      .get(url(`/${webhookId}/deliveries?limit=${limit}`))
      .set('Authorization', auth);
    expectBadRequest(response, 'query.limit: must be an integer from 1 to 200');
  });

  it('refuses unknown query keys', async () => {
    const webhookId = await createWebhook();
    const response = await h.api.get(url(`/${webhookId}/deliveries?offset=5`)).set('Authorization', auth);
    expectBadRequest(response, 'query: unknown parameter "offset"');
  });

  it('accepts limit=200', async () => {
    const webhookId = await createWebhook();
    await h.api
      .get(url(`/${webhookId}/deliveries?limit=200`))
      .set('Authorization', auth)
      .expect(200);
  });
});

describe('a webhook URL that deliveries would refuse (issue 14)', () => {
  it.each([
    ['a private address', 'http://10.1.2.3/hook', 'a private address'],
    ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data', 'link-local'],
    ['IPv6 loopback', 'http://[::1]:8080/hook', 'loopback'],
  ])('is refused when registered: %s', async (_name, url, reason) => {
    const response = await h.api
      .post(`/api/v1/bases/${baseId}/webhooks`)
      .set('Authorization', auth)
      .send({ ...valid, url })
      .expect(400);
    expect(response.body.error.message).toMatch(/^body\.url: refused/);
    expect(response.body.error.message).toContain(reason);
    expect(response.body.error.message).toContain(
      'deliveries go only to public addresses unless the WEBHOOK_ALLOWED_CIDRS setting lists it',
    );
  });

  it('names WEBHOOK_ALLOWED_CIDRS, the setting that would allow it, and no address but the one sent (issue 26)', async () => {
    // 127.0.0.1 is allowed in these tests; the rest of the loopback range is not.
    const response = await h.api
      .post(`/api/v1/bases/${baseId}/webhooks`)
      .set('Authorization', auth)
      .send({ ...valid, url: 'http://127.0.0.2:8080/hook' })
      .expect(400);
    expect(response.body.error).toEqual({
      code: 'BAD_REQUEST',
      message:
        'body.url: refused to connect to a loopback address; deliveries go only to public addresses ' +
        'unless the WEBHOOK_ALLOWED_CIDRS setting lists it',
    });
  });

  it('is refused when a webhook is changed to it, and an allowed range or an unresolved host is taken', async () => {
    const created = await h.api
      .post(`/api/v1/bases/${baseId}/webhooks`)
      .set('Authorization', auth)
      .send(valid)
      .expect(201);
    const refused = await h.api
      .patch(`/api/v1/bases/${baseId}/webhooks/${created.body.id}`)
      .set('Authorization', auth)
      .send({ url: 'http://192.168.0.10/hook' })
      .expect(400);
    expect(refused.body.error.message).toMatch(/^body\.url: refused/);
    // The harness allows 127.0.0.1/32, as the e2e stack does for its receivers.
    await h.api
      .patch(`/api/v1/bases/${baseId}/webhooks/${created.body.id}`)
      .set('Authorization', auth)
      .send({ url: 'http://127.0.0.1:4000/hook' })
      .expect(200);
    // A name that does not resolve (yet) is taken: each delivery checks what it resolves to then.
    await h.api
      .patch(`/api/v1/bases/${baseId}/webhooks/${created.body.id}`)
      .set('Authorization', auth)
      .send({ url: 'https://receiver.invalid/hook' })
      .expect(200);
  });
});
