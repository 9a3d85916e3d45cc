/**
 * Fuzzing every JSON route of the API from its schema.
 *
 * The routes come from the OpenAPI document (every operation under /api/v1; the document is
 * checked against the routers by openapi.routes.test.ts), so a new route is fuzzed without being
 * listed here. Each request is valid-shaped (fast-check arbitraries derived from the document's
 * JSON Schemas, which zod generates from the contracts) with hostile values planted at random
 * places: NUL, lone surrogates, invalid UTF-8, 1 MB strings, nesting 10,000 deep, arrays of
 * 100,000 items, 1e308 / -0 / 1e309 / "NaN", wrong types, `__proto__` and `constructor` keys; path
 * parameters and query strings get fixture ids, generated values and raw hostile escapes.
 *
 * Properties, per request:
 * - the status is never 5xx;
 * - the answer comes within the statement timeout (2 s here) plus a margin;
 * - a refused request (4xx) leaves `databaseSnapshot` unchanged. Writes are checked one by one
 *   (a success changes the baseline); GETs, which never write, are checked in batches.
 * A failure prints the request that caused it, shrunk.
 *
 * Short run (in `npm test`): 25 requests per route. Long run:
 *   FUZZ_RUNS=1000 npx jest test/fuzz.test.ts test/fuzz.uploads.test.ts
 * (requests per route; with FUZZ_RUNS set, per-route figures are printed at the end;
 * FUZZ_SEED=<n> replays a run; FUZZ_DEBUG=<part of a path> prints each request of the matching
 * routes with its answer.)
 */
import { documentExamples, documentedRoutes, type Known } from './fuzz-routes';
import {
  type Figures,
  FUZZ,
  type FuzzOrigin,
  fuzzRoute,
  printFigures,
  ROUTE_TIMEOUT_MS,
  serveForFuzz,
} from './fuzz-run';
import { createBase, type Harness, startHarness } from './harness';

const { routes, components } = documentedRoutes();
const examples = documentExamples();

let h: Harness;
let served: { origin: FuzzOrigin; close(): Promise<void> } | undefined;
let origin: FuzzOrigin;
let root: string;

beforeAll(async () => {
  h = await startHarness({ statementTimeoutMs: FUZZ.statementTimeoutMs });
  root = h.bearer(h.rootKey);
  served = await serveForFuzz(h.app);
  origin = served.origin;
});

afterAll(async () => {
  await served?.close();
  await h?.close();
});

interface Field {
  id: string;
  name: string;
  type: string;
}

/** Removes what earlier routes' requests created, then builds the fixture each route starts from. */
async function resetFixture(): Promise<{ known: Known; fieldTypes: Record<string, string> }> {
  const bases = await h.api.get('/api/v1/bases').set('Authorization', root).expect(200);
  for (const base of bases.body.bases as { id: string }[])
    await h.api.delete(`/api/v1/bases/${base.id}`).set('Authorization', root).expect(200);
  const keys = await h.api.get('/api/v1/api-keys').set('Authorization', root).expect(200);
  for (const key of keys.body.apiKeys as { id: string }[])
    await h.api.delete(`/api/v1/api-keys/${key.id}`).set('Authorization', root).expect(200);

  const created = await createBase(h, {
    name: 'Fuzz',
    tables: [
      {
        name: 'T',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Notes', type: 'long_text' },
          { name: 'Email', type: 'email' },
          { name: 'Site', type: 'url' },
          { name: 'Phone', type: 'phone_number' },
          { name: 'Amount', type: 'number' },
          { name: 'Price', type: 'currency' },
          { name: 'Share', type: 'percent' },
          { name: 'Stars', type: 'rating' },
          { name: 'Took', type: 'duration' },
          { name: 'Day', type: 'date' },
          { name: 'At', type: 'datetime' },
          {
            name: 'Status',
            type: 'single_select',
            template: { options: [{ name: 'Open' }, { name: 'Won' }] },
          },
          { name: 'Tags', type: 'multiple_select', template: { options: [{ name: 'a' }, { name: 'b' }] } },
          { name: 'Done', type: 'checkbox' },
          { name: 'Files', type: 'attachments' },
        ],
      },
      { name: 'U', fields: [{ name: 'Title', type: 'single_line_text' }] },
    ],
  });
  const databaseId: string = created.body.id;
  const [table, other] = created.body.tables as {
    id: string;
    name: string;
    fields: Field[];
  }[];
  const tables = `/api/v1/bases/${databaseId}/tables`;
  const link = await h.api
    .post(`${tables}/${table!.id}/fields`)
    .set('Authorization', root)
    .send({ name: 'Link', type: 'linked_record', template: { tableId: other!.id } })
    .expect(201);
  const linked = await h.api
    .post(`${tables}/${other!.id}/records`)
    .set('Authorization', root)
    .send({ record: { Title: 'other' } })
    .expect(201);
  const recordIds: string[] = [];
  for (const values of [
    {
      Name: 'first',
      Amount: 1.5,
      Day: '2024-01-31',
      Status: 'Open',
      Tags: ['a'],
      Done: true,
      Link: [linked.body.id],
    },
    { Name: 'second', Email: 'a@example.com', At: '2024-05-01T10:00:00Z', Stars: 3 },
    {},
  ]) {
    const record = await h.api
      .post(`${tables}/${table!.id}/records`)
      .set('Authorization', root)
      .send({ record: values })
      .expect(201);
    recordIds.push(record.body.id);
  }
  const webhook = await h.api
    .post(`/api/v1/bases/${databaseId}/webhooks`)
    .set('Authorization', root)
    .send({ url: 'http://127.0.0.1:9/hook', events: ['record.created'] })
    .expect(201);
  const view = await h.api
    .post(`/api/v1/bases/${databaseId}/tables/${table!.id}/views`)
    .set('Authorization', root)
    .send({ name: 'Fuzzed', fields: [table!.fields[0]!.id] })
    .expect(201);
  const key = await h.api
    .post('/api/v1/api-keys')
    .set('Authorization', root)
    .send({ name: 'fuzz', scopes: ['records:read'], databaseIds: [databaseId] })
    .expect(201);
  // The query role of read-only SQL is made on a database's first query, refused or not: made
  // here, so that the fuzzed queries start from a database that has it.
  await h.api
    .post(`/api/v1/bases/${databaseId}/sql`)
    .set('Authorization', root)
    .send({ query: 'SELECT 1' })
    .expect(200);
  const fields = [...table!.fields, link.body as Field];
  const known = {
    databaseId: [databaseId],
    tableId: [table!.id, table!.name, other!.id],
    fieldId: fields.map((field) => field.id),
    fieldNames: fields.map((field) => field.name),
    recordId: [...recordIds, linked.body.id],
    webhookId: [String(webhook.body.id)],
    viewId: [view.body.id, view.body.name],
    apiKeyId: [key.body.id],
  };
  const fieldTypes: Record<string, string> = {};
  for (const field of fields) {
    fieldTypes[field.name] = field.type;
    fieldTypes[field.id] = field.type;
  }
  return { known, fieldTypes };
}

const figures = new Map<string, Figures>();
afterAll(() => {
  if (FUZZ.long) printFigures(figures);
});

test('the route table is read from the document', () => {
  // A guard against a document change that would silently leave the fuzzer nothing to send.
  expect(routes.length).toBeGreaterThanOrEqual(30);
  expect(routes.filter((route) => route.body).length).toBeGreaterThanOrEqual(15);
});

describe.each(routes.map((route) => [`${route.method.toUpperCase()} ${route.path}`, route] as const))(
  '%s',
  (name, route) => {
    test(
      'never a 5xx, never a hang, and nothing written when refused',
      async () => {
        const { known, fieldTypes } = await resetFixture();
        const context = { components, fixture: Object.values(known).flat(), examples, fieldTypes };
        const counts: Figures = { requests: 0, durationMs: 0, statuses: {}, slowestMs: 0 };
        figures.set(name, counts);
        await fuzzRoute({ origin, authorization: root, db: h.db }, route, context, known, counts);
      },
      ROUTE_TIMEOUT_MS,
    );
  },
);

/**
 * The same routes through a replica whose capacity bounds bite: a rate limit of a few requests,
 * one request and one SQL query in flight per key (the fixture's own work holds one more at
 * times). Answers may then be 429, always with Retry-After, and still never a 5xx or a write by
 * a refused request.
 */
describe('under the capacity bounds', () => {
  let bounded: Harness;
  let boundedServed: { origin: FuzzOrigin; close(): Promise<void> } | undefined;
  beforeAll(async () => {
    bounded = await startHarness({
      sameDatabaseAs: h,
      statementTimeoutMs: FUZZ.statementTimeoutMs,
      ratePerSecond: 5,
      rateBurst: 3,
      requestsInFlightPerKey: 1,
      sqlInFlightPerBase: 1,
    });
    boundedServed = await serveForFuzz(bounded.app);
  });
  afterAll(async () => {
    await boundedServed?.close();
    await bounded?.close();
  });

  const runs = Math.max(5, Math.ceil(FUZZ.runs / 5));
  test.each(routes.map((route) => [`${route.method.toUpperCase()} ${route.path}`, route] as const))(
    '%s: never a 5xx, a 429 with Retry-After, nothing written when refused',
    async (name, route) => {
      const { known, fieldTypes } = await resetFixture();
      const context = { components, fixture: Object.values(known).flat(), examples, fieldTypes };
      const counts: Figures = { requests: 0, durationMs: 0, statuses: {}, slowestMs: 0 };
      figures.set(`${name} (bounded)`, counts);
      const target = {
        origin: (boundedServed as { origin: FuzzOrigin }).origin,
        authorization: root,
        db: h.db,
      };
      await fuzzRoute(target, route, context, known, counts, runs);
    },
    ROUTE_TIMEOUT_MS,
  );
});
