import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import { badRequest } from '../src/errors';
import { errorMiddleware, requestIds } from '../src/http';

/** Each service keeps the gateway's request id (or makes one), echoes it and logs it. */

let server: Server;
let url: string;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    }),
  );
  const app = express();
  app.use(requestIds(logger));
  app.get('/ok', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/bad', () => {
    throw badRequest('bad on purpose');
  });
  app.get('/boom', () => {
    throw new Error('boom');
  });
  app.use(errorMiddleware(logger));
  server = createServer(app);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((done) => server.close(done));
});

const logged = async (requestId: string, message: string) => {
  // The 'finish' listener runs after the answer went out; give the event loop a turn.
  await new Promise((done) => setImmediate(done));
  return lines.filter((line) => line.requestId === requestId && line.msg === message);
};

describe('request ids', () => {
  it('keeps health checks out of the info log, still echoing their id', async () => {
    const response = await fetch(`${url}/healthz`, { headers: { 'x-request-id': 'probe-1' } });
    expect(response.headers.get('x-request-id')).toBe('probe-1');
    await fetch(`${url}/ok`, { headers: { 'x-request-id': 'after-probe' } });
    expect(await logged('after-probe', 'request')).toHaveLength(1);
    expect(await logged('probe-1', 'request')).toEqual([]);
  });

  it('keeps the id it received, echoes it and logs it with the outcome', async () => {
    const response = await fetch(`${url}/ok`, { headers: { 'x-request-id': 'gw-1234.abc' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('gw-1234.abc');
    expect(await logged('gw-1234.abc', 'request')).toEqual([
      expect.objectContaining({ method: 'GET', path: '/ok', status: 200, durationMs: expect.any(Number) }),
    ]);
  });

  it('makes one for a request without a usable id', async () => {
    const unusable: Record<string, string>[] = [
      {},
      { 'x-request-id': 'two words' },
      { 'x-request-id': 'x'.repeat(129) },
    ];
    for (const headers of unusable) {
      const response = await fetch(`${url}/ok`, { headers });
      const id = response.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(await logged(id!, 'request')).toHaveLength(1);
    }
  });

  it('echoes the id on error answers and names it in the error log', async () => {
    const refused = await fetch(`${url}/bad`, { headers: { 'x-request-id': 'req-bad' } });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('x-request-id')).toBe('req-bad');
    expect(await logged('req-bad', 'request')).toEqual([expect.objectContaining({ status: 400 })]);

    const failed = await fetch(`${url}/boom`, { headers: { 'x-request-id': 'req-boom' } });
    expect(failed.status).toBe(500);
    expect(failed.headers.get('x-request-id')).toBe('req-boom');
    expect(await logged('req-boom', 'unhandled error')).toHaveLength(1);
  });
});
