import { Writable } from 'node:stream';
import express from 'express';
import supertest from 'supertest';
import { operationalRoutes } from '../src/health';
import { createLogger } from '../src/logger';
import { createMetrics } from '../src/metrics';

/**
 * `/readyz` answers anyone, so it says only whether each dependency
 * answers. What failed, which can name hosts, users, paths and versions, goes to the log,
 * clipped, and once a minute at most per check however often the route is polled.
 */

const SECRET_LOOKING =
  'password authentication failed for user "rb_admin" at db-7.corp.internal:6432 (S3cr3t)';

let lines: Array<Record<string, unknown>>;
let failure: Error;

function app() {
  lines = [];
  const logger = createLogger(
    'health-test',
    'info',
    new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    }),
  );
  const checks = {
    postgres: async () => {
      throw failure;
    },
    redis: async () => {},
  };
  return supertest(express().use(operationalRoutes(checks, createMetrics('health-test'), logger)));
}

const readinessLines = () => lines.filter((line) => line.msg === 'readiness check failed');

beforeEach(() => {
  failure = new Error(SECRET_LOOKING);
});
afterEach(() => {
  jest.restoreAllMocks();
});

describe('/readyz', () => {
  it('answers only each dependency state, never what the failure said', async () => {
    const response = await app().get('/readyz').expect(503);
    expect(response.body).toEqual({
      status: 'unavailable',
      checks: { postgres: 'unavailable', redis: 'ok' },
    });
    for (const piece of ['rb_admin', 'corp.internal', '6432', 'S3cr3t', 'password']) {
      expect(response.text).not.toContain(piece);
    }
  });

  it('logs the failure at warn, once a minute at most per check, counting those it left out', async () => {
    let now = Date.now();
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const api = app();
    for (let poll = 0; poll < 20; poll++) await api.get('/readyz').expect(503);
    expect(readinessLines()).toEqual([
      expect.objectContaining({ level: 40, check: 'postgres', reason: SECRET_LOOKING, unlogged: 0 }),
    ]);
    now += 59_000;
    await api.get('/readyz').expect(503);
    expect(readinessLines()).toHaveLength(1);
    now += 1_000;
    await api.get('/readyz').expect(503);
    expect(readinessLines()).toHaveLength(2);
    expect(readinessLines()[1]).toMatchObject({ check: 'postgres', unlogged: 20 });
  });

  it('clips a huge failure text in the log', async () => {
    failure = new Error(`invalid input: ${'x'.repeat(1_000_000)}`);
    const response = await app().get('/readyz').expect(503);
    expect(response.text.length).toBeLessThan(200);
    const [line] = readinessLines();
    expect(line?.reason).toMatch(/^invalid input: x+… \(\d+ more characters\)$/);
    expect(String(line?.reason).length).toBeLessThan(600);
  });

  it('answers 200 when every check answers', async () => {
    const api = supertest(
      express().use(
        operationalRoutes(
          { postgres: async () => {} },
          createMetrics('health-test'),
          createLogger('t', 'silent'),
        ),
      ),
    );
    expect((await api.get('/readyz').expect(200)).body).toEqual({
      status: 'ready',
      checks: { postgres: 'ok' },
    });
  });
});
