import { z } from 'zod';
import {
  isRecordbaseError,
  parseRetryAfter,
  RecordbaseApiError,
  RecordbaseClient,
  RecordbaseNetworkError,
  RecordbaseResponseError,
} from '../src/index';
import { backoffMs, type DEFAULT_RETRY_POLICY, delayAfterStatus } from '../src/retry';
import { Transport } from '../src/transport';
import { type ScriptedServer, startScriptedServer } from './scripted-server';

let server: ScriptedServer;
let waits: number[];

beforeAll(async () => {
  server = await startScriptedServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.reset();
  waits = [];
});

const ok = { status: 200, body: { value: 1 } };
const answerSchema = z.object({ value: z.number() });
const recordWaits = async (ms: number) => {
  waits.push(ms);
};
const transport = (retry: Partial<typeof DEFAULT_RETRY_POLICY> = {}) =>
  new Transport({ apiKey: 'key_test', retry, sleep: recordWaits });
const get = (t: Transport, idempotent = true) =>
  t.request({ method: 'GET', url: `${server.url}/thing`, schema: answerSchema, idempotent });
const post = (t: Transport) =>
  t.request({ method: 'POST', url: `${server.url}/thing`, json: { a: 1 }, schema: answerSchema });

describe('Retry-After', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads delay-seconds and HTTP dates, and nothing else', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('-1', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('waits what it asks, up to the cap, and not past the last attempt', () => {
    const policy = { maxAttempts: 3, maxDelayMs: 10_000, baseDelayMs: 100 };
    expect(delayAfterStatus(policy, 1, 2000)).toBe(2000);
    expect(delayAfterStatus(policy, 1, 10_001)).toBeUndefined();
    expect(delayAfterStatus(policy, 3, 0)).toBeUndefined();
    expect(backoffMs(policy, 1, () => 0)).toBe(100);
    expect(backoffMs(policy, 3, () => 1)).toBe(480);
    expect(backoffMs(policy, 20, () => 1)).toBe(10_000);
  });
});

describe('the transport', () => {
  it('sends the key as a bearer token and answers the validated body', async () => {
    server.answer(ok);
    await expect(post(transport())).resolves.toEqual({ value: 1 });
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      body: '{"a":1}',
      headers: { authorization: 'Bearer key_test', 'content-type': 'application/json' },
    });
  });

  it('retries a 429 after the seconds of its Retry-After, even for a write', async () => {
    server.answer(
      {
        status: 429,
        headers: { 'retry-after': '2' },
        body: { error: { code: 'RATE_LIMITED', message: 'slow down' } },
      },
      ok,
    );
    await expect(post(transport())).resolves.toEqual({ value: 1 });
    expect(server.requests).toHaveLength(2);
    expect(waits).toEqual([2000]);
  });

  it('retries a 503 after the date of its Retry-After', async () => {
    const at = new Date(Date.now() + 60_000).toUTCString();
    server.answer(
      {
        status: 503,
        headers: { 'retry-after': at },
        body: { error: { code: 'SERVICE_UNAVAILABLE', message: 'busy' } },
      },
      ok,
    );
    await expect(get(transport({ maxDelayMs: 120_000 }))).resolves.toEqual({ value: 1 });
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(50_000);
    expect(waits[0]).toBeLessThanOrEqual(60_000);
  });

  it('backs off exponentially when no Retry-After is given, then gives up with the last error', async () => {
    const unavailable = { status: 503, body: { error: { code: 'SERVICE_UNAVAILABLE', message: 'down' } } };
    server.answer(unavailable, unavailable, unavailable);
    const error = await get(transport({ maxAttempts: 3, baseDelayMs: 100 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordbaseApiError);
    expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, message: 'down' });
    expect(server.requests).toHaveLength(3);
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(100);
    expect(waits[0]).toBeLessThanOrEqual(120);
    expect(waits[1]).toBeGreaterThanOrEqual(200);
    expect(waits[1]).toBeLessThanOrEqual(240);
  });

  it('fails at once when Retry-After asks for more than the cap, saying how long', async () => {
    server.answer({
      status: 429,
      headers: { 'retry-after': '120' },
      body: { error: { code: 'RATE_LIMITED', message: 'later' } },
    });
    const error = await get(transport({ maxDelayMs: 5000 })).catch((e: unknown) => e);
    expect(isRecordbaseError(error, 'RATE_LIMITED')).toBe(true);
    expect(error).toMatchObject({ status: 429, retryAfterMs: 120_000 });
    expect(server.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('does not retry other errors, and carries their code and message', async () => {
    server.answer({ status: 404, body: { error: { code: 'NOT_FOUND', message: 'Table Nope not found' } } });
    const error = await get(transport()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordbaseApiError);
    expect(error).toMatchObject({
      code: 'NOT_FOUND',
      status: 404,
      message: 'Table Nope not found',
      request: `GET ${server.url}/thing`,
    });
    expect(server.requests).toHaveLength(1);
  });

  it('refuses an answer the contract does not allow, naming where it differs', async () => {
    server.answer({ status: 200, body: { value: 'one' } });
    const error = await get(transport()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordbaseResponseError);
    expect(error).toMatchObject({ code: 'INVALID_RESPONSE', status: 200 });
    expect((error as Error).message).toMatch(/value: /);
  });

  it('refuses an error answer that is not the error body, such as a proxy page', async () => {
    server.answer({
      status: 502,
      headers: { 'content-type': 'text/html' },
      body: '<html>Bad gateway</html>',
    });
    const error = await get(transport()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INVALID_RESPONSE', status: 502 });
    expect((error as Error).message).toMatch(/not JSON/);
  });

  it('retries a reset connection for a read, never for a write', async () => {
    server.answer({ status: 0, reset: true }, ok);
    await expect(get(transport())).resolves.toEqual({ value: 1 });
    expect(server.requests).toHaveLength(2);

    server.requests.length = 0;
    server.answer({ status: 0, reset: true }, ok);
    const error = await post(transport()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordbaseNetworkError);
    expect(error).toMatchObject({ code: 'NETWORK_ERROR' });
    expect(server.requests).toHaveLength(1);
  });

  it('stops waiting when the caller aborts', async () => {
    server.answer({
      status: 429,
      headers: { 'retry-after': '5' },
      body: { error: { code: 'RATE_LIMITED', message: 'x' } },
    });
    const controller = new AbortController();
    const sleeping = new Transport({ apiKey: 'k' });
    const pending = sleeping.request({
      method: 'GET',
      url: `${server.url}/x`,
      schema: answerSchema,
      signal: controller.signal,
    });
    while (server.requests.length === 0) await new Promise((done) => setTimeout(done, 10));
    controller.abort(new Error('caller gave up'));
    await expect(pending).rejects.toThrow('caller gave up');
    expect(server.requests).toHaveLength(1);
  });
});

describe('the client', () => {
  it('escapes names in paths and repeats query parameters', async () => {
    const client = new RecordbaseClient({
      apiUrl: `${server.url}/api/v1/`,
      apiKey: 'k',
      retry: { maxAttempts: 1 },
    });
    server.answer({ status: 404, body: { error: { code: 'NOT_FOUND', message: 'no' } } });
    await client.records
      .get('b1', 'Q3/Q4 deals?', 'r1', { fields: ['Name', 'E mail'], expand: ['Company'] })
      .catch(() => undefined);
    expect(server.requests[0]?.url).toBe(
      '/api/v1/bases/b1/tables/Q3%2FQ4%20deals%3F/records/r1?fields=Name&fields=E+mail&expand=Company',
    );
  });

  it('follows nextCursor through every page, keeping the request as given', async () => {
    const record = (id: string) => ({
      id,
      data: {},
      fields: {},
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    });
    const ids = [
      '00000000-0000-4000-8000-000000000001',
      '00000000-0000-4000-8000-000000000002',
      '00000000-0000-4000-8000-000000000003',
    ];
    server.answer(
      {
        status: 200,
        body: { records: [record(ids[0]!), record(ids[1]!)], total: 3, hasMore: true, nextCursor: 'c1' },
      },
      { status: 200, body: { records: [record(ids[2]!)], total: 3, hasMore: false, nextCursor: null } },
    );
    const client = new RecordbaseClient({ apiUrl: `${server.url}/api/v1`, apiKey: 'k' });
    const seen: string[] = [];
    for await (const r of client.records.iterate('b', 't', { limit: 2, filter: { field: 'A', equals: 1 } }))
      seen.push(r.id);
    expect(seen).toEqual(ids);
    expect(server.requests.map((r) => JSON.parse(r.body))).toEqual([
      { limit: 2, filter: { field: 'A', equals: 1 } },
      { limit: 2, filter: { field: 'A', equals: 1 }, cursor: 'c1' },
    ]);
  });
});
