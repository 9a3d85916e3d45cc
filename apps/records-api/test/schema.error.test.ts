import { columnsOf, createBase, type Harness, schemaNameOf, startHarness } from './harness';

let h: Harness;
let auth: string;
let baseId: string;
let tableId: string;
let fieldId: string;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Base',
    tables: [
      {
        name: 'Tasks',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Notes', type: 'long_text' },
        ],
      },
    ],
  });
  baseId = base.body.id;
  tableId = base.body.tables[0].id;
  fieldId = base.body.tables[0].fields[1].id;
});
afterAll(() => h.close());

async function metadataSnapshot() {
  const result = await h.db.pool.query(`SELECT
    (SELECT json_agg(to_jsonb(d) - 'schema_version' ORDER BY id) FROM databases d) AS databases,
    (SELECT json_object_agg(id, schema_version) FROM databases) AS schema_versions,
    (SELECT json_agg(t ORDER BY id) FROM tables t) AS tables,
    (SELECT json_agg(f ORDER BY id) FROM fields f) AS fields,
    (SELECT count(*) FROM api_keys) AS keys,
    (SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'base_%') AS schemas`);
  return result.rows[0];
}

const endpoints = () =>
  [
    { method: 'post', url: '/api/v1/api-keys', valid: { name: 'k', scopes: ['schema:read'] } },
    { method: 'post', url: '/api/v1/bases', valid: { name: 'B' } },
    { method: 'patch', url: `/api/v1/bases/${baseId}`, valid: { name: 'B' } },
    {
      method: 'post',
      url: `/api/v1/bases/${baseId}/tables`,
      valid: { name: 'T', fields: [{ name: 'F', type: 'number' }] },
    },
    { method: 'patch', url: `/api/v1/bases/${baseId}/tables/${tableId}`, valid: { name: 'T' } },
    {
      method: 'post',
      url: `/api/v1/bases/${baseId}/tables/${tableId}/fields`,
      valid: { name: 'F', type: 'number' },
    },
    {
      method: 'patch',
      url: `/api/v1/bases/${baseId}/tables/${tableId}/fields/${fieldId}`,
      valid: { name: 'F' },
    },
  ] as const;

function send(method: 'post' | 'patch', url: string) {
  return h.api[method](url).set('Authorization', auth);
}

describe('every endpoint with a body refuses bad input with a 400 naming the problem, writing nothing', () => {
  it('malformed JSON', async () => {
    const before = await metadataSnapshot();
    for (const endpoint of endpoints()) {
      const response = await send(endpoint.method, endpoint.url)
        .set('content-type', 'application/json')
        .send('{"name": ');
      expect([endpoint.url, response.status, response.body.error?.code]).toEqual([
        endpoint.url,
        400,
        'BAD_REQUEST',
      ]);
      expect(response.body.error.message).toMatch(/JSON/);
    }
    expect(await metadataSnapshot()).toEqual(before);
  });

  it('wrong types', async () => {
    const before = await metadataSnapshot();
    for (const endpoint of endpoints()) {
      for (const body of [[], 42, 'text', { ...endpoint.valid, name: 12 }]) {
        const response = await send(endpoint.method, endpoint.url)
          .set('content-type', 'application/json')
          .send(JSON.stringify(body));
        expect([endpoint.url, body, response.status]).toEqual([endpoint.url, body, 400]);
        expect(response.body.error).toEqual({ code: 'BAD_REQUEST', message: expect.stringMatching(/^body/) });
      }
    }
    expect(await metadataSnapshot()).toEqual(before);
  });

  it('unknown keys', async () => {
    const before = await metadataSnapshot();
    for (const endpoint of endpoints()) {
      const response = await send(endpoint.method, endpoint.url).send({ ...endpoint.valid, surprise: true });
      expect([endpoint.url, response.status]).toEqual([endpoint.url, 400]);
      expect(response.body.error.message).toContain('"surprise"');
    }
    expect(await metadataSnapshot()).toEqual(before);
  });

  it('oversized strings', async () => {
    const before = await metadataSnapshot();
    for (const endpoint of endpoints()) {
      const response = await send(endpoint.method, endpoint.url).send({
        ...endpoint.valid,
        name: 'x'.repeat(10_000),
      });
      expect([endpoint.url, response.status]).toEqual([endpoint.url, 400]);
      expect(response.body.error.message).toMatch(/body\.name: .*255/);
    }
    expect(await metadataSnapshot()).toEqual(before);
  });

  it('names with control characters', async () => {
    const response = await send('post', '/api/v1/bases').send({ name: 'a\u0000b' }).expect(400);
    expect(response.body.error.message).toMatch(/body\.name/);
  });

  it('a body over the size limit is 413 PAYLOAD_TOO_LARGE', async () => {
    const response = await send('post', '/api/v1/bases')
      .send({ name: 'x'.repeat(11 * 1024 * 1024) })
      .expect(413);
    expect(response.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('schema rules', () => {
  it('refuses a duplicate table name, ignoring case', async () => {
    const before = await metadataSnapshot();
    const response = await send('post', `/api/v1/bases/${baseId}/tables`)
      .send({ name: 'TASKS', fields: [{ name: 'N', type: 'number' }] })
      .expect(400);
    expect(response.body.error.message).toMatch(/already exists/);
    await h.api
      .post(`/api/v1/bases/${baseId}/tables`)
      .set('Authorization', auth)
      .send({ name: 'Other', fields: [{ name: 'N', type: 'number' }] })
      .expect(201);
    await send('patch', `/api/v1/bases/${baseId}/tables/Other`).send({ name: 'tasks' }).expect(400);
    await h.api.delete(`/api/v1/bases/${baseId}/tables/Other`).set('Authorization', auth).expect(200);
    // Only the two changes that succeeded count as schema versions; nothing else differs.
    const after = await metadataSnapshot();
    expect({ ...after, schema_versions: before.schema_versions }).toEqual(before);
    expect(Number(after.schema_versions[baseId]) - Number(before.schema_versions[baseId])).toBe(2);
  });

  it('refuses duplicate table names within one request', async () => {
    const response = await send('post', '/api/v1/bases')
      .send({
        name: 'B',
        tables: [
          { name: 'A', fields: [{ name: 'N', type: 'number' }] },
          { name: 'a', fields: [{ name: 'N', type: 'number' }] },
        ],
      })
      .expect(400);
    expect(response.body.error.message).toMatch(/body\.tables\[1\]\.name: duplicate/);
  });

  it('refuses a duplicate field name, on create, on rename and within a table definition', async () => {
    await send('post', `/api/v1/bases/${baseId}/tables/Tasks/fields`)
      .send({ name: 'name', type: 'number' })
      .expect(400);
    const renamed = await send('patch', `/api/v1/bases/${baseId}/tables/Tasks/fields/Notes`)
      .send({ name: 'NAME' })
      .expect(400);
    expect(renamed.body.error.message).toMatch(/already exists/);
    const inTable = await send('post', `/api/v1/bases/${baseId}/tables`)
      .send({
        name: 'Dup',
        fields: [
          { name: 'X', type: 'number' },
          { name: 'x', type: 'date' },
        ],
      })
      .expect(400);
    expect(inTable.body.error.message).toMatch(/body\.fields\[1\]\.name: duplicate/);
  });

  it('refuses field names that clash with system fields', async () => {
    const response = await send('post', `/api/v1/bases/${baseId}/tables/Tasks/fields`)
      .send({ name: 'createdAt', type: 'date' })
      .expect(400);
    expect(response.body.error.message).toMatch(/system field/);
  });

  it('validates templates against the type, naming the key', async () => {
    const rating = await send('post', `/api/v1/bases/${baseId}/tables/Tasks/fields`)
      .send({ name: 'R', type: 'rating', template: { max: 11 } })
      .expect(400);
    expect(rating.body.error.message).toMatch(/body\.template\.max/);
    const unknown = await send('post', `/api/v1/bases/${baseId}/tables/Tasks/fields`)
      .send({ name: 'N', type: 'number', template: { options: [] } })
      .expect(400);
    expect(unknown.body.error.message).toMatch(/options/);
    const link = await send('post', `/api/v1/bases/${baseId}/tables/Tasks/fields`)
      .send({ name: 'L', type: 'linked_record', template: { tableId: 'Nowhere' } })
      .expect(400);
    expect(link.body.error.message).toMatch(/body\.template\.tableId: no table "Nowhere"/);
    await send('post', `/api/v1/bases/${baseId}/tables/Tasks/fields`)
      .send({ name: 'T', type: 'no_such_type' })
      .expect(400);
  });

  it('refuses to delete the primary field', async () => {
    const response = await h.api
      .delete(`/api/v1/bases/${baseId}/tables/Tasks/fields/Name`)
      .set('Authorization', auth)
      .expect(400);
    expect(response.body.error.message).toMatch(/primary field/);
  });

  it('refuses a type change with no conversion', async () => {
    const created = await send('post', `/api/v1/bases/${baseId}/tables/Tasks/fields`)
      .send({ name: 'Files', type: 'attachments' })
      .expect(201);
    const response = await send('patch', `/api/v1/bases/${baseId}/tables/Tasks/fields/${created.body.id}`)
      .send({ type: 'number' })
      .expect(400);
    expect(response.body.error.message).toBe('body.type: a attachments field cannot be converted to number');
  });

  it('answers 404 for unknown databases, tables, fields and routes', async () => {
    await h.api.get('/api/v1/bases/not-a-uuid').set('Authorization', auth).expect(404);
    await h.api
      .get('/api/v1/bases/00000000-0000-4000-8000-000000000000')
      .set('Authorization', auth)
      .expect(404);
    await h.api.get(`/api/v1/bases/${baseId}/tables/Nope`).set('Authorization', auth).expect(404);
    await h.api
      .get(`/api/v1/bases/${baseId}/tables/Tasks/fields/Nope`)
      .set('Authorization', auth)
      .expect(404);
    const route = await h.api.get('/api/v1/nothing-here').set('Authorization', auth).expect(404);
    expect(route.body).toEqual({
      error: { code: 'NOT_FOUND', message: expect.stringContaining('/api/v1/nothing-here') },
    });
  });
});

describe('a failing DDL leaves the metadata unchanged', () => {
  it('when a type conversion meets a value it cannot convert (400)', async () => {
    const schema = schemaNameOf(baseId);
    await h.db.pool.query(`INSERT INTO "${schema}"."${tableId}" ("${fieldId}") VALUES ('12'), ('twelve')`);
    const before = await metadataSnapshot();
    const response = await send('patch', `/api/v1/bases/${baseId}/tables/Tasks/fields/${fieldId}`)
      .send({ name: 'Quantity', type: 'number' })
      .expect(400);
    expect(response.body.error.message).toMatch(/cannot convert field "Notes" to number: .*twelve/);
    expect(await metadataSnapshot()).toEqual(before);
    expect((await columnsOf(h.db, schema, tableId))[fieldId]).toBe('text');
    await h.db.pool.query(`DELETE FROM "${schema}"."${tableId}"`);
  });

  it('when the physical table is not what the metadata expects (500, nothing half-written)', async () => {
    const created = await send('post', `/api/v1/bases/${baseId}/tables`)
      .send({ name: 'Fragile', fields: [{ name: 'N', type: 'number' }] })
      .expect(201);
    // CASCADE: the views of read-only SQL read the table too.
    await h.db.pool.query(`DROP TABLE "${schemaNameOf(baseId)}"."${created.body.id}" CASCADE`);
    const before = await metadataSnapshot();
    const response = await send('post', `/api/v1/bases/${baseId}/tables/Fragile/fields`)
      .send({ name: 'Extra', type: 'date' })
      .expect(500);
    expect(response.body).toEqual({
      error: { code: 'INTERNAL_SERVER_ERROR', message: 'An internal error occurred' },
    });
    expect(await metadataSnapshot()).toEqual(before);
  });
});
