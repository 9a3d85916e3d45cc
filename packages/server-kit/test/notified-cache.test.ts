import {
  API_KEYS_CHANNEL,
  createDb,
  createListener,
  createNotifiedCache,
  type Db,
  hashApiKey,
  type NotifiedCache,
  newApiKeySecret,
  notifyStatement,
  withTransaction,
} from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import pg from 'pg';
import { type Authenticate, createAuthenticator, type KnownApiKey } from '../src/auth';
import { createLogger } from '../src/logger';
import { type SilentProxy, startSilentProxy } from './silent-proxy';

/**
 * API keys are kept per process until a revocation's NOTIFY. When the
 * listening connection dies and the process is told (PostgreSQL restarted, the backend killed),
 * nothing is served from memory until it listens again. When nothing tells it (a partition, a
 * host gone), it must not go on trusting what it kept: entries have a bounded age, and a
 * heartbeat finds the dead connection and listens again on a new one.
 */

const logger = createLogger('notified-cache-test', 'silent');
/** Names the connections that go through the proxy, so a test can find and kill them. */
const APPLICATION = 'notified-cache-test';

let testDb: TestDatabase;
let db: Db;
let proxy: SilentProxy;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDb(testDb.url);
});
afterAll(async () => {
  await db.close();
  await testDb.drop();
});
beforeEach(async () => {
  const { hostname, port } = new URL(testDb.url);
  proxy = await startSilentProxy({ host: hostname, port: Number(port || 5432) });
});
afterEach(() => proxy.close());

/** Settings of connections through the proxy; the cache and listener open their own from them. */
const proxiedPool = () =>
  new pg.Pool({ connectionString: proxy.url(testDb.url), application_name: APPLICATION, max: 1 });

// Generous: on a loaded machine the listener's reconnection has taken more than 5 s; a condition
// that holds ends the wait at once.
async function waitFor(condition: () => boolean | Promise<boolean>, ms = 20_000): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!(await condition())) {
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** Ends the backend of the one connection through the proxy: the listening one. */
async function killListeningBackend(): Promise<void> {
  const killed = await db.pool.query(
    'SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
    [testDb.name, APPLICATION],
  );
  expect(killed.rows).toEqual([{ killed: true }]);
}

describe('the listener', () => {
  it('finds a connection lost without a word by its heartbeat, and listens again on a new one', async () => {
    const pool = proxiedPool();
    let connects = 0;
    const heard: string[] = [];
    const listener = createListener({
      pool,
      channels: ['notified_cache_test'],
      onNotification: (_channel, payload) => heard.push(payload),
      onConnected: () => {
        connects += 1;
      },
      logger,
      reconnectDelayMs: 50,
      heartbeatIntervalMs: 100,
      heartbeatTimeoutMs: 300,
    });
    try {
      listener.start();
      expect(await waitFor(() => listener.connected())).toBe(true);
      // A connection that answers stays.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(connects).toBe(1);
      expect(listener.connected()).toBe(true);

      proxy.cut();
      await killListeningBackend();
      expect(await waitFor(() => !listener.connected(), 2_000)).toBe(true);
      expect(await waitFor(() => listener.connected() && connects === 2, 3_000)).toBe(true);
      await db.pool.query(`SELECT pg_notify('notified_cache_test', 'after')`);
      expect(await waitFor(() => heard.includes('after'))).toBe(true);
    } finally {
      await proxy.close();
      await listener.close();
      await pool.end();
    }
  });
});

describe('API keys kept in memory', () => {
  let cache: NotifiedCache<KnownApiKey | null>;
  let settings: pg.Pool;
  let authenticate: Authenticate;

  function keep(maxAgeMs?: number): void {
    settings = proxiedPool();
    cache = createNotifiedCache<KnownApiKey | null>({
      pool: settings,
      channels: [API_KEYS_CHANNEL],
      logger,
      maxEntries: 100,
      keep: (key) => key !== null,
      ...(maxAgeMs === undefined ? {} : { maxAgeMs }),
    });
    authenticate = createAuthenticator({ prisma: db.prisma, rootApiKey: undefined, keys: cache });
  }
  afterEach(async () => {
    // First the proxy, whose silent connections would keep the cache's close waiting.
    await proxy.close();
    await cache.close();
    await settings.end();
  });

  /** A new key, used until it is served from memory (the listener connects after a moment). */
  async function keptKey(): Promise<{ id: string; bearer: string }> {
    const secret = newApiKeySecret();
    const inserted = await db.pool.query<{ id: string }>(
      `INSERT INTO api_keys (id, name, prefix, hash, scopes, all_databases)
       VALUES (gen_random_uuid(), 'kept', $1, $2, '{schema:read}', true) RETURNING id`,
      [secret.slice(0, 8), hashApiKey(secret)],
    );
    const bearer = `Bearer ${secret}`;
    const kept = await waitFor(async () => {
      await authenticate(bearer);
      // A load that finds nothing is not kept: this only tells whether the key was.
      return (await cache.get(hashApiKey(secret), async () => null)).cached;
    });
    expect(kept).toBe(true);
    return { id: inserted.rows[0]!.id, bearer };
  }

  /** As the API revokes: the row deleted and the channel notified, in one transaction. */
  async function revoke(id: string): Promise<void> {
    await withTransaction(db.pool, async (client) => {
      await client.query('DELETE FROM api_keys WHERE id = $1', [id]);
      await client.query(notifyStatement(API_KEYS_CHANNEL));
    });
  }

  const refused = (bearer: string) =>
    authenticate(bearer).then(
      () => false,
      (error: { code?: string }) => error.code === 'UNAUTHORIZED',
    );

  it('refuses a key revoked while the listening connection was killed, at once', async () => {
    keep();
    const key = await keptKey();
    await killListeningBackend();
    await revoke(key.id);
    // Far within the entries' age: the process knew its connection was gone.
    expect(await waitFor(() => refused(key.bearer), 1_000)).toBe(true);
  });

  it('refuses a key revoked while the listening connection was lost without a word, within the age bound', async () => {
    const maxAgeMs = 1_000;
    keep(maxAgeMs);
    const key = await keptKey();
    proxy.cut();
    await killListeningBackend();
    await revoke(key.id);
    // The process still believes it listens; its heartbeat (every 30 s) has not run.
    expect(await waitFor(() => refused(key.bearer), maxAgeMs + 1_500)).toBe(true);
  });
});
