import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { badRequest, clip } from '../src/errors';
import { createEndpoint, errorMiddleware } from '../src/http';
import { createLogger } from '../src/logger';

/**
 * PostgreSQL quotes a value whole in its errors (up to 1 GB); neither an answer nor a log line may
 * carry all of it.
 */

const HUGE = 2_000_000;

// Every key may use these routes: what an answer carries is the question here, not who may ask.
const endpoint = createEndpoint(() => {});

let server: Server;
let url: string;
const lines: string[] = [];

/** An error as pg reports it: SQLSTATE, message and detail quoting the value. */
function quotingError(code: string): Error {
  return Object.assign(new Error(`invalid input syntax for type integer: "${'x'.repeat(HUGE)}"`), {
    code,
    detail: `Failing row contains (${'y'.repeat(HUGE)}).`,
  });
}

beforeAll(async () => {
  const logger = createLogger(
    'error-text-test',
    'info',
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    }),
  );
  const app = express();
  app.get('/ours', () => {
    throw badRequest(`Bad value: ${'z'.repeat(HUGE)}`);
  });
  app.get('/database-value', () => {
    throw quotingError('22P02');
  });
  app.get('/unexpected', () => {
    throw quotingError('XX000');
  });
  // A route whose work is abandoned when its client goes away, as a cancelled query is.
  app.use((_req, res, next) => {
    res.locals.principal = { keyId: 'k', keyName: 'k', scopes: new Set(['records:read']), databaseIds: null };
    next();
  });
  app.get(
    '/abandoned',
    endpoint({ access: { scope: 'records:read' } }, ({ signal }) => {
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    }),
  );
  app.use(errorMiddleware(logger));
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('clip', () => {
  it('keeps a short text, and says how much of a long one it left out', () => {
    expect(clip('short', 10)).toBe('short');
    expect(clip('abcdefghij', 4)).toBe('abcd… (6 more characters)');
  });

  it('never splits a surrogate pair', () => {
    expect(clip('ab😀cd', 3)).toBe('ab… (4 more characters)');
  });
});

describe('error answers and log lines', () => {
  it('clip a message of our own', async () => {
    const answer = await fetch(`${url}/ours`);
    expect(answer.status).toBe(400);
    const { error } = (await answer.json()) as { error: { message: string } };
    expect(error.message.length).toBeLessThan(10_100);
    expect(error.message).toMatch(/^Bad value: z+… \(\d+ more characters\)$/);
  });

  it("clip PostgreSQL's words in the answer", async () => {
    const answer = await fetch(`${url}/database-value`);
    expect(answer.status).toBe(400);
    const { error } = (await answer.json()) as { error: { message: string } };
    expect(error.message).toMatch(
      /^Invalid value in the request: invalid input syntax for type integer: "x+/,
    );
    expect(error.message.length).toBeLessThan(1200);
  });

  it('clip every text of a logged error', async () => {
    lines.length = 0;
    const answer = await fetch(`${url}/unexpected`);
    expect(answer.status).toBe(500);
    expect(lines).toHaveLength(1);
    const line = lines[0] as string;
    expect(line.length).toBeLessThan(20_000);
    const logged = JSON.parse(line) as { err: { message: string; detail: string; code: string } };
    expect(logged.err.code).toBe('XX000');
    expect(logged.err.message).toMatch(/more characters\)$/);
    expect(logged.err.detail).toMatch(/^Failing row contains \(y+… \(\d+ more characters\)$/);
  });
});

describe('a request whose client went away', () => {
  it('logs no error for the work abandoned with it', async () => {
    lines.length = 0;
    const gone = new AbortController();
    const request = fetch(`${url}/abandoned`, { signal: gone.signal }).catch(() => 'gone');
    await new Promise((resolve) => setTimeout(resolve, 100));
    gone.abort();
    expect(await request).toBe('gone');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(lines.filter((line) => line.includes('unhandled error'))).toEqual([]);
  });
});
