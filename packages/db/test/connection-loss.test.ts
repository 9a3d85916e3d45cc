import pg from 'pg';
import { createDb, type Db } from '../src/client';
import { classifyDatabaseError } from '../src/errors';
import { createNotifiedCache } from '../src/notified-cache';
import { createTestDatabase, type TestDatabase } from '../src/testing';
import { startTerminatingProxy } from './support/terminating-proxy';

/**
 * A connection lost under a checked-out client (PostgreSQL restarted, the backend terminated)
 * must fail that request as "unavailable" (a 503), not crash the process with pg's unhandled
 * 'error' event, and PostgreSQL out of reach must read as unavailable too.
 */

let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase();
  db = createDb(database.url, { applicationName: 'connection-loss-test' });
});
afterAll(async () => {
  await db.close();
  await database.drop();
});

it('a checked-out client whose backend is terminated fails its query as unavailable, and the pool goes on', async () => {
  const client = await db.pool.connect();
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const killer = createDb(database.url, { maxConnections: 1 });
  try {
    await killer.pool.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
  } finally {
    await killer.close();
  }
  // The socket's end arrives as an 'error' on the client: without a listener, an uncaught exception.
  await new Promise((done) => setTimeout(done, 200));
  const failure = await client.query('SELECT 1').then(
    () => null,
    (error: unknown) => error,
  );
  client.release();
  expect(failure).toBeInstanceOf(Error);
  expect(classifyDatabaseError(failure)?.kind).toBe('unavailable');
  const again = await db.pool.query<{ one: number }>('SELECT 1 AS one');
  expect(again.rows[0]?.one).toBe(1);
});

it('a listening connection whose backend is terminated as its pool hands it out crashes nothing, and listening resumes', async () => {
  const { hostname, port } = new URL(database.url);
  const proxy = await startTerminatingProxy({ host: hostname, port: Number(port || 5432) }, async (pid) => {
    await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
  });
  // Gives the settings only: the cache listens on a pool of its own made from them.
  const settings = new pg.Pool({ connectionString: proxy.url(database.url), max: 1 });
  const warnings: string[] = [];
  const cache = createNotifiedCache<number>({
    pool: settings,
    channels: ['connection_loss_test'],
    logger: { warn: (...args: unknown[]) => warnings.push(String(args.at(-1))) },
    maxEntries: 10,
  });
  try {
    // The FATAL is parsed before the listener can add a listener of its own: unhandled, pg's
    // 'error' event is an uncaught exception, which fails this test (and kills a service).
    const deadline = performance.now() + 20_000;
    while (!(proxy.terminated() && cache.listening()) && performance.now() < deadline)
      await new Promise((done) => setTimeout(done, 20));
    expect(proxy.terminated()).toBe(true);
    expect(warnings).toContain('cannot LISTEN; retrying');
    expect(cache.listening()).toBe(true);
  } finally {
    await cache.close();
    await settings.end();
    await proxy.close();
  }
});

it('PostgreSQL out of reach (connection refused) is unavailable', async () => {
  const url = new URL(database.url);
  url.port = '1';
  const nowhere = createDb(url.toString(), { acquireTimeoutMs: 2000 });
  try {
    const failure = await nowhere.pool.query('SELECT 1').then(
      () => null,
      (error: unknown) => error,
    );
    expect(classifyDatabaseError(failure)?.kind).toBe('unavailable');
  } finally {
    await nowhere.close();
  }
});

it('a query whose connection ended is unavailable; a plain bug is not', () => {
  expect(classifyDatabaseError(new Error('Connection terminated unexpectedly'))?.kind).toBe('unavailable');
  expect(classifyDatabaseError(new Error('undefined is not a function'))).toBeNull();
});
