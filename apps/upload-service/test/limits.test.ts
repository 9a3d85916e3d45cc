import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signFileToken } from '@recordbase/server-kit/file-tokens';
import { createInFlightLimiter, requestsOfKey } from '@recordbase/server-kit/in-flight';
import { createRateLimiter } from '@recordbase/server-kit/rate-limit';
import type { Express } from 'express';
import supertest from 'supertest';
import { insertBase, insertKey, type TestBase } from './fixtures';
import { type Harness, startHarness } from './harness';
import { onePixelPng } from './sniff-files';

/**
 * The capacity one key or one database may take of upload-service, so that no tenant takes
 * another's: the per-key rate limit the JSON API has, and the operator's optional storage quota
 * per database.
 */

let h: Harness;
let base: TestBase;
const root = () => `Bearer ${h.rootKey}`;

beforeAll(async () => {
  h = await startHarness();
  base = await insertBase(h.db);
});
afterAll(() => h.close());

const png = onePixelPng(30, 60, 90);

function attachmentHeaders(target: TestBase) {
  return { 'base-public-id': target.databaseId, 'table-id': target.tableId, 'field-id': target.filesFieldId };
}

function uploadTo(app: Express, authorization: string, target: TestBase, bytes: Buffer = png) {
  return supertest(app)
    .post('/fileupload')
    .set('Authorization', authorization)
    .set(attachmentHeaders(target))
    .attach('filepond', bytes, { filename: 'dot.png', contentType: 'image/png' });
}

/** Everything uploads can leave behind: stored objects and file rows. */
async function leftovers() {
  const keys: string[] = [];
  for await (const key of h.storage.list('')) keys.push(key);
  return { keys: keys.sort(), rows: await h.db.prisma.uploadedFile.count() };
}

/** An answer as a raw request gets it. */
interface RawAnswer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/**
 * A raw upload to `app`: with `declaredBytes`, only the head of a request declaring that length
 * is sent (a refusal that comes although not a byte of the body was sent was decided before
 * reading it); with `file`, the file in a multipart body sent chunked, so that no content-length
 * tells its size in advance.
 */
async function rawUpload(
  app: Express,
  headers: Record<string, string>,
  body: { declaredBytes: number } | { file: Buffer; name?: string; type?: string },
): Promise<RawAnswer> {
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((done) => server.once('listening', done));
  const boundary = 'xxBOUNDARYxx';
  try {
    return await new Promise((resolve, reject) => {
      const request = httpRequest(
        {
          host: '127.0.0.1',
          port: (server.address() as AddressInfo).port,
          method: 'POST',
          path: '/fileupload',
          headers: {
            ...headers,
            'content-type': `multipart/form-data; boundary=${boundary}`,
            ...('declaredBytes' in body
              ? { 'content-length': String(body.declaredBytes) }
              : { 'transfer-encoding': 'chunked' }),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: Buffer.concat(chunks).toString(),
            }),
          );
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      if ('declaredBytes' in body) {
        request.flushHeaders();
        return;
      }
      request.write(
        `--${boundary}\r\nContent-Disposition: form-data; name="filepond"; filename="${body.name ?? 'dot.png'}"\r\nContent-Type: ${body.type ?? 'image/png'}\r\n\r\n`,
      );
      request.write(body.file);
      request.end(`\r\n--${boundary}--\r\n`);
    });
  } finally {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
}

describe('the per-key rate limit', () => {
  // One request per 100 s after a burst of 2: nothing refills while a test runs.
  const limits = { RATE_LIMIT_PER_SECOND: 0.01, RATE_LIMIT_BURST: 2 };

  it('answers 429 RATE_LIMITED with Retry-After past the burst, keeping nothing, with RateLimit-* headers', async () => {
    const app = h.appWith(limits);
    const key = await insertKey(h.db, ['files:write', 'records:read']);
    const first = await uploadTo(app, key.authorization, base).expect(201);
    expect(first.headers['ratelimit-limit']).toBe('2');
    expect(first.headers['ratelimit-remaining']).toBe('1');
    expect(first.headers['ratelimit-policy']).toBe('2;w=200');
    await uploadTo(app, key.authorization, base).expect(201);
    const before = await leftovers();
    const refused = await uploadTo(app, key.authorization, base).expect(429);
    expect(refused.body).toEqual({ error: { code: 'RATE_LIMITED', message: expect.any(String) } });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(await leftovers()).toEqual(before);
    // Another key has a budget of its own.
    const other = await insertKey(h.db, ['files:write']);
    await uploadTo(app, other.authorization, base).expect(201);
  });

  it('refuses before reading the body: the 429 comes with none of it sent', async () => {
    const app = h.appWith(limits);
    const key = await insertKey(h.db, ['files:write']);
    await uploadTo(app, key.authorization, base).expect(201);
    await uploadTo(app, key.authorization, base).expect(201);
    const refused = await rawUpload(
      app,
      { authorization: key.authorization, ...attachmentHeaders(base) },
      { declaredBytes: 10 * 1024 * 1024 },
    );
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).error.code).toBe('RATE_LIMITED');
    expect(refused.headers['retry-after']).toBeDefined();
  });

  it('counts import uploads and downloads, with a key or with its signed links', async () => {
    const app = h.appWith(limits);
    const key = await insertKey(h.db, ['files:write', 'records:read']);
    const uploaded = await uploadTo(app, key.authorization, base).expect(201);
    const path = new URL(uploaded.body.url).pathname;
    await supertest(app).get(path).set('Authorization', key.authorization).expect(200);
    await supertest(app).get(path).set('Authorization', key.authorization).expect(429);
    const token = signFileToken(
      h.fileTokenSecret,
      { fileKey: path.slice('/files/'.length), keyId: key.id },
      60,
    );
    const viaLink = await supertest(app).get(`${path}?token=${token}`).expect(429);
    expect(viaLink.body.error.code).toBe('RATE_LIMITED');
    expect(viaLink.headers['retry-after']).toBeDefined();
    await supertest(app)
      .post('/csvupload')
      .set('Authorization', key.authorization)
      .attach('filepond', Buffer.from('a,b\n1,2\n'), { filename: 'x.csv', contentType: 'text/csv' })
      .expect(429);
  });

  it("shares each key's budget with records-api: the same limiter, the same Redis key", async () => {
    const app = h.appWith(limits);
    const key = await insertKey(h.db, ['files:write']);
    // What records-api's limiter spends for two JSON requests of this key.
    const jsonApi = createRateLimiter(h.redis, { perSecond: limits.RATE_LIMIT_PER_SECOND, burst: 2 });
    expect((await jsonApi(key.id)).allowed).toBe(true);
    expect((await jsonApi(key.id)).allowed).toBe(true);
    await uploadTo(app, key.authorization, base).expect(429);
  });
});

describe("a key's upload bytes", () => {
  // One byte a second: nothing refills while a test runs. (The service's configuration asks for a
  // burst that holds the largest upload; these tests give the app a small one directly.)
  const budget = (burstBytes: number) => ({
    UPLOAD_BYTES_PER_SECOND_PER_KEY: 1,
    UPLOAD_BYTES_BURST_PER_KEY: burstBytes,
  });
  const bytesMessage =
    /^This API key has uploaded its share of bytes \(0 MiB a second, [\d.]+ MiB at once\); retry after \d+ s$/;

  it('are charged as declared before the body: 429 with Retry-After past them, keeping nothing', async () => {
    // Room for three uploads of 10,000 bytes with their multipart framing, not four.
    const app = h.appWith(budget(3 * 10_500));
    const key = await insertKey(h.db, ['files:write']);
    const send = () =>
      supertest(app)
        .post('/fileupload')
        .set('Authorization', key.authorization)
        .set(attachmentHeaders(base))
        .attach('filepond', Buffer.alloc(10_000, 0x61), { filename: 'notes.txt', contentType: 'text/plain' });
    for (let index = 0; index < 3; index += 1) await send().expect(201);
    const before = await leftovers();
    const refused = await send().expect(429);
    expect(refused.body.error).toEqual({
      code: 'RATE_LIMITED',
      message: expect.stringMatching(bytesMessage),
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(1);
    expect(await leftovers()).toEqual(before);
    // Refused before reading the body: the answer comes though none of it was sent.
    const declared = await rawUpload(
      app,
      { authorization: key.authorization, ...attachmentHeaders(base) },
      {
        declaredBytes: 10_000,
      },
    );
    expect(declared.status).toBe(429);
    expect(declared.headers['retry-after']).toBeDefined();
    // Another key has bytes of its own.
    const other = await insertKey(h.db, ['files:write']);
    await uploadTo(app, other.authorization, base).expect(201);
  });

  it('charge a chunked upload the largest body, then what its file took once stored', async () => {
    // Room for one attachment route's largest body at once, and 10,000 bytes more.
    const largest = 20 * 1024 * 1024 + 64 * 1024;
    const app = h.appWith(budget(largest + 10_000));
    const key = await insertKey(h.db, ['files:write']);
    const send = (bytes: number) =>
      rawUpload(
        app,
        { authorization: key.authorization, ...attachmentHeaders(base) },
        {
          file: Buffer.alloc(bytes, 0x61),
          name: 'notes.txt',
          type: 'text/plain',
        },
      );
    // Stored: charged its 6,000 bytes in the end, leaving room for another largest body.
    expect((await send(6000)).status).toBe(201);
    let again = await send(5000);
    // (The settlement lands just after the answer.)
    for (const giveUpAt = Date.now() + 2_000; again.status === 429 && Date.now() < giveUpAt; )
      again = await send(5000);
    expect(again.status).toBe(201);
    // 11,000 bytes spent, past the 10,000 beside a largest body: the next one cannot be charged one.
    const refused = await send(100);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).error.message).toMatch(bytesMessage);
  });
});

describe("a key's requests in flight", () => {
  it('past the bound, shared with records-api: 429 with Retry-After, and other keys are served', async () => {
    const app = h.appWith({ REQUESTS_IN_FLIGHT_PER_KEY: 2 });
    const key = await insertKey(h.db, ['files:write', 'records:read']);
    const server: Server = app.listen(0, '127.0.0.1');
    await new Promise((done) => server.once('listening', done));
    const port = (server.address() as AddressInfo).port;
    // Two uploads whose bodies never come: each holds its place while it waits for them.
    const held = [0, 1].map(() => {
      const request = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/fileupload',
        headers: {
          authorization: key.authorization,
          ...attachmentHeaders(base),
          'content-type': 'multipart/form-data; boundary=x',
          'content-length': '1000000',
        },
      });
      request.on('error', () => {});
      request.flushHeaders();
      return request;
    });
    try {
      // Both admitted (their places are in Redis) before another request of the key is sent.
      const deadline = Date.now() + 5000;
      while ((await h.redis.zcard(requestsOfKey(key.id, 2).key)) < 2 && Date.now() < deadline) {
        await new Promise((done) => setTimeout(done, 20));
      }
      const refused = await supertest(app).get('/files/none').set('Authorization', key.authorization);
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.body.error).toEqual({
        code: 'RATE_LIMITED',
        message: 'Too many requests of this API key in flight at once (at most 2); retry after 1 s',
      });
      // The same places as records-api's: what is held here counts there.
      const jsonApi = createInFlightLimiter(h.redis);
      expect(await jsonApi.admit([requestsOfKey(key.id, 2)])).toMatchObject({ admitted: false });
      jsonApi.close();
      // Another key is served meanwhile.
      const other = await insertKey(h.db, ['files:write']);
      await uploadTo(app, other.authorization, base).expect(201);
    } finally {
      for (const request of held) request.destroy();
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
    // The places are given back with the connections.
    const deadline = Date.now() + 5000;
    let again = await uploadTo(app, key.authorization, base);
    while (again.status === 429 && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 50));
      again = await uploadTo(app, key.authorization, base);
    }
    expect(again.status).toBe(201);
  });
});

describe('the storage quota per database', () => {
  const quotaMessage = (quota: number) =>
    `this database's files would exceed its storage quota of ${quota} bytes`;
  /** The bytes a database's files take, as its rows say. */
  async function storedBytes(databaseId: string): Promise<number> {
    const result = await h.db.pool.query<{ total: string }>(
      'SELECT coalesce(sum(size), 0)::text AS total FROM uploaded_files WHERE database_id = $1',
      [databaseId],
    );
    return Number(result.rows[0]!.total);
  }

  it('answers 413 naming the quota to an upload that would take the database past it, keeping nothing', async () => {
    // Room for two of the image, not three.
    const quota = png.length * 2 + Math.floor(png.length / 2);
    const app = h.appWith({ STORAGE_QUOTA_BYTES_PER_DATABASE: quota });
    const target = await insertBase(h.db);
    await uploadTo(app, root(), target).expect(201);
    await uploadTo(app, root(), target).expect(201);
    const before = await leftovers();
    const refused = await uploadTo(app, root(), target).expect(413);
    expect(refused.body).toEqual({ error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String) } });
    expect(refused.body.error.message).toContain(quotaMessage(quota));
    expect(await leftovers()).toEqual(before);
    // Sent chunked, its size known only once it is stored: refused all the same.
    const streamed = await rawUpload(
      app,
      { authorization: root(), ...attachmentHeaders(target) },
      { file: onePixelPng(1, 2, 3) },
    );
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body).error.message).toContain(quotaMessage(quota));
    expect(await leftovers()).toEqual(before);
    expect(await storedBytes(target.databaseId)).toBe(png.length * 2);
    // The quota is per database; import files belong to none.
    await uploadTo(app, root(), await insertBase(h.db)).expect(201);
    await supertest(app)
      .post('/csvupload')
      .set('Authorization', root())
      .attach('filepond', Buffer.from('a,b\n1,2\n'), { filename: 'x.csv', contentType: 'text/csv' })
      .expect(201);
  });

  it('refuses from a declared Content-Length before reading the body', async () => {
    const quota = 1024 * 1024;
    const app = h.appWith({ STORAGE_QUOTA_BYTES_PER_DATABASE: quota });
    const target = await insertBase(h.db);
    const refused = await rawUpload(
      app,
      { authorization: root(), ...attachmentHeaders(target) },
      { declaredBytes: 5 * 1024 * 1024 },
    );
    expect(refused.status).toBe(413);
    expect(JSON.parse(refused.body).error).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      message: expect.stringContaining(quotaMessage(quota)),
    });
  });

  it('stops a chunked upload past what is left of the quota, keeping nothing', async () => {
    const quota = 64 * 1024;
    const app = h.appWith({ STORAGE_QUOTA_BYTES_PER_DATABASE: quota });
    const target = await insertBase(h.db);
    const before = await leftovers();
    const text = Buffer.alloc(quota + 1, 0x61);
    const refused = await rawUpload(
      app,
      { authorization: root(), ...attachmentHeaders(target) },
      { file: text, name: 'notes.txt', type: 'text/plain' },
    );
    expect(refused.status).toBe(413);
    expect(JSON.parse(refused.body).error.message).toContain(quotaMessage(quota));
    expect(await leftovers()).toEqual(before);
  });

  it('holds under concurrency: of uploads that each fit alone, only as many as fit together are kept', async () => {
    const quota = png.length * 3;
    const app = h.appWith({ STORAGE_QUOTA_BYTES_PER_DATABASE: quota });
    const target = await insertBase(h.db);
    const answers = await Promise.all(Array.from({ length: 8 }, () => uploadTo(app, root(), target)));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([201, 201, 201, 413, 413, 413, 413, 413]);
    expect(await storedBytes(target.databaseId)).toBe(quota);
    const stored: string[] = [];
    for await (const key of h.storage.list(`attachments/${target.databaseId}/`)) stored.push(key);
    expect(stored).toHaveLength(3);
  });
});
