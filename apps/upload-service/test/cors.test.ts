import supertest from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { loadConfig } from '../src/config';
import { PREFLIGHT_MAX_AGE_SECONDS } from '../src/cross-origin';
import { insertBase, type TestBase } from './fixtures';
import { type Harness, startHarness } from './harness';
import { onePixelPng } from './sniff-files';

/** CORS on the upload and file routes, which FilePond widgets on other origins call. */

const allowedOrigin = 'https://app.example.com';
const otherAllowed = 'http://127.0.0.1:8081';
const disallowedOrigin = 'https://evil.example.net';

let h: Harness;
let base: TestBase;
let root: string;
let api: TestAgent;
const png = onePixelPng(10, 200, 10);

beforeAll(async () => {
  h = await startHarness();
  root = `Bearer ${h.rootKey}`;
  base = await insertBase(h.db);
  api = supertest(h.appWith({ CORS_ORIGINS: [allowedOrigin, otherAllowed] }));
});
afterAll(() => h.close());

const corsRoutes = ['/fileupload', '/csvupload', '/xlsxupload', '/files/attachments/some/key.png'];
const requestedHeaders = [
  'Authorization',
  'Content-Type',
  'base-public-id',
  'table-id',
  'field-id',
  'Range',
  'If-None-Match',
];
const exposed = [
  'Content-Disposition',
  'Content-Range',
  'Content-Length',
  'ETag',
  'Accept-Ranges',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'Retry-After',
];

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);

const corsHeaderNames = (headers: Record<string, string>) =>
  Object.keys(headers).filter((name) => name.startsWith('access-control-'));

function preflight(agent: TestAgent, path: string, origin: string, method = 'POST') {
  return agent
    .options(path)
    .set('Origin', origin)
    .set('Access-Control-Request-Method', method)
    .set('Access-Control-Request-Headers', requestedHeaders.join(', ').toLowerCase());
}

function attachmentUpload(agent: TestAgent, origin: string) {
  return agent
    .post('/fileupload')
    .set('Origin', origin)
    .set('Authorization', root)
    .set({ 'base-public-id': base.databaseId, 'table-id': base.tableId, 'field-id': base.filesFieldId })
    .attach('filepond', png, { filename: 'cors.png', contentType: 'image/png' });
}

describe('CORS preflight', () => {
  it.each(corsRoutes)('answers an allowed origin on %s with 204 and no key', async (path) => {
    const response = await preflight(api, path, allowedOrigin).expect(204);
    expect(response.headers['access-control-allow-origin']).toBe(allowedOrigin);
    expect(list(response.headers['access-control-allow-methods'])).toEqual(
      expect.arrayContaining(['post', 'get', 'head', 'options']),
    );
    expect(list(response.headers['access-control-allow-headers'])).toEqual(
      expect.arrayContaining(requestedHeaders.map((name) => name.toLowerCase())),
    );
    expect(response.headers['access-control-max-age']).toBe(String(PREFLIGHT_MAX_AGE_SECONDS));
    expect(list(response.headers.vary)).toContain('origin');
    // The key is a bearer header: no credentials mode, ever.
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('answers each allowed origin with itself, never with the list', async () => {
    const response = await preflight(api, '/csvupload', otherAllowed).expect(204);
    expect(response.headers['access-control-allow-origin']).toBe(otherAllowed);
  });

  it('gives a disallowed origin no CORS header at all', async () => {
    for (const path of corsRoutes) {
      const response = await preflight(api, path, disallowedOrigin);
      expect(response.status).toBe(204);
      expect(corsHeaderNames(response.headers)).toEqual([]);
      // A cache must not hand this answer to an allowed origin.
      expect(list(response.headers.vary)).toContain('origin');
    }
    // An origin is compared whole, not as a prefix or without its port.
    for (const near of [`${allowedOrigin}.evil.net`, 'http://app.example.com', 'http://127.0.0.1:8082']) {
      const response = await preflight(api, '/fileupload', near);
      expect(corsHeaderNames(response.headers)).toEqual([]);
    }
  });

  it('does not count preflights, which carry no key, as failed authentications', async () => {
    const strict = supertest(
      h.appWith({ CORS_ORIGINS: [allowedOrigin], AUTH_FAILURE_BURST: 1, AUTH_FAILURES_PER_MINUTE: 1 }),
    );
    for (let i = 0; i < 5; i++) {
      await preflight(strict, '/fileupload', allowedOrigin).expect(204);
      await preflight(strict, '/fileupload', disallowedOrigin).expect(204);
    }
    await attachmentUpload(strict, allowedOrigin).expect(201);
  });

  it('answers any origin with * when CORS_ORIGINS is *', async () => {
    const open = supertest(h.appWith({ CORS_ORIGINS: '*' }));
    const response = await preflight(open, '/fileupload', disallowedOrigin).expect(204);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(list(response.headers['access-control-allow-headers'])).toEqual(
      expect.arrayContaining(requestedHeaders.map((name) => name.toLowerCase())),
    );
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    const upload = await attachmentUpload(open, 'https://anywhere.example').expect(201);
    expect(upload.headers['access-control-allow-origin']).toBe('*');
  });

  it('adds no CORS header when CORS_ORIGINS is unset', async () => {
    const closed = supertest(h.appWith({}));
    const response = await preflight(closed, '/fileupload', allowedOrigin);
    expect(corsHeaderNames(response.headers)).toEqual([]);
    const upload = await attachmentUpload(closed, allowedOrigin).expect(201);
    expect(corsHeaderNames(upload.headers)).toEqual([]);
  });
});

describe('CORS on answers', () => {
  const expectCors = (headers: Record<string, string>) => {
    expect(headers['access-control-allow-origin']).toBe(allowedOrigin);
    expect(list(headers['access-control-expose-headers'])).toEqual(
      expect.arrayContaining(exposed.map((name) => name.toLowerCase())),
    );
    expect(list(headers.vary)).toContain('origin');
    expect(headers['access-control-allow-credentials']).toBeUndefined();
  };

  it('carries the headers on an upload from an allowed origin', async () => {
    const response = await attachmentUpload(api, allowedOrigin).expect(201);
    expectCors(response.headers);
    expect(response.body.mimeType).toBe('image/png');
  });

  it('carries them on a 401, a 400 and a 413, so the widget can read the error', async () => {
    const unauthorized = await api
      .post('/fileupload')
      .set('Origin', allowedOrigin)
      .attach('filepond', png, 'a.png')
      .expect(401);
    expectCors(unauthorized.headers);
    expect(unauthorized.body.error.code).toBe('UNAUTHORIZED');

    const missingHeaders = await api
      .post('/fileupload')
      .set('Origin', allowedOrigin)
      .set('Authorization', root)
      .attach('filepond', png, 'a.png')
      .expect(400);
    expectCors(missingHeaders.headers);

    const big = Buffer.alloc(50 * 1024 * 1024 + 1, 0x61);
    const tooLarge = await api
      .post('/csvupload')
      .set('Origin', allowedOrigin)
      .set('Authorization', root)
      .attach('filepond', big, { filename: 'big.csv', contentType: 'text/csv' })
      .expect(413);
    expectCors(tooLarge.headers);
    expect(tooLarge.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('carries them on a ranged download, exposing Content-Range', async () => {
    const { body } = await attachmentUpload(api, allowedOrigin).expect(201);
    const path = new URL(body.url).pathname;
    const response = await api
      .get(path)
      .set('Origin', allowedOrigin)
      .set('Authorization', root)
      .set('Range', 'bytes=0-7')
      .expect(206);
    expectCors(response.headers);
    expect(response.headers['content-range']).toBe(`bytes 0-7/${png.length}`);
    const missing = await api.get(`${path}.nope`).set('Origin', allowedOrigin).set('Authorization', root);
    expect(missing.status).toBe(404);
    expectCors(missing.headers);
  });

  it('answers a disallowed origin as usual, without CORS headers', async () => {
    const upload = await attachmentUpload(api, disallowedOrigin).expect(201);
    expect(corsHeaderNames(upload.headers)).toEqual([]);
    const unauthorized = await api.post('/fileupload').set('Origin', disallowedOrigin).expect(401);
    expect(corsHeaderNames(unauthorized.headers)).toEqual([]);
  });

  it.each(['/healthz', '/readyz', '/metrics'])('leaves the operational route %s alone', async (path) => {
    const response = await api.get(path).set('Origin', allowedOrigin).expect(200);
    expect(corsHeaderNames(response.headers)).toEqual([]);
    const options = await preflight(api, path, allowedOrigin);
    expect(corsHeaderNames(options.headers)).toEqual([]);
  });
});

describe('CORS_ORIGINS', () => {
  const required = { FILE_TOKEN_SECRET: 's'.repeat(32) };

  it('allows no origin by default', () => {
    expect(loadConfig(required).CORS_ORIGINS).toEqual([]);
    expect(loadConfig({ ...required, CORS_ORIGINS: '' }).CORS_ORIGINS).toEqual([]);
  });

  it('reads a comma-separated list of exact origins, or *', () => {
    expect(
      loadConfig({
        ...required,
        CORS_ORIGINS: ' https://app.example.com, http://localhost:5173,https://app.example.com,',
      }).CORS_ORIGINS,
    ).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect(loadConfig({ ...required, CORS_ORIGINS: '*' }).CORS_ORIGINS).toBe('*');
    expect(loadConfig({ ...required, CORS_ORIGINS: 'http://[::1]:8080' }).CORS_ORIGINS).toEqual([
      'http://[::1]:8080',
    ]);
  });

  it.each([
    ['app.example.com', /CORS_ORIGINS: "app\.example\.com" is not an origin/],
    ['https://app.example.com/', /did you mean https:\/\/app\.example\.com\?/],
    ['https://app.example.com/upload', /did you mean https:\/\/app\.example\.com\?/],
    ['https://App.Example.com', /did you mean https:\/\/app\.example\.com\?/],
    ['https://app.example.com:443', /did you mean https:\/\/app\.example\.com\?/],
    ['ftp://files.example.com', /is not an http\(s\) origin/],
    ['null', /"null" is not an origin/],
    ['https://a.example.com,*', /cannot be listed with other origins/],
  ])('refuses %s with a message naming CORS_ORIGINS', (value, message) => {
    expect(() => loadConfig({ ...required, CORS_ORIGINS: value })).toThrow(message);
  });
});
