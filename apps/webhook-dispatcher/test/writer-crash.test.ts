import { type ChildProcess, spawn } from 'node:child_process';
import { createDb, type Db } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import { freePort, launchService, type RunningService } from '@recordbase/launcher';
import { stackEnv } from '@recordbase/launcher/stack';
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
let api: RunningService | undefined;

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
  await api?.stop('SIGKILL');
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
  const env = stackEnv({
    databaseUrl: testDb.url,
    redisUrl: `redis://127.0.0.1:${redisPort}`,
    queuePrefix: prefix,
    // The dispatcher below decrypts the webhook's secret with the same key.
    secrets: { WEBHOOK_SECRET_KEY: SECRET_KEY.toString('base64') },
    env: { LOG_LEVEL: 'silent' },
  });
  const rootKey = env.ROOT_API_KEY;
  api = launchService({
    name: 'records-api',
    port: apiPort,
    env,
    output: (line, stream) => {
      if (stream === 'stderr') process.stderr.write(`${line}\n`);
    },
    readyTimeoutMs: 30_000,
  });
  const url = (path: string) => `http://127.0.0.1:${apiPort}/api/v1${path}`;
  const headers = { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' };
  await api.ready;
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
  await api.stop('SIGKILL');
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
