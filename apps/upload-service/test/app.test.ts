import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LocalDiskStorage } from '@recordbase/storage';
import supertest from 'supertest';
import { type Harness, startHarness } from './harness';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const errorBody = (code: string) => ({ error: { code, message: expect.any(String) } });

describe('operational routes', () => {
  it('answers /healthz', async () => {
    const response = await h.api.get('/healthz').expect(200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('echoes the X-Request-Id it was given', async () => {
    const response = await h.api.get('/healthz').set('X-Request-Id', 'gateway-id-2').expect(200);
    expect(response.headers['x-request-id']).toBe('gateway-id-2');
  });

  it('answers /readyz with every check ok and leaves no probe file behind', async () => {
    const response = await h.api.get('/readyz').expect(200);
    expect(response.body).toEqual({
      status: 'ready',
      checks: { postgres: 'ok', redis: 'ok', storage: 'ok' },
    });
    expect(await readdir(h.storageDir)).toEqual([]);
  });

  it('answers /readyz 503 naming only the storage check when the storage dir sits under a file', async () => {
    const file = join(h.scratchDir, 'plain-file');
    await writeFile(file, 'not a directory');
    const response = await supertest(h.appWith({}, new LocalDiskStorage(join(file, 'files'))))
      .get('/readyz')
      .expect(503);
    // What failed (which could name the path) is logged, never answered: /readyz answers anyone.
    expect(response.body).toEqual({
      status: 'unavailable',
      checks: { postgres: 'ok', redis: 'ok', storage: 'unavailable' },
    });
    expect(response.text).not.toContain(h.scratchDir);
  });

  it('answers /readyz 503 when the storage path is a file or missing', async () => {
    const file = join(h.scratchDir, 'another-file');
    await writeFile(file, '');
    const asFile = await supertest(h.appWith({}, new LocalDiskStorage(file)))
      .get('/readyz')
      .expect(503);
    expect(asFile.body.checks.storage).toBe('unavailable');
    const missing = await supertest(h.appWith({}, new LocalDiskStorage(join(h.scratchDir, 'nowhere'))))
      .get('/readyz')
      .expect(503);
    expect(missing.body.checks.storage).toBe('unavailable');
  });

  it('serves Prometheus metrics in text format', async () => {
    await h.api.get('/healthz').expect(200);
    const response = await h.api.get('/metrics').expect(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(response.text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(response.text).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/healthz"[^}]*\} \d+/);
    expect(response.text).toContain('service="upload-service"');
  });
});

describe('upload and file routes', () => {
  const routes: Array<[method: 'get' | 'post', path: string]> = [
    ['post', '/fileupload'],
    ['post', '/csvupload'],
    ['post', '/xlsxupload'],
    ['get', '/files/some/key.png'],
  ];

  it.each(routes)('%s %s answers 401 without a key', async (method, path) => {
    const response = await h.api[method](path).expect(401);
    expect(response.body).toEqual(errorBody('UNAUTHORIZED'));
  });

  it.each(routes)(
    '%s %s says the header form expected of a key sent without "Bearer " (issue 26)',
    async (method, path) => {
      const response = await h.api[method](path)
        .set('Authorization', 'rb_secretKeyNotSentRight000000000000000000')
        .expect(401);
      expect(response.body.error).toEqual({
        code: 'UNAUTHORIZED',
        message:
          'The Authorization header lacks the "Bearer " before the API key; send "Authorization: Bearer <API key>"',
      });
      expect(response.text).not.toContain('secretKey');
      const missing = await h.api[method](path).expect(401);
      expect(missing.body.error.message).toBe(
        'Missing Authorization header; send "Authorization: Bearer <API key>"',
      );
    },
  );

  it.each(routes)('%s %s answers 401 with an unknown key', async (method, path) => {
    const response = await h.api[method](path)
      .set('Authorization', 'Bearer rb_notARealKey0000000000000000000000000000')
      .expect(401);
    expect(response.body).toEqual(errorBody('UNAUTHORIZED'));
  });

  it.each(routes.filter(([method]) => method === 'post'))(
    '%s %s answers 415 to an authenticated request that is not multipart',
    async (method, path) => {
      const response = await h.api[method](path).set('Authorization', `Bearer ${h.rootKey}`).expect(415);
      expect(response.body).toEqual(errorBody('UNSUPPORTED_MEDIA_TYPE'));
    },
  );

  it.each(routes.filter(([method]) => method === 'post'))(
    '%s %s refuses a query parameter (its settings are headers) before reading the file',
    async (method, path) => {
      const files = await h.db.pool.query('SELECT count(*) FROM uploaded_files');
      const response = await h.api[method](`${path}?tableId=Deals`)
        .set('Authorization', `Bearer ${h.rootKey}`)
        .attach('filepond', Buffer.from('Name\nAda\n'), { filename: 'people.csv', contentType: 'text/csv' })
        .expect(400);
      expect(response.body.error).toEqual({
        code: 'BAD_REQUEST',
        message: 'query: unknown parameter "tableId"',
      });
      expect(await h.db.pool.query('SELECT count(*) FROM uploaded_files')).toMatchObject({
        rows: files.rows,
      });
    },
  );

  it('GET /files/{key} answers 404 for a file that does not exist', async () => {
    const response = await h.api
      .get('/files/some/key.png')
      .set('Authorization', `Bearer ${h.rootKey}`)
      .expect(404);
    expect(response.body).toEqual(errorBody('NOT_FOUND'));
  });
});

describe('unknown routes', () => {
  it('answer the JSON 404 body', async () => {
    const response = await h.api.get('/no/such/route').expect(404);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual(errorBody('NOT_FOUND'));
    expect(response.body.error.message).toContain('/no/such/route');
  });

  it('do not expose the records API', async () => {
    const response = await h.api.get('/api/v1/bases').expect(404);
    expect(response.body).toEqual(errorBody('NOT_FOUND'));
  });
});
