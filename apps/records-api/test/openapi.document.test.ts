import { apiKeyScopes } from '@recordbase/contracts/api-keys';
import { eventEnvelopeSchema } from '@recordbase/contracts/events';
import { fieldTypes } from '@recordbase/contracts/fields';
import { webhookEventTypes } from '@recordbase/contracts/webhooks';
import { openApiDocument, operations } from '../src/http/openapi/document';
import * as ex from '../src/http/openapi/examples';
import { type Operation, scopesOpening } from '../src/http/openapi/operation';
import { type Harness, startHarness } from './harness';
import { validateOpenApi } from './openapi-validate';

/** The generated document: valid OpenAPI 3.1, examples the contracts accept, served without a key. */

describe('the OpenAPI document', () => {
  const document = openApiDocument();

  test('validates as OpenAPI 3.1 against the specification schema', () => {
    const result = validateOpenApi(document);
    expect(result.version).toBe('3.1');
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  test('the validator refuses a broken copy (it is not a rubber stamp)', () => {
    const broken = structuredClone(document) as unknown as { paths: Record<string, unknown> };
    broken.paths['/api/v1/bases'] = { get: { responses: 'none' } };
    expect(validateOpenApi(broken).valid).toBe(false);
  });

  test('every operation has a unique id, a summary and an answer', () => {
    const ids = operations.map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const op of operations) {
      const rendered = document.paths?.[op.path]?.[op.method];
      expect(rendered?.operationId).toBe(op.operationId);
      expect(rendered?.summary).toBeTruthy();
      expect(Object.keys(rendered?.responses ?? {})).toContain(String(op.status ?? 200));
    }
  });

  test.each(operations.filter((op) => op.body !== undefined).map((op) => [op.operationId, op] as const))(
    'the request example of %s is accepted by its contract',
    (_id, op) => {
      expect(op.bodyExample).toBeDefined();
      const parsed = op.body!.safeParse(op.bodyExample);
      expect(parsed.error?.issues).toBeUndefined();
    },
  );

  test.each(operations.filter((op) => op.response !== undefined).map((op) => [op.operationId, op] as const))(
    'the answer example of %s matches its contract',
    (_id, op) => {
      expect(op.responseExample).toBeDefined();
      const parsed = op.response!.safeParse(op.responseExample);
      expect(parsed.error?.issues).toBeUndefined();
    },
  );

  test('a contract refuses an example that is wrong (the example checks can fail)', () => {
    const listRecords = operations.find((op) => op.operationId === 'listRecords')!;
    expect(listRecords.body!.safeParse({ limit: 5000 }).success).toBe(false);
    expect(listRecords.body!.safeParse({ filter: { field: 'Status', equalz: 'Open' } }).success).toBe(false);
  });

  test('the filter of list-records is described with its conditions, groups and operators', () => {
    const body =
      document.paths?.['/api/v1/bases/{databaseId}/tables/{tableId}/records/list']?.post?.requestBody;
    const schema = JSON.stringify(body);
    expect(schema).toContain('"filter":{"$ref":"#/components/schemas/Filter"}');
    const components = document.components?.schemas ?? {};
    const condition = components.FilterCondition as { properties: Record<string, unknown> };
    for (const operator of ['equals', 'contains', 'in', 'is_empty', 'greater_than_or_equal_to']) {
      expect(condition.properties).toHaveProperty(operator);
    }
    expect(JSON.stringify(components.FilterGroup)).toContain('"$ref":"#/components/schemas/Filter"');
  });

  test('every field type has its template and its written value described', () => {
    const components = document.components?.schemas ?? {};
    for (const type of fieldTypes) {
      expect(components).toHaveProperty(`Template_${type}`);
      expect(components).toHaveProperty(`FieldValue_${type}`);
    }
    const currency = components.Template_currency as { properties: Record<string, unknown> };
    expect(Object.keys(currency.properties).sort()).toEqual(['currencySymbol', 'decimalPlaces']);
    const createField = JSON.stringify(
      document.paths?.['/api/v1/bases/{databaseId}/tables/{tableId}/fields']?.post?.requestBody,
    );
    expect(createField).toContain('#/components/schemas/FieldInput');
    const createRecord = JSON.stringify(
      document.paths?.['/api/v1/bases/{databaseId}/tables/{tableId}/records']?.post?.requestBody,
    );
    expect(createRecord).toContain('#/components/schemas/RecordValues');
  });

  test('every webhook event is described, with an example payload the contract accepts', () => {
    expect(Object.keys(document.webhooks ?? {}).sort()).toEqual([...webhookEventTypes].sort());
    for (const type of webhookEventTypes) {
      const body = document.webhooks?.[type]?.post?.requestBody as {
        content: Record<string, { example: unknown }>;
      };
      const example = body.content['application/json']!.example;
      expect(eventEnvelopeSchema.safeParse(example).error?.issues).toBeUndefined();
      expect((example as { type: string }).type).toBe(type);
    }
  });

  test('no request property is left without a shape where the contracts hide it behind a check', () => {
    const empty: string[] = [];
    // Every `properties` of every request schema: a property rendered as {} would mean "anything".
    const visit = (node: unknown, where: string): void => {
      if (Array.isArray(node)) {
        node.forEach((item, index) => {
          visit(item, `${where}/${index}`);
        });
        return;
      }
      if (node === null || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (key === 'example' || key === 'examples') continue;
        if (key === 'properties' && value && typeof value === 'object') {
          for (const [name, schema] of Object.entries(value)) {
            if (schema && typeof schema === 'object' && Object.keys(schema).length === 0)
              empty.push(`${where}/${name}`);
          }
        }
        visit(value, `${where}/${key}`);
      }
    };
    for (const op of operations) visit(document.paths?.[op.path]?.[op.method]?.requestBody, op.operationId);
    visit(document.components?.schemas, 'components');
    expect(empty).toEqual([]);
  });
});

describe('serving the reference', () => {
  let h: Harness;
  beforeAll(async () => {
    // Every operation is called below; the rate limit is not what these tests are about.
    h = await startHarness({ ratePerSecond: 10_000, rateBurst: 10_000 });
  });
  afterAll(async () => {
    await h.close();
  });

  test('GET /api/v1/openapi.json answers the document without a key', async () => {
    const res = await h.api.get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
  });

  test('the rest of /api/v1 still needs a key', async () => {
    const res = await h.api.get('/api/v1/bases');
    expect(res.status).toBe(401);
  });

  test('GET /docs answers the page, whose scripts and styles are all local, under a self-only CSP', async () => {
    const res = await h.api.get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    const sources = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(sources.length).toBeGreaterThanOrEqual(3);
    for (const source of sources) {
      expect(source.startsWith('/docs/assets/')).toBe(true);
      const asset = await h.api.get(source);
      expect(asset.status).toBe(200);
      expect(asset.body.length ?? asset.text.length).toBeGreaterThan(0);
    }
  });

  test('only the page assets are served from the UI package', async () => {
    expect((await h.api.get('/docs/assets/index.html')).status).toBe(404);
    expect((await h.api.get('/docs/assets/package.json')).status).toBe(404);
    expect((await h.api.get('/docs/assets/../package.json')).status).toBe(404);
  });
});

describe('what the reference says about keys', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ ratePerSecond: 10_000, rateBurst: 10_000 });
  });
  afterAll(async () => {
    await h.close();
  });

  const samples: Record<string, string> = {
    databaseId: ex.DATABASE_ID,
    tableId: ex.TABLE_ID,
    fieldId: ex.FIELD_IDS.status,
    recordId: ex.RECORD_ID,
    revisionId: '1017-1',
    webhookId: '42',
    viewId: ex.view.id,
    deliveryId: '1093',
    importId: ex.IMPORT_ID,
    apiKeyId: ex.API_KEY_ID,
  };
  const urlOf = (op: Operation) => op.path.replace(/\{(\w+)\}/g, (_all, name: string) => samples[name]!);
  const call = (op: Operation, authorization?: string) => {
    const request = h.api[op.method](urlOf(op));
    if (authorization) request.set('Authorization', authorization);
    return op.bodyExample === undefined ? request : request.send(op.bodyExample as object);
  };
  // The records-api operations; upload-service's are checked by its own tests.
  const apiOperations = operations.filter((op) => op.path.startsWith('/api/v1/') && op.access !== 'public');

  test.each(apiOperations.map((op) => [op.operationId, op] as const))(
    '%s refuses a request without a key, as documented',
    async (_id, op) => {
      const res = await call(op);
      expect(res.status).toBe(401);
    },
  );

  test.each(apiOperations.map((op) => [op.operationId, op] as const))(
    '%s refuses a key lacking the documented scope (or a key that is not root)',
    async (_id, op) => {
      const others = apiKeyScopes.filter((scope) => !scopesOpening(op.access).includes(scope));
      const created = await h.api
        .post('/api/v1/api-keys')
        .set('Authorization', h.bearer(h.rootKey))
        .send({ name: `all but ${op.operationId}`, scopes: others });
      expect(created.status).toBe(201);
      const res = await call(op, h.bearer(created.body.key));
      expect(res.status).toBe(403);
    },
  );
});
