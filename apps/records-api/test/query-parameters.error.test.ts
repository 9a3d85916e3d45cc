import { randomUUID } from 'node:crypto';
import { operations } from '../src/http/openapi/document';
import * as ex from '../src/http/openapi/examples';
import type { Operation } from '../src/http/openapi/operation';
import { databaseSnapshot, type Harness, startHarness } from './harness';
import { contractOutcome, describeOperation, fillPath } from './route-table';

/**
 * A query parameter a route does not take is refused (400, naming it), as an unknown body key is:
 * a misspelt `?fields=` or `?suppressWebhooks=` silently ignored would answer, or write, something
 * other than what the caller asked for. Every keyed route of the document is called; the check
 * comes before any lookup, so the ids need only be well formed.
 */

const keyed = operations.filter(
  (op) => op.servers === undefined && op.access !== 'public' && !op.path.startsWith('/admin/'),
);

const wellFormedIds: Record<string, string> = {
  databaseId: ex.DATABASE_ID,
  tableId: ex.TABLE_ID,
  recordId: ex.RECORD_ID,
  revisionId: '1017-1',
  fieldId: 'fldq2W8rT5yU7iO9pA',
  webhookId: randomUUID(),
  viewId: ex.view.id,
  deliveryId: randomUUID(),
  importId: ex.IMPORT_ID,
  apiKeyId: ex.API_KEY_ID,
};

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const call = (op: Operation, query: string) =>
  h.api[op.method as 'get' | 'post' | 'patch' | 'delete' | 'put'](`${fillPath(op, wellFormedIds)}?${query}`)
    .set('Authorization', h.bearer(h.rootKey))
    .send(op.bodyExample as object);

it('covers the routes that take a key', () => {
  expect(keyed.length).toBeGreaterThan(30);
});

it.each(keyed.map((op) => [describeOperation(op), op] as const))(
  '%s refuses a parameter it does not take, and writes nothing',
  async (_name, op) => {
    const before = await databaseSnapshot(h.db);
    const response = await call(op, 'suppresWebhooks=true&fields=Name');
    expect(contractOutcome(op, response)).toEqual({
      status: 400,
      code: 'BAD_REQUEST',
    });
    expect(response.body.error.message).toContain('query: unknown parameter');
    expect(response.body.error.message).toContain('"suppresWebhooks"');
    expect(await databaseSnapshot(h.db)).toEqual(before);
  },
);

it('still takes the parameters a route documents', async () => {
  const getRecord = operations.find((op) => op.operationId === 'getRecord')!;
  const response = await call(getRecord, 'fields=Name&expand=Company');
  // Past the query check: the example database does not exist, so the lookup answers.
  expect(response.status).toBe(404);
});
