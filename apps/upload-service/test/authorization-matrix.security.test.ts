import { apiKeyScopes } from '@recordbase/contracts/api-keys';
import { attachmentUploadHeaders } from '@recordbase/contracts/uploads';
import { API_KEYS_CHANNEL, notifyStatement } from '@recordbase/db';
import { createInFlightLimiter, requestsOfKey } from '@recordbase/server-kit/in-flight';
import { createRateLimiter } from '@recordbase/server-kit/rate-limit';
import type { Express } from 'express';
import supertest from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { operations } from '../../records-api/src/http/openapi/document';
import { type Operation, scopesOpening } from '../../records-api/src/http/openapi/operation';
import { databaseSnapshot } from '../../records-api/test/harness';
import {
  describeOperation,
  fillPath,
  type KeyCase,
  keyCases,
  MALFORMED_AUTHORIZATIONS,
  refusedAsExpected,
  servedRoutes,
} from '../../records-api/test/route-table';
import { insertBase, insertKey, type TestBase } from './fixtures';
import { type Harness, startHarness } from './harness';
import { excelWorkbook, onePixelPng } from './sniff-files';

/**
 * The authorization matrix of upload-service: every route of the OpenAPI document that
 * upload-service serves (uploads, downloads, operational routes), called with each of the five
 * keys of `keyCases`, answers exactly what the contract says and changes nothing: neither the
 * database nor the storage. Uploads carry a file each route accepts and headers naming real
 * fixtures, so each refusal is about the key alone. The first test holds the list to the app's
 * own routes, so a new route cannot be left out.
 */

const served = operations.filter((op) => op.servers !== undefined || op.tag === 'Operations');

let h: Harness;
let app: Express;
let api: TestAgent;
let root: string;
let base: TestBase;
let otherKeyId: string;
/** A stored attachment of `base`, for the download route. */
let attachmentKey: string;
const files = new Map<string, { bytes: Buffer; name: string; type: string }>();
const authorization = new Map<KeyCase, (op: Operation) => string | undefined>();

beforeAll(async () => {
  h = await startHarness();
  // Many refusals in a row from one address: the failed-authentication throttle would step in.
  app = h.appWith({ AUTH_FAILURE_BURST: 10_000 });
  api = supertest(app);
  root = `Bearer ${h.rootKey}`;
  base = await insertBase(h.db);
  const other = await insertBase(h.db);
  files.set('uploadAttachment', { bytes: onePixelPng(10, 200, 10), name: 'pixel.png', type: 'image/png' });
  files.set('uploadCsv', {
    bytes: Buffer.from('Name,Amount\nAcme,10\n'),
    name: 'deals.csv',
    type: 'text/csv',
  });
  files.set('uploadXlsx', {
    bytes: await excelWorkbook(),
    name: 'contacts.xlsx',
    type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  });
  const uploaded = await upload(operation('uploadAttachment'), root).expect(201);
  attachmentKey = new URL(uploaded.body.url).pathname.replace(/^\/files\//, '');

  const allScopes = [...apiKeyScopes];
  // Works once (and is kept), then is revoked as records-api revokes: its row is deleted and the
  // commit NOTIFYs every process, which drops the keys it keeps once the notification arrives.
  const revoked = await insertKey(h.db, allScopes);
  await api.get(`/files/${attachmentKey}`).set('Authorization', revoked.authorization).expect(200);
  await h.db.prisma.$transaction([
    h.db.prisma.apiKey.delete({ where: { id: revoked.id } }),
    h.db.prisma.$executeRawUnsafe(notifyStatement(API_KEYS_CHANNEL)),
  ]);
  for (const giveUpAt = Date.now() + 10_000; ; ) {
    const { status } = await api.get(`/files/${attachmentKey}`).set('Authorization', revoked.authorization);
    if (status === 401) break;
    if (Date.now() > giveUpAt) throw new Error(`a revoked key still answered ${status} after 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const otherDatabase = await insertKey(h.db, allScopes, [other.databaseId]);
  otherKeyId = otherDatabase.id;
  const lacking = new Map<string, string>();
  for (const scope of allScopes) {
    lacking.set(
      scope,
      (
        await insertKey(
          h.db,
          allScopes.filter((s) => s !== scope),
        )
      ).authorization,
    );
  }
  authorization.set('no key', () => undefined);
  authorization.set('a revoked key', () => revoked.authorization);
  authorization.set('a key of another database', () => otherDatabase.authorization);
  authorization.set("a key lacking the route's scope", (op) => {
    // A public route needs no scope: any key that lacks one will do.
    if (op.access === 'public') return lacking.get('files:write');
    if (op.access === 'root')
      throw new Error(`${describeOperation(op)}: upload-service has no root-only route`);
    const [scope, ...more] = scopesOpening(op.access);
    if (more.length > 0)
      throw new Error(`${describeOperation(op)}: upload-service has no route of several scopes`);
    return lacking.get(scope!);
  });
});
afterAll(() => h.close());

function operation(operationId: string): Operation {
  const op = operations.find((candidate) => candidate.operationId === operationId);
  if (!op) throw new Error(`no operation ${operationId} in the document`);
  return op;
}

/** The headers an operation documents, filled from the fixtures; one the matrix cannot fill throws. */
function headersOf(op: Operation): Record<string, string> {
  const values: Record<string, string> = {
    [attachmentUploadHeaders.databaseId]: base.databaseId,
    [attachmentUploadHeaders.tableId]: base.tableId,
    [attachmentUploadHeaders.fieldId]: base.filesFieldId,
  };
  return Object.fromEntries(
    Object.keys(op.headers?.shape ?? {}).map((name) => {
      const value = values[name];
      if (value === undefined) throw new Error(`${describeOperation(op)}: no fixture for the header ${name}`);
      return [name, value];
    }),
  );
}

/** A multipart upload of the file the route accepts; a route taking a body the matrix has no file for throws. */
function upload(op: Operation, key: string | undefined, agent: TestAgent = api) {
  const file = files.get(op.operationId);
  if (!file) throw new Error(`${describeOperation(op)}: no file to upload; add one`);
  let request = agent.post(op.path).set(headersOf(op));
  if (key !== undefined) request = request.set('Authorization', key);
  return request.attach('filepond', file.bytes, { filename: file.name, contentType: file.type });
}

function send(op: Operation, key: string | undefined, agent: TestAgent = api) {
  if (op.rawBody) return upload(op, key, agent);
  if (op.body) throw new Error(`${describeOperation(op)}: a JSON body the matrix has no example for`);
  let request = agent[op.method](fillPath(op, { key: attachmentKey })).set(headersOf(op));
  if (key !== undefined) request = request.set('Authorization', key);
  return request;
}

/** Everything a request could leave behind: the database and the stored objects. */
async function everything() {
  const stored: string[] = [];
  for await (const key of h.storage.list('')) stored.push(key);
  return { database: await databaseSnapshot(h.db), stored: stored.sort() };
}

test('the matrix holds every route upload-service serves, and only those', () => {
  const tested = served.map((op) => `${op.method.toUpperCase()} ${op.path}`).sort();
  expect(servedRoutes(app).sort()).toEqual(tested);
});

/**
 * What a route answers a key the contract admits there. The import uploads name no database, so
 * a key of another database with `files:write` may upload one: the file is that key's alone (an
 * import, and a download, take only the uploader's files). Returns whether it wrote.
 */
async function expectAdmitted(
  op: Operation,
  keyCase: KeyCase,
  response: { status: number; body: { s3Key?: string } },
): Promise<boolean> {
  if (op.access === 'public') {
    expect(response.status).toBe(200);
    return false;
  }
  if (
    (op.operationId === 'uploadCsv' || op.operationId === 'uploadXlsx') &&
    keyCase === 'a key of another database'
  ) {
    expect(response.status).toBe(201);
    const row = await h.db.prisma.uploadedFile.findUnique({ where: { key: response.body.s3Key ?? '' } });
    expect(row).toMatchObject({ kind: 'import', apiKeyId: otherKeyId, databaseId: null });
    return true;
  }
  throw new Error(`${describeOperation(op)} admits ${keyCase}: the matrix does not say what it answers`);
}

describe.each(served.map((op) => [describeOperation(op), op] as const))('%s', (_name, op) => {
  test('answers each of the five keys as the contract says and changes nothing', async () => {
    let before = await everything();
    for (const keyCase of keyCases) {
      const keys =
        keyCase === 'a malformed key' ? MALFORMED_AUTHORIZATIONS : [authorization.get(keyCase)!(op)];
      for (const key of keys) {
        const response = await send(op, key);
        if (!refusedAsExpected(op, keyCase, key, response) && (await expectAdmitted(op, keyCase, response))) {
          // An admitted upload adds its one object; nothing else changes.
          const after = await everything();
          expect(after.stored).toEqual([...before.stored, response.body.s3Key].sort());
          before = after;
          continue;
        }
        expect({ keyCase, ...(await everything()) }).toEqual({ keyCase, ...before });
      }
    }
  });
});

/**
 * The bounds of a tenant's capacity, route by route: a key past its rate limit is 429 with Retry-After on
 * every route that takes a key, and an attachment past its database's storage quota is 413 naming
 * it; either changes nothing.
 */
describe('past the per-key rate limit and the storage quota', () => {
  const rate = { perSecond: 0.01, burst: 1 };
  let bounded: TestAgent;
  beforeAll(() => {
    bounded = supertest(
      h.appWith({
        AUTH_FAILURE_BURST: 10_000,
        RATE_LIMIT_PER_SECOND: rate.perSecond,
        RATE_LIMIT_BURST: rate.burst,
        REQUESTS_IN_FLIGHT_PER_KEY: 2,
        // Below what the base's files already take: no attachment fits.
        STORAGE_QUOTA_BYTES_PER_DATABASE: 1,
      }),
    );
  });

  const keyed = served.filter((op) => op.access !== 'public');
  test.each(keyed.map((op) => [describeOperation(op), op] as const))(
    '%s answers 429 with Retry-After to a key past its rate limit, changing nothing',
    async (_name, op) => {
      const key = await insertKey(h.db, [...apiKeyScopes]);
      // Its budget spent elsewhere (records-api spends the same bucket).
      await createRateLimiter(h.redis, rate)(key.id);
      const before = await everything();
      const response = await send(op, key.authorization, bounded);
      expect({ status: response.status, code: response.body.error?.code }).toEqual({
        status: 429,
        code: 'RATE_LIMITED',
      });
      expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(await everything()).toEqual(before);
    },
  );

  test.each(keyed.map((op) => [describeOperation(op), op] as const))(
    '%s answers 429 with Retry-After to a key with no place in flight left, changing nothing',
    async (_name, op) => {
      const key = await insertKey(h.db, [...apiKeyScopes]);
      // Its places taken by its requests elsewhere (records-api's share the same ones).
      const elsewhere = createInFlightLimiter(h.redis);
      const held = await Promise.all([1, 2].map(() => elsewhere.admit([requestsOfKey(key.id, 2)])));
      try {
        const before = await everything();
        const response = await send(op, key.authorization, bounded);
        expect({ status: response.status, code: response.body.error?.code }).toEqual({
          status: 429,
          code: 'RATE_LIMITED',
        });
        expect(response.headers['retry-after']).toBe('1');
        expect(await everything()).toEqual(before);
      } finally {
        for (const admission of held) if (admission.admitted) admission.lease.release();
        elsewhere.close();
      }
    },
  );

  test('an attachment upload past its database storage quota is 413 naming it, changing nothing', async () => {
    const key = await insertKey(h.db, [...apiKeyScopes]);
    const before = await everything();
    const response = await upload(operation('uploadAttachment'), key.authorization, bounded);
    expect(response.status).toBe(413);
    expect(response.body.error).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      message: expect.stringContaining('storage quota of 1 bytes'),
    });
    expect(await everything()).toEqual(before);
  });
});
