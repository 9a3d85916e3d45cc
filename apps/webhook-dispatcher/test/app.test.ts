import { randomBytes } from 'node:crypto';
import { createDb, type Db } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import { createLogger } from '@recordbase/server-kit/logger';
import { Redis } from 'ioredis';
import supertest from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';

const logger = createLogger('webhook-dispatcher-test', 'silent');
let testDb: TestDatabase;
let db: Db;
let redis: Redis;
let api: TestAgent;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDb(testDb.url, { maxConnections: 3 });
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    keyPrefix: `test:${randomBytes(6).toString('hex')}:`,
    maxRetriesPerRequest: 1,
  });
  api = supertest(createApp({ db, redis, logger }));
});
afterAll(async () => {
  redis.disconnect();
  await db.close();
  await testDb.drop();
});

describe('operational routes', () => {
  it('echoes the X-Request-Id it was given', async () => {
    const response = await api.get('/healthz').set('X-Request-Id', 'gateway-id-1').expect(200);
    expect(response.headers['x-request-id']).toBe('gateway-id-1');
  });

  it('answers /healthz', async () => {
    const response = await api.get('/healthz').expect(200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('answers /readyz when PostgreSQL and Redis answer', async () => {
    const response = await api.get('/readyz').expect(200);
    expect(response.body).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
  });

  it('answers /readyz 503 naming PostgreSQL when it cannot be reached', async () => {
    const unreachable = createDb('postgresql://postgres@127.0.0.1:1/nowhere', { maxConnections: 1 });
    try {
      const response = await supertest(createApp({ db: unreachable, redis, logger }))
        .get('/readyz')
        .expect(503);
      expect(response.body).toEqual({
        status: 'unavailable',
        checks: { postgres: 'unavailable', redis: 'ok' },
      });
    } finally {
      await unreachable.close();
    }
  });

  it('serves Prometheus metrics in text format', async () => {
    await api.get('/healthz').expect(200);
    const response = await api.get('/metrics').expect(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(response.text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(response.text).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/healthz"[^}]*\} \d+/);
    expect(response.text).toContain('service="webhook-dispatcher"');
  });
});

describe('everything else', () => {
  it.each([
    ['get', '/'],
    ['get', '/api/v1/bases'],
    ['post', '/webhooks'],
  ] as const)('%s %s answers the JSON 404 body', async (method, path) => {
    const response = await api[method](path).expect(404);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } });
  });
});

describe('configuration', () => {
  const WEBHOOK_SECRET_KEY = Buffer.alloc(32, 7).toString('base64');

  it('defaults to port 3002 on loopback (the images set HOST=0.0.0.0)', () => {
    expect(loadConfig({ WEBHOOK_SECRET_KEY })).toMatchObject({ PORT: 3002, HOST: '127.0.0.1' });
  });

  it('reads PORT and HOST and names a bad value', () => {
    expect(loadConfig({ WEBHOOK_SECRET_KEY, PORT: '4002', HOST: '0.0.0.0' })).toMatchObject({
      PORT: 4002,
      HOST: '0.0.0.0',
    });
    expect(() => loadConfig({ WEBHOOK_SECRET_KEY, PORT: '70000' })).toThrow(/PORT/);
  });

  it('defaults the delivery settings', () => {
    expect(loadConfig({ WEBHOOK_SECRET_KEY })).toMatchObject({
      WEBHOOK_ALLOWED_CIDRS: [],
      WEBHOOK_RETRY_SCHEDULE: [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      WEBHOOK_DISABLE_AFTER: 5 * 86_400_000,
      WEBHOOK_TIMEOUT_MS: 10_000,
      DISPATCH_CONCURRENCY: 100,
      DISPATCH_RECEIVER_CONCURRENCY: 16,
      DISPATCH_EVENT_CONCURRENCY: 100,
      DISPATCH_SWEEP_INTERVAL_MS: 5000,
      DISPATCH_SWEEP_GRACE_MS: 30_000,
      // Derived from the default DATABASE_URL's database, recordbase.
      QUEUE_PREFIX: 'rb-recordbase',
    });
  });

  it('reads the delivery settings, an empty value meaning the default', () => {
    const config = loadConfig({
      WEBHOOK_SECRET_KEY,
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32, ::1',
      WEBHOOK_RETRY_SCHEDULE: '1s,1s',
      WEBHOOK_DISABLE_AFTER: '30s',
      WEBHOOK_TIMEOUT_MS: '2500',
      DISPATCH_CONCURRENCY: '',
    });
    expect(config.WEBHOOK_ALLOWED_CIDRS.map((cidr) => cidr.text)).toEqual(['127.0.0.1/32', '::1']);
    expect(config.WEBHOOK_RETRY_SCHEDULE).toEqual([1000, 1000]);
    expect(config.WEBHOOK_DISABLE_AFTER).toBe(30_000);
    expect(config.WEBHOOK_TIMEOUT_MS).toBe(2500);
    expect(config.DISPATCH_CONCURRENCY).toBe(100);
    expect(loadConfig({ WEBHOOK_SECRET_KEY, WEBHOOK_RETRY_SCHEDULE: 'none' }).WEBHOOK_RETRY_SCHEDULE).toEqual(
      [],
    );
  });

  it('names a bad delivery setting', () => {
    expect(() => loadConfig({ WEBHOOK_SECRET_KEY, WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/40' })).toThrow(
      /WEBHOOK_ALLOWED_CIDRS: .*prefix length/,
    );
    expect(() => loadConfig({ WEBHOOK_SECRET_KEY, WEBHOOK_DISABLE_AFTER: '5' })).toThrow(
      /WEBHOOK_DISABLE_AFTER/,
    );
    expect(() => loadConfig({ WEBHOOK_SECRET_KEY, DISPATCH_CONCURRENCY: '0' })).toThrow(
      /DISPATCH_CONCURRENCY/,
    );
    expect(() => loadConfig({ WEBHOOK_SECRET_KEY, QUEUE_PREFIX: 'a:b' })).toThrow(/QUEUE_PREFIX/);
  });

  it('requires the webhook secret key, naming it', () => {
    expect(() => loadConfig({})).toThrow(/WEBHOOK_SECRET_KEY/);
    expect(() => loadConfig({ WEBHOOK_SECRET_KEY: 'c2hvcnQ=' })).toThrow(
      /WEBHOOK_SECRET_KEY: must be 32 bytes/,
    );
  });
});
