import { randomUUID } from 'node:crypto';
import { type ApiKeyScope, apiKeyScopes } from '@recordbase/contracts/api-keys';
import { createBase, databaseSnapshot, type Harness, startHarness } from './harness';

/**
 * Every route against a key of every single scope: the route's scope (or root) is required, a
 * refusal is 403 naming the scope and writes nothing, and the refusal comes before the body is
 * read, so a key without the right costs the API no parsing.
 */

let h: Harness;
let root: string;
let baseId: string;
let tableId: string;
let fieldId: string;
let recordId: string;
let webhookId: number;
const keys = new Map<ApiKeyScope, string>();
let otherDatabaseKey: string;

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Scopes',
    tables: [{ name: 'Tasks', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  baseId = base.body.id;
  tableId = base.body.tables[0].id;
  fieldId = base.body.tables[0].fields[0].id;
  const created = await h.api
    .post(`/api/v1/bases/${baseId}/tables/${tableId}/records`)
    .set('Authorization', root)
    .send({ record: { Name: 'secret' } })
    .expect(201);
  recordId = created.body.id;
  const webhook = await h.api
    .post(`/api/v1/bases/${baseId}/webhooks`)
    .set('Authorization', root)
    .send({ url: 'https://example.com/hook', events: ['record.created'] })
    .expect(201);
  webhookId = webhook.body.id;
  for (const scope of apiKeyScopes) {
    const key = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', root)
      .send({ name: scope, scopes: [scope] })
      .expect(201);
    keys.set(scope, h.bearer(key.body.key));
  }
  const other = await createBase(h, { name: 'Other' });
  const everything = await h.api
    .post('/api/v1/api-keys')
    .set('Authorization', root)
    .send({ name: 'other database', scopes: apiKeyScopes, databaseIds: [other.body.id] })
    .expect(201);
  otherDatabaseKey = h.bearer(everything.body.key);
});
afterAll(() => h.close());

type Method = 'get' | 'post' | 'patch' | 'delete';
interface Route {
  method: Method;
  /** Under /api/v1, with :databaseId, :tableId, :fieldId, :recordId, :webhookId placeholders. */
  path: string;
  /** For destructive routes: the same route aimed at something that does not exist. */
  missing?: string;
  /** 'root' for the API-key routes. */
  needs: ApiKeyScope | 'root';
  /** A valid body, for routes that take one. */
  body?: object;
}

const T = '/bases/:databaseId/tables/:tableId';
const R = `${T}/records`;
const W = '/bases/:databaseId/webhooks/:webhookId';

const routes: Route[] = [
  { method: 'post', path: '/api-keys', needs: 'root', body: { name: 'k', scopes: ['schema:read'] } },
  { method: 'get', path: '/api-keys', needs: 'root' },
  { method: 'delete', path: '/api-keys/:randomId', needs: 'root' },
  { method: 'post', path: '/bases', needs: 'schema:write', body: { name: 'New' } },
  { method: 'get', path: '/bases', needs: 'schema:read' },
  { method: 'get', path: '/bases/:databaseId', needs: 'schema:read' },
  { method: 'patch', path: '/bases/:databaseId', needs: 'schema:write', body: { name: 'Renamed' } },
  { method: 'delete', path: '/bases/:databaseId', missing: '/bases/:randomId', needs: 'schema:write' },
  {
    method: 'post',
    path: '/bases/:databaseId/tables',
    needs: 'schema:write',
    body: { name: 'More', fields: [{ name: 'A', type: 'number' }] },
  },
  { method: 'get', path: '/bases/:databaseId/tables', needs: 'schema:read' },
  { method: 'get', path: T, needs: 'schema:read' },
  { method: 'patch', path: T, needs: 'schema:write', body: { name: 'Jobs' } },
  { method: 'delete', path: T, missing: '/bases/:databaseId/tables/Nothing', needs: 'schema:write' },
  { method: 'post', path: `${T}/fields`, needs: 'schema:write', body: { name: 'Due', type: 'date' } },
  { method: 'get', path: `${T}/fields/:fieldId`, needs: 'schema:read' },
  { method: 'patch', path: `${T}/fields/:fieldId`, needs: 'schema:write', body: { name: 'Title' } },
  { method: 'delete', path: `${T}/fields/:fieldId`, missing: `${T}/fields/Nothing`, needs: 'schema:write' },
  { method: 'post', path: `${R}/list`, needs: 'records:read', body: { limit: 5 } },
  { method: 'post', path: `${R}/bulk`, needs: 'records:write', body: { records: [{ Name: 'x' }] } },
  { method: 'post', path: `${R}/bulk-delete`, needs: 'records:write', body: { ids: [':recordId'] } },
  { method: 'post', path: R, needs: 'records:write', body: { record: { Name: 'y' } } },
  { method: 'get', path: `${R}/:recordId`, needs: 'records:read' },
  { method: 'patch', path: `${R}/:recordId`, needs: 'records:write', body: { record: { Name: 'z' } } },
  { method: 'delete', path: `${R}/:recordId`, missing: `${R}/:randomId`, needs: 'records:write' },
  {
    method: 'post',
    path: '/bases/:databaseId/webhooks',
    needs: 'webhooks:manage',
    body: { url: 'https://example.com/other', events: ['record.updated'] },
  },
  { method: 'get', path: '/bases/:databaseId/webhooks', needs: 'webhooks:manage' },
  { method: 'get', path: W, needs: 'webhooks:manage' },
  { method: 'patch', path: W, needs: 'webhooks:manage', body: { active: false } },
  { method: 'delete', path: W, missing: '/bases/:databaseId/webhooks/999999', needs: 'webhooks:manage' },
  { method: 'get', path: `${W}/deliveries`, needs: 'webhooks:manage' },
  { method: 'post', path: `${W}/deliveries/1/retry`, needs: 'webhooks:manage' },
  { method: 'get', path: '/bases/:databaseId/sql/schema', needs: 'sql:read' },
  { method: 'post', path: '/bases/:databaseId/sql', needs: 'sql:read', body: { query: 'SELECT 1' } },
];

/** Fills the placeholders of a path (or of a body) with this run's ids. */
function resolve(text: string): string {
  return text
    .replaceAll(':databaseId', baseId)
    .replaceAll(':tableId', tableId)
    .replaceAll(':fieldId', fieldId)
    .replaceAll(':recordId', recordId)
    .replaceAll(':webhookId', String(webhookId))
    .replaceAll(':randomId', randomUUID());
}

const describeRoute = (route: Route) => `${route.method.toUpperCase()} ${route.path}`;
const bodyOf = (route: Route) => (route.body ? JSON.parse(resolve(JSON.stringify(route.body))) : undefined);

function send(route: Route, authorization: string, body?: string | object, path = route.path) {
  const request = h.api[route.method](`/api/v1${resolve(path)}`).set('Authorization', authorization);
  if (typeof body === 'string') return request.set('content-type', 'application/json').send(body);
  return body === undefined ? request : request.send(body);
}

describe('every route requires its scope', () => {
  const cases = routes.flatMap((route) =>
    apiKeyScopes.filter((scope) => scope !== route.needs).map((scope) => [route, scope] as const),
  );

  it.each(cases.map(([route, scope]) => [describeRoute(route), scope, route]))(
    '%s refuses a key with only %s: 403, nothing written',
    async (_name, scope, route) => {
      const before = await databaseSnapshot(h.db);
      const response = await send(route, keys.get(scope)!, bodyOf(route));
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('FORBIDDEN');
      expect(response.body.error.message).toContain(route.needs === 'root' ? 'root' : route.needs);
      expect(await databaseSnapshot(h.db)).toEqual(before);
    },
  );

  it.each(routes.filter((route) => route.needs !== 'root').map((route) => [describeRoute(route), route]))(
    '%s admits a key with its scope (malformed JSON reaches the parser)',
    async (_name, route) => {
      const response = await send(
        route,
        keys.get(route.needs as ApiKeyScope)!,
        route.body ? '{"oops' : undefined,
        route.missing ?? route.path,
      );
      expect(response.status).not.toBe(403);
      expect(response.status).not.toBe(401);
      if (route.body) {
        expect(response.status).toBe(400);
        expect(response.body.error.message).toMatch(/Malformed JSON/);
      }
    },
  );
});

describe('permission comes before the body', () => {
  const withBodies = routes.filter((route) => route.body);

  it.each(withBodies.map((route) => [describeRoute(route), route]))(
    '%s answers a key without the scope 403 without parsing its malformed body',
    async (_name, route) => {
      const wrong = apiKeyScopes.find((scope) => scope !== route.needs)!;
      const response = await send(route, keys.get(wrong)!, '{"not json');
      expect(response.status).toBe(403);
    },
  );

  it.each(
    withBodies
      .filter((route) => route.path.includes(':databaseId'))
      .map((route) => [describeRoute(route), route]),
  )('%s answers a key of another database 404 without parsing its malformed body', async (_name, route) => {
    const response = await send(route, otherDatabaseKey, '{"not json');
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('NOT_FOUND');
  });

  it('refuses a 9 MB body of a key without the scope as fast as an empty one: 403 either way', async () => {
    const huge = `{"records":[{${Array.from({ length: 600_000 }, (_, i) => `"k${i}":1`).join(',')}}]}`;
    const response = await send(
      routes.find((r) => r.path.endsWith('/bulk'))!,
      keys.get('records:read')!,
      huge,
    );
    expect(response.status).toBe(403);
  });
});

describe('record values go only to keys that may read them', () => {
  const writeOnly = () => keys.get('records:write')!;
  const withoutValues = {
    id: expect.any(String),
    createdAt: expect.any(String),
    updatedAt: expect.any(String),
  };

  async function keyWith(scopes: ApiKeyScope[]): Promise<string> {
    const created = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', root)
      .send({ name: scopes.join('+'), scopes })
      .expect(201);
    return h.bearer(created.body.key);
  }

  it('a write-only key cannot read a record through PATCH {}: it gets id and times only', async () => {
    const response = await h.api
      .patch(`/api/v1/bases/${baseId}/tables/${tableId}/records/${recordId}`)
      .set('Authorization', writeOnly())
      .send({ record: {} })
      .expect(200);
    expect(response.body).toEqual(withoutValues);
    expect(JSON.stringify(response.body)).not.toContain('secret');
  });

  it('a write-only key creates records and learns their ids, not their values', async () => {
    const one = await h.api
      .post(`/api/v1/bases/${baseId}/tables/${tableId}/records`)
      .set('Authorization', writeOnly())
      .send({ record: { Name: 'from a form' } })
      .expect(201);
    expect(one.body).toEqual(withoutValues);
    const bulk = await h.api
      .post(`/api/v1/bases/${baseId}/tables/${tableId}/records/bulk`)
      .set('Authorization', writeOnly())
      .send({ records: [{ Name: 'a' }, { Name: 'b' }] })
      .expect(201);
    expect(bulk.body).toEqual({
      success: true,
      records: [withoutValues, withoutValues],
      createdRecordIds: bulk.body.records.map((record: { id: string }) => record.id),
      updatedRecordIds: [],
    });
    const stored = await h.api
      .get(`/api/v1/bases/${baseId}/tables/${tableId}/records/${one.body.id}`)
      .set('Authorization', root)
      .expect(200);
    expect(stored.body.fields.Name).toBe('from a form');
  });

  it('an upsert with matchOn needs records:read too: it looks records up by value', async () => {
    const before = await databaseSnapshot(h.db);
    const response = await h.api
      .post(`/api/v1/bases/${baseId}/tables/${tableId}/records/bulk`)
      .set('Authorization', writeOnly())
      .send({ records: [{ Name: 'secret' }], matchOn: [fieldId] })
      .expect(403);
    expect(response.body.error.message).toContain('records:read');
    expect(await databaseSnapshot(h.db)).toEqual(before);
    const both = await keyWith(['records:read', 'records:write']);
    const upserted = await h.api
      .post(`/api/v1/bases/${baseId}/tables/${tableId}/records/bulk`)
      .set('Authorization', both)
      .send({ records: [{ Name: 'secret' }], matchOn: [fieldId] })
      .expect(200);
    expect(upserted.body.records[0].id).toBe(recordId);
  });

  it('a webhook of record events needs records:read, of table and field events schema:read', async () => {
    const hooks = `/api/v1/bases/${baseId}/webhooks`;
    const manageOnly = keys.get('webhooks:manage')!;
    const before = await databaseSnapshot(h.db);
    for (const events of [['record.created'], ['table.created'], ['field.deleted']]) {
      const refused = await h.api
        .post(hooks)
        .set('Authorization', manageOnly)
        .send({ url: 'https://example.com/spy', events })
        .expect(403);
      expect(refused.body.error.message).toContain(
        events[0]!.startsWith('record') ? 'records:read' : 'schema:read',
      );
    }
    // Nor can it point an existing record webhook at its own address, or make it send again.
    await h.api
      .patch(`${hooks}/${webhookId}`)
      .set('Authorization', manageOnly)
      .send({ url: 'https://example.com/spy' })
      .expect(403);
    expect(await databaseSnapshot(h.db)).toEqual(before);
    const reader = await keyWith(['webhooks:manage', 'records:read']);
    await h.api
      .post(hooks)
      .set('Authorization', reader)
      .send({ url: 'https://example.com/ok', events: ['record.created'] })
      .expect(201);
    await h.api
      .post(hooks)
      .set('Authorization', reader)
      .send({ url: 'https://example.com/no', events: ['table.created'] })
      .expect(403);
    const schemaReader = await keyWith(['webhooks:manage', 'schema:read']);
    await h.api
      .post(hooks)
      .set('Authorization', schemaReader)
      .send({ url: 'https://example.com/ok2', events: ['table.created', 'field.updated'] })
      .expect(201);
  });

  it('a webhooks:manage key can still list, read, switch off and delete webhooks', async () => {
    const manageOnly = keys.get('webhooks:manage')!;
    const hooks = `/api/v1/bases/${baseId}/webhooks`;
    await h.api.get(hooks).set('Authorization', manageOnly).expect(200);
    await h.api.get(`${hooks}/${webhookId}/deliveries`).set('Authorization', manageOnly).expect(200);
    const created = await h.api
      .post(hooks)
      .set('Authorization', root)
      .send({ url: 'https://example.com/temp', events: ['record.deleted'] })
      .expect(201);
    await h.api.delete(`${hooks}/${created.body.id}`).set('Authorization', manageOnly).expect(200);
  });
});
