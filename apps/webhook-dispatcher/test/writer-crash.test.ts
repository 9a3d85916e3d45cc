import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createDb, type Db } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import type { Dispatcher } from '../src/dispatcher';
import {
  deliveryRows,
  dropPrefix,
  insertWebhook,
  newPrefix,
  type Receiver,
  SECRET_KEY,
  startReceiver,
  testDispatcher,
  waitFor,
} from './helpers';

/**
 * records-api killed with SIGKILL after its transaction committed and before its publish reached
 * Redis: its Redis (a redis-server of our own) is frozen with SIGSTOP, so the publish is sent and
 * never answered, and the process dies with it in flight. The event exists only in the outbox; the
 * dispatcher's sweep must deliver it.
 */

jest.setTimeout(60_000);

let testDb: TestDatabase;
let db: Db;
let receiver: Receiver;
let dispatcher: Dispatcher | undefined;
const prefix = newPrefix();
const children: ChildProcess[] = [];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function spawnChild(command: string, args: string[], env?: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  return child;
}

async function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDb(testDb.url, { maxConnections: 5 });
  receiver = await startReceiver();
});
afterAll(async () => {
  await dispatcher?.close({ force: true });
  for (const child of children) {
    child.kill('SIGCONT');
    await killed(child);
  }
  await receiver.close();
  await db.close();
  await testDb.drop();
  await dropPrefix(prefix);
});

it('delivers an event whose writer was SIGKILLed between its commit and its publish', async () => {
  const redisPort = await freePort();
  const redis = spawnChild('redis-server', [
    '--port',
    String(redisPort),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
  const apiPort = await freePort();
  const rootKey = `root_${randomBytes(24).toString('hex')}`;
  const api = spawnChild(
    process.execPath,
    ['--import', 'tsx', join(__dirname, '..', '..', 'records-api', 'src', 'main.ts')],
    {
      ...process.env,
      DATABASE_URL: testDb.url,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      ROOT_API_KEY: rootKey,
      WEBHOOK_SECRET_KEY: SECRET_KEY.toString('base64'),
      FILE_TOKEN_SECRET: randomBytes(32).toString('base64url'),
      QUEUE_PREFIX: prefix,
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
    },
  );
  const url = (path: string) => `http://127.0.0.1:${apiPort}/api/v1${path}`;
  const headers = { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' };
  await waitFor(
    async () => {
      try {
        return (await fetch(`http://127.0.0.1:${apiPort}/readyz`)).ok;
      } catch {
        return false;
      }
    },
    { timeoutMs: 30_000, what: 'records-api to be ready' },
  );
  const base = await fetch(url('/bases'), {
    method: 'POST',
    headers,
    body: JSON.stringify({
      name: 'W',
      tables: [{ name: 'Items', fields: [{ name: 'Name', type: 'single_line_text' }] }],
    }),
  });
  expect(base.status).toBe(201);
  const { id: databaseId, tables } = (await base.json()) as { id: string; tables: { id: string }[] };
  await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });

  // From here Redis takes commands and never answers them.
  redis.kill('SIGSTOP');
  const created = await fetch(url(`/bases/${databaseId}/tables/${tables[0]!.id}/records`), {
    method: 'POST',
    headers,
    body: JSON.stringify({ record: { Name: 'survives' } }),
  });
  expect(created.status).toBe(201);
  const { id: recordId } = (await created.json()) as { id: string };
  const outbox = await db.pool.query<{ id: string; dispatched_at: Date | null }>(
    "SELECT id, dispatched_at FROM outbox_events WHERE type = 'record.created'",
  );
  expect(outbox.rows).toEqual([{ id: expect.any(String), dispatched_at: null }]);
  await killed(api);
  redis.kill('SIGCONT');
  await killed(redis);

  // A dispatcher on the shared Redis: the queue never got the event, the outbox has it.
  dispatcher = testDispatcher(db, { queuePrefix: prefix, sweepGraceMs: 1000 });
  dispatcher.start();
  const eventId = outbox.rows[0]!.id;
  const [request] = await waitFor(
    () => {
      const found = receiver.requests.filter((r) => r.json?.id === `evt_${eventId}`);
      return found.length > 0 && found;
    },
    { timeoutMs: 20_000, what: 'the swept delivery' },
  );
  expect(request!.json.data.recordIds).toEqual([recordId]);
  await waitFor(async () => (await deliveryRows(db, eventId))[0]?.status === 'succeeded', {
    what: 'success',
  });
});
