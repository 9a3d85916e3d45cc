import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createDb, type Db } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import {
  attemptRows,
  closePublishers,
  deliveryRows,
  dropPrefix,
  insertDatabase,
  insertEvent,
  insertWebhook,
  newPrefix,
  REDIS_URL,
  type Receiver,
  SECRET_KEY,
  startReceiver,
  waitFor,
} from './helpers';

/**
 * The real service (src/main.ts run by node with tsx) killed with SIGKILL while an attempt is in
 * flight: no shutdown code runs and the BullMQ job stays "active" in Redis with its lock, the
 * event undispatched in PostgreSQL. A second process started afterwards must still deliver it.
 */

jest.setTimeout(90_000);

let testDb: TestDatabase;
let db: Db;
let receiver: Receiver;
const prefix = newPrefix();
const children: ChildProcess[] = [];

function startService(): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'src', 'main.ts')], {
    cwd: join(__dirname, '..'),
    env: {
      ...process.env,
      DATABASE_URL: testDb.url,
      REDIS_URL,
      WEBHOOK_SECRET_KEY: SECRET_KEY.toString('base64'),
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      QUEUE_PREFIX: prefix,
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_RETRY_SCHEDULE: '1s,1s',
      DISPATCH_SWEEP_INTERVAL_MS: '300',
      DISPATCH_SWEEP_GRACE_MS: '500',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.push(child);
  return child;
}

async function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill(signal);
  return exited;
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDb(testDb.url, { maxConnections: 5 });
  receiver = await startReceiver();
});
afterAll(async () => {
  for (const child of children) await kill(child, 'SIGKILL');
  await closePublishers();
  await receiver.close();
  await db.close();
  await testDb.drop();
  await dropPrefix(prefix);
});

it('delivers an event whose attempt was in flight when the process was killed with SIGKILL (new process)', async () => {
  const databaseId = await insertDatabase(db);
  await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
  // The first request is held open: the attempt is in flight when the process dies.
  let held = false;
  receiver.respond((_request, response) => {
    if (!held) {
      held = true;
      return;
    }
    response.end('ok');
  });

  const first = startService();
  const eventId = await insertEvent(db, {
    databaseId,
    tableId: 'tblc',
    type: 'record.created',
    publishTo: prefix,
  });
  await waitFor(() => receiver.requests.length >= 1, { timeoutMs: 30_000, what: 'the first attempt' });
  // Nothing is written before an attempt's outcome: the event is still undispatched.
  expect(await deliveryRows(db, eventId)).toEqual([]);
  await kill(first, 'SIGKILL');

  startService();
  const [delivery] = await waitFor(
    async () => {
      const rows = await deliveryRows(db, eventId);
      return rows[0]?.status === 'succeeded' && rows;
    },
    { timeoutMs: 45_000, what: 'the delivery by the second process' },
  );
  const requests = receiver.requests.filter((r) => r.json?.id === `evt_${eventId}`);
  // At least once: the interrupted attempt, then the redelivery with the same event id. The
  // interrupted one was never recorded, so the redelivery is attempt 1 again.
  expect(requests.length).toBe(2);
  expect(requests.map((r) => r.json.metadata.attempt)).toEqual([1, 1]);
  expect(delivery).toMatchObject({ attempts: 1, last_status_code: 200 });
  expect((await attemptRows(db, delivery!.id)).map((row) => [row.attempt, row.status_code])).toEqual([
    [1, 200],
  ]);
});

it('exits 0 after a graceful shutdown on SIGTERM (the second process)', async () => {
  const child = children.at(-1)!;
  expect(await kill(child, 'SIGTERM')).toBe(0);
});
