import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createDb, type Db } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import { Redis } from 'ioredis';
import type { Dispatcher } from '../src/dispatcher';
import {
  closePublishers,
  deliveryRows,
  insertDatabase,
  insertEvent,
  insertWebhook,
  newPrefix,
  type Receiver,
  sleep,
  startReceiver,
  testDispatcher,
  waitFor,
} from './helpers';

/**
 * Redis as the dispatcher's only copy of the queue, lost: a redis-server of our own on a free
 * port, keeping nothing on disk (`--save '' --appendonly no`), killed and started again empty.
 */

jest.setTimeout(60_000);

let testDb: TestDatabase;
let db: Db;
let receiver: Receiver;
let port: number;
let redisUrl: string;
let redisProcess: ChildProcess | undefined;
let dispatcher: Dispatcher | undefined;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: found } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return found;
}

async function startRedis(): Promise<void> {
  redisProcess = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: 'ignore' },
  );
  await waitFor(
    async () => {
      const probe = new Redis(redisUrl, {
        lazyConnect: true,
        retryStrategy: () => null,
        maxRetriesPerRequest: 0,
      });
      probe.on('error', () => {});
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } catch {
        return false;
      } finally {
        probe.disconnect();
      }
    },
    { what: 'redis-server to answer' },
  );
}

async function killRedis(): Promise<void> {
  const child = redisProcess;
  redisProcess = undefined;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDb(testDb.url, { maxConnections: 10 });
  receiver = await startReceiver();
  port = await freePort();
  redisUrl = `redis://127.0.0.1:${port}`;
});
afterEach(async () => {
  if (!redisProcess) await startRedis();
  await dispatcher?.close({ force: true });
  await closePublishers();
  dispatcher = undefined;
  await killRedis();
  receiver.requests.length = 0;
  receiver.respond((_request, response) => response.end('ok'));
});
afterAll(async () => {
  await killRedis(); // Its keys die with it (nothing on disk).
  await receiver.close();
  await db.close();
  await testDb.drop();
});

const delivered = (eventId: string) => receiver.requests.filter((r) => r.json?.id === `evt_${eventId}`);

it('delivers events written while Redis is down, from the outbox, and published ones once it is back', async () => {
  await startRedis();
  const prefix = newPrefix();
  dispatcher = testDispatcher(db, { redisUrl, queuePrefix: prefix, sweepGraceMs: 1000 });
  dispatcher.start();
  const databaseId = await insertDatabase(db);
  await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
  const published = { publishTo: prefix, publishToRedis: redisUrl };
  const before = await insertEvent(db, { databaseId, tableId: 'tbla', type: 'record.created', ...published });
  await waitFor(() => delivered(before).length > 0, { what: 'the delivery before the outage' });
  await closePublishers();

  await killRedis();
  // The writer's publish fails while Redis is away: the events exist only in the outbox.
  const during: string[] = [];
  for (let i = 0; i < 3; i++)
    during.push(await insertEvent(db, { databaseId, tableId: 'tbla', type: 'record.created' }));
  await waitFor(() => during.every((eventId) => delivered(eventId).length > 0), {
    timeoutMs: 30_000,
    what: 'the deliveries during the outage',
  });
  for (const eventId of during) {
    await waitFor(async () => (await deliveryRows(db, eventId))[0]?.status === 'succeeded', {
      what: 'success',
    });
  }

  await startRedis(); // Same port, empty.
  const after = await insertEvent(db, { databaseId, tableId: 'tbla', type: 'record.created', ...published });
  await waitFor(() => delivered(after).length > 0, {
    timeoutMs: 30_000,
    what: 'the delivery after the outage',
  });
  await sleep(1500);
  for (const eventId of [before, ...during, after]) expect(delivered(eventId)).toHaveLength(1);
});

it('still retries a delivery whose delayed retry job was lost with Redis', async () => {
  await startRedis();
  dispatcher = testDispatcher(db, { redisUrl, retryScheduleMs: [1500], sweepGraceMs: 500 });
  dispatcher.start();
  receiver.respond((request, response) => {
    response.statusCode = delivered(request.json.id.slice(4)).length === 1 ? 500 : 200;
    response.end();
  });
  const databaseId = await insertDatabase(db);
  await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.updated'] });
  const eventId = await insertEvent(db, { databaseId, tableId: 'tblb', type: 'record.updated' });
  // Unpublished: the sweep (grace 500 ms) dispatches it; its retry goes through the queue.
  await waitFor(async () => (await deliveryRows(db, eventId))[0]?.status === 'retrying', {
    what: 'the first failure',
  });

  // The retry is a delayed job in Redis; Redis restarts empty before it is due.
  await killRedis();
  await startRedis();

  await waitFor(() => delivered(eventId).length >= 2, { timeoutMs: 30_000, what: 'the retry' });
  expect(delivered(eventId)[1]!.json.metadata.attempt).toBe(2);
  await waitFor(async () => (await deliveryRows(db, eventId))[0]?.status === 'succeeded');
});

it('closes promptly while Redis is down', async () => {
  await startRedis();
  dispatcher = testDispatcher(db, { redisUrl });
  dispatcher.start();
  await waitFor(async () => {
    try {
      await dispatcher!.readiness();
      return true;
    } catch {
      return false;
    }
  });
  await killRedis();
  await sleep(300);
  const started = Date.now();
  await dispatcher.close();
  expect(Date.now() - started).toBeLessThan(10_000);
});
