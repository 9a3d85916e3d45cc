import { type Harness, startHarness } from './harness';

let h: Harness;

beforeAll(async () => {
  // One token per 10 s: seven requests take far less even on a loaded machine, so none refills.
  h = await startHarness({ ratePerSecond: 0.1, rateBurst: 5 });
});
afterAll(() => h.close());

describe('operational routes', () => {
  it('answers /healthz and /readyz without a key', async () => {
    expect((await h.api.get('/healthz').expect(200)).body).toEqual({ status: 'ok' });
    expect((await h.api.get('/readyz').expect(200)).body).toEqual({
      status: 'ready',
      checks: { postgres: 'ok', redis: 'ok' },
    });
  });

  it('echoes the X-Request-Id it was given (the gateway sends one), and gives one to a request without', async () => {
    const given = await h.api.get('/healthz').set('X-Request-Id', 'abc123-gateway').expect(200);
    expect(given.headers['x-request-id']).toBe('abc123-gateway');
    const made = await h.api.get('/api/v1/bases').expect(401);
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves Prometheus metrics including request durations', async () => {
    await h.api.get('/healthz');
    const response = await h.api.get('/metrics').expect(200);
    expect(response.headers['content-type']).toMatch(/text\/plain/);
    expect(response.text).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/healthz"/);
  });
});

describe('rate limits', () => {
  it('answers 429 RATE_LIMITED with Retry-After and RateLimit headers past the limit', async () => {
    const auth = h.bearer(h.rootKey);
    const statuses: number[] = [];
    let limited: import('supertest').Response | undefined;
    for (let i = 0; i < 7; i++) {
      const response = await h.api.get('/api/v1/bases').set('Authorization', auth);
      statuses.push(response.status);
      if (response.status === 429) limited ??= response;
      else expect(response.headers['ratelimit-remaining']).toBeDefined();
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429]);
    expect(limited!.body.error.code).toBe('RATE_LIMITED');
    expect(Number(limited!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited!.headers['ratelimit-limit']).toBe('5');
    expect(limited!.headers['ratelimit-remaining']).toBe('0');
  });
});
