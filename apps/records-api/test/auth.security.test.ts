import { createHash } from 'node:crypto';
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

async function createKey(body: object): Promise<{ id: string; key: string }> {
  const response = await h.api.post('/api/v1/api-keys').set('Authorization', root).send(body).expect(201);
  return response.body;
}

describe('authentication', () => {
  it.each([
    ['no Authorization header', undefined],
    ['an unknown key', 'Bearer rb_notARealKey0000000000000000000000000000'],
    ['a non-bearer scheme', 'Basic dXNlcjpwYXNz'],
    ['an empty bearer', 'Bearer '],
  ])('answers 401 UNAUTHORIZED for %s', async (_case, header) => {
    const request = h.api.get('/api/v1/bases');
    if (header !== undefined) request.set('Authorization', header);
    const response = await request.expect(401);
    expect(response.body).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String) } });
  });

  it.each([
    ['no Authorization header', undefined, 'Missing Authorization header'],
    ['the Basic scheme', 'Basic dXNlcjpwYXNz', 'The Authorization header uses the Basic scheme'],
    ['Bearer without a key', 'Bearer', 'The Authorization header has no API key after "Bearer"'],
    [
      'a key without "Bearer "',
      'rb_secretKeyNotSentRight000000000000000000',
      'The Authorization header lacks the "Bearer " before the API key',
    ],
    [
      'an unknown scheme',
      'Secret-rb_secretKeyNotSentRight0 x',
      'The Authorization header uses a scheme other than Bearer',
    ],
  ])('says the header form expected for %s, never echoing it (issue 26)', async (_case, header, start) => {
    const request = h.api.get('/api/v1/bases');
    if (header !== undefined) request.set('Authorization', header);
    const response = await request.expect(401);
    expect(response.body).toEqual({
      error: { code: 'UNAUTHORIZED', message: `${start}; send "Authorization: Bearer <API key>"` },
    });
    expect(response.text).not.toContain('secretKey');
    expect(response.text).not.toContain('dXNlcjpwYXNz');
  });

  it('says a key of the right form is unknown or revoked (issue 26)', async () => {
    const response = await h.api
      .get('/api/v1/bases')
      .set('Authorization', 'Bearer rb_notARealKey0000000000000000000000000000')
      .expect(401);
    expect(response.body.error).toEqual({
      code: 'UNAUTHORIZED',
      message: 'Invalid API key: it is unknown or was revoked',
    });
  });

  it('accepts the root key', async () => {
    const response = await h.api.get('/api/v1/bases').set('Authorization', root).expect(200);
    expect(response.body.bases.map((b: { id: string }) => b.id).sort()).toEqual([baseA, baseB].sort());
  });
});

describe('API keys', () => {
  it('shows a created key once and stores only its hash', async () => {
    const created = await createKey({ name: 'reader', scopes: ['schema:read'] });
    expect(created.key).toMatch(/^rb_[0-9A-Za-z]{40}$/);
    const listed = await h.api.get('/api/v1/api-keys').set('Authorization', root).expect(200);
    const entry = listed.body.apiKeys.find((k: { id: string }) => k.id === created.id);
    expect(entry).toMatchObject({ name: 'reader', scopes: ['schema:read'], databaseIds: null });
    expect(JSON.stringify(listed.body)).not.toContain(created.key);
    const stored = await h.db.pool.query('SELECT * FROM api_keys WHERE id = $1', [created.id]);
    expect(JSON.stringify(stored.rows)).not.toContain(created.key);
    expect(stored.rows[0].hash).toBe(createHash('sha256').update(created.key).digest('hex'));
    await h.api.get('/api/v1/bases').set('Authorization', h.bearer(created.key)).expect(200);
  });

  it('stops accepting a key the moment it is revoked', async () => {
    const created = await createKey({ name: 'temp', scopes: ['schema:read'] });
    await h.api.get('/api/v1/bases').set('Authorization', h.bearer(created.key)).expect(200);
    const revoked = await h.api
      .delete(`/api/v1/api-keys/${created.id}`)
      .set('Authorization', root)
      .expect(200);
    expect(revoked.body).toEqual({ success: true, message: expect.any(String) });
    await h.api.get('/api/v1/bases').set('Authorization', h.bearer(created.key)).expect(401);
  });

  it('serves a known key from memory, and stops accepting it on another instance once revoked', async () => {
    const other = await startHarness({ sameDatabaseAs: h });
    try {
      const created = await createKey({ name: 'elsewhere', scopes: ['schema:read'] });
      const read = async () =>
        (await other.api.get('/api/v1/bases').set('Authorization', other.bearer(created.key))).status;
      // Kept: a change behind the service's back (no NOTIFY) is not seen. Nothing is kept until
      // the new instance's LISTEN connection is up (its connecting drops what was kept), so the
      // scopes are flipped until a read answers for the scopes before the flip: either the
      // granting ones kept (200 without scopes) or the empty ones kept (403 with them back).
      const setScopes = (scopes: string) =>
        h.db.pool.query('UPDATE api_keys SET scopes = $2 WHERE id = $1', [created.id, scopes]);
      const deadline = Date.now() + 5_000;
      let kept = false;
      while (!kept && Date.now() < deadline) {
        await setScopes('{schema:read}');
        const granted = await read();
        expect([200, 403]).toContain(granted);
        if (granted === 403) kept = true;
        else {
          await setScopes('{}');
          kept = (await read()) === 200;
        }
      }
      expect(kept).toBe(true);
      // ...but a revocation through the API, on the first instance, reaches the other one.
      await h.api.delete(`/api/v1/api-keys/${created.id}`).set('Authorization', root).expect(200);
      const revokedBy = Date.now() + 5_000;
      let status = await read();
      while (status !== 401 && Date.now() < revokedBy) status = await read();
      expect(status).toBe(401);
    } finally {
      await other.close();
    }
  });

  it('answers 404 for revoking an unknown key', async () => {
    await h.api
      .delete('/api/v1/api-keys/00000000-0000-4000-8000-000000000000')
      .set('Authorization', root)
      .expect(404);
  });

  it('refuses API key management to keys other than root', async () => {
    const created = await createKey({ name: 'all', scopes: ['schema:read', 'schema:write'] });
    const response = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', h.bearer(created.key))
      .send({ name: 'escalate', scopes: ['sql:read'] })
      .expect(403);
    expect(response.body.error.code).toBe('FORBIDDEN');
    await h.api.get('/api/v1/api-keys').set('Authorization', h.bearer(created.key)).expect(403);
  });

  it('refuses a key for databases that do not exist', async () => {
    const response = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', root)
      .send({ name: 'x', scopes: ['schema:read'], databaseIds: ['00000000-0000-4000-8000-000000000000'] })
      .expect(400);
    expect(response.body.error.message).toContain('00000000-0000-4000-8000-000000000000');
  });
});

describe('database scope', () => {
  it('answers 404 to a key scoped to database A for everything in database B', async () => {
    const scoped = await createKey({
      name: 'only A',
      scopes: ['schema:read', 'schema:write'],
      databaseIds: [baseA],
    });
    const auth = h.bearer(scoped.key);
    await h.api.get(`/api/v1/bases/${baseA}`).set('Authorization', auth).expect(200);
    await h.api.get(`/api/v1/bases/${baseA}/tables/Tasks`).set('Authorization', auth).expect(200);
    const direct = await h.api.get(`/api/v1/bases/${baseB}`).set('Authorization', auth).expect(404);
    expect(direct.body.error.code).toBe('NOT_FOUND');
    await h.api.get(`/api/v1/bases/${baseB}/tables/Tasks`).set('Authorization', auth).expect(404);
    await h.api
      .post(`/api/v1/bases/${baseB}/tables`)
      .set('Authorization', auth)
      .send({ name: 'Sneaky', fields: [{ name: 'N', type: 'number' }] })
      .expect(404);
    await h.api.delete(`/api/v1/bases/${baseB}`).set('Authorization', auth).expect(404);
    const listed = await h.api.get('/api/v1/bases').set('Authorization', auth).expect(200);
    expect(listed.body.bases.map((b: { id: string }) => b.id)).toEqual([baseA]);
    const stillThere = await h.api
      .get(`/api/v1/bases/${baseB}/tables`)
      .set('Authorization', root)
      .expect(200);
    expect(stillThere.body.tables.map((t: { name: string }) => t.name)).toEqual(['Tasks']);
  });

  it('refuses database creation to a key limited to some databases', async () => {
    const scoped = await createKey({ name: 'only A', scopes: ['schema:write'], databaseIds: [baseA] });
    await h.api
      .post('/api/v1/bases')
      .set('Authorization', h.bearer(scoped.key))
      .send({ name: 'C' })
      .expect(403);
  });
});

describe('scopes', () => {
  it('answers 403 FORBIDDEN to a key lacking the scope, naming it', async () => {
    const reader = await createKey({ name: 'reader', scopes: ['schema:read'] });
    const response = await h.api
      .post(`/api/v1/bases/${baseA}/tables`)
      .set('Authorization', h.bearer(reader.key))
      .send({ name: 'New', fields: [{ name: 'N', type: 'number' }] })
      .expect(403);
    expect(response.body.error).toEqual({
      code: 'FORBIDDEN',
      message: expect.stringContaining('schema:write'),
    });
    const tables = await h.api.get(`/api/v1/bases/${baseA}/tables`).set('Authorization', root).expect(200);
    expect(tables.body.tables.map((t: { name: string }) => t.name)).toEqual(['Tasks']);
  });

  it('answers 403 to a writer without schema:read on reads', async () => {
    const writer = await createKey({ name: 'writer', scopes: ['records:write'] });
    await h.api.get(`/api/v1/bases/${baseA}`).set('Authorization', h.bearer(writer.key)).expect(403);
  });
});
