import { createDb, type Db, DELIVERIES_CHANNEL } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import { createMetrics } from '@recordbase/server-kit/metrics';
import { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import supertest from 'supertest';
import { createApp } from '../src/app';
import type { Dispatcher } from '../src/dispatcher';
import {
  attemptRows,
  closePublishers,
  deliveryRows,
  dropPrefix,
  insertDatabase,
  insertEvent as insertOutboxEvent,
  insertTable,
  insertWebhook,
  newPrefix,
  REDIS_URL,
  type ReceivedRequest,
  type Receiver,
  silentLogger,
  sleep,
  startReceiver,
  testDispatcher,
  waitFor,
} from './helpers';

/**
 * End to end through a real dispatcher (PostgreSQL, Redis, BullMQ), a real HTTP receiver on
 * 127.0.0.1, and rows written straight into webhooks and outbox_events.
 */

let testDb: TestDatabase;
let db: Db;
let receiver: Receiver;
/** The queue of the test: events are published there, and the dispatcher it starts consumes it. */
let prefix: string;
/** A record id for events that name one. */
const RECORD_ID = '0192d1c5-7e0a-7cc1-8a55-2f1f6f6f0b01';

const running: Dispatcher[] = [];

function start(overrides: Parameters<typeof testDispatcher>[1] = {}): Dispatcher {
  const dispatcher = testDispatcher(db, { queuePrefix: prefix, ...overrides });
  running.push(dispatcher);
  dispatcher.start();
  return dispatcher;
}

/** An event committed and published, as records-api writes it. */
const insertEvent = (database: Db, options: Omit<Parameters<typeof insertOutboxEvent>[1], 'publishTo'>) =>
  insertOutboxEvent(database, { ...options, publishTo: prefix });

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDb(testDb.url, { maxConnections: 20 });
  receiver = await startReceiver();
});
beforeEach(() => {
  prefix = newPrefix();
});
afterEach(async () => {
  for (const dispatcher of running.splice(0)) await dispatcher.close();
  await closePublishers();
  await dropPrefix(prefix);
  // Deliveries a test left open would otherwise be swept into the next test's receiver.
  await db.pool.query(
    "UPDATE webhook_deliveries SET status = 'failed' WHERE status IN ('pending', 'retrying')",
  );
  receiver.requests.length = 0;
  receiver.respond((_request, response) => response.end('ok'));
});
afterAll(async () => {
  await receiver.close();
  await db.close();
  await testDb.drop();
});

const forEvent = (eventId: string) => () => receiver.requests.filter((r) => r.json?.id === `evt_${eventId}`);
/** 1 for the first request carrying this request's event id, 2 for the second... */
const attemptOf = (request: ReceivedRequest) =>
  receiver.requests.filter((r) => r.json?.id === request.json?.id).length;

describe('delivery', () => {
  it('delivers a committed event with a verifiable signature and the documented envelope', async () => {
    start();
    const databaseId = await insertDatabase(db);
    const tableId = await insertTable(db, databaseId, 'Orders');
    const webhook = await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
    const data = { tableId, recordIds: ['0190f2a4-5b6c-7d8e-9f00-112233445566'], records: [] };
    const eventId = await insertEvent(db, {
      databaseId,
      tableId,
      type: 'record.created',
      data,
      source: 'import',
    });
    const [request] = await waitFor(() => forEvent(eventId)().length > 0 && forEvent(eventId)(), {
      what: 'the delivery',
    });
    const created = await db.pool.query<{ created_at: Date }>(
      'SELECT created_at FROM outbox_events WHERE id = $1',
      [eventId],
    );

    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['webhook-id']).toBe(`evt_${eventId}`);
    expect(Math.abs(Number(request!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    const verified = new Webhook(webhook.secret).verify(request!.body, {
      'webhook-id': String(request!.headers['webhook-id']),
      'webhook-timestamp': String(request!.headers['webhook-timestamp']),
      'webhook-signature': String(request!.headers['webhook-signature']),
    });
    expect(verified).toEqual({
      id: `evt_${eventId}`,
      type: 'record.created',
      timestamp: created.rows[0]!.created_at.toISOString(),
      data,
      metadata: { webhookId: webhook.id, baseId: databaseId, attempt: 1, source: 'import' },
    });

    const [delivery] = await waitFor(async () => {
      const rows = await deliveryRows(db, eventId);
      return rows[0]?.status === 'succeeded' && rows;
    });
    expect(delivery).toMatchObject({
      status: 'succeeded',
      attempts: 1,
      last_status_code: 200,
      next_attempt_at: null,
    });
    expect(await attemptRows(db, delivery!.id)).toEqual([
      expect.objectContaining({
        attempt: 1,
        status_code: 200,
        error_kind: null,
        error: null,
        response_excerpt: 'ok',
      }),
    ]);
    const event = await db.pool.query('SELECT dispatched_at FROM outbox_events WHERE id = $1', [eventId]);
    expect(event.rows[0].dispatched_at).toBeInstanceOf(Date);
    const health = await db.pool.query('SELECT last_success_at, failing_since FROM webhooks WHERE id = $1', [
      webhook.id,
    ]);
    expect(health.rows[0]).toEqual({ last_success_at: expect.any(Date), failing_since: null });
  });

  it('delivers to the webhooks of the event table, of every table, and of the event type only', async () => {
    start();
    const databaseId = await insertDatabase(db);
    const otherDatabaseId = await insertDatabase(db);
    const orders = await insertTable(db, databaseId, 'Orders');
    const people = await insertTable(db, databaseId, 'People');
    const ordersHook = await insertWebhook(db, {
      databaseId,
      url: `${receiver.url}?orders`,
      events: ['record.updated'],
      tableId: orders,
    });
    const peopleHook = await insertWebhook(db, {
      databaseId,
      url: `${receiver.url}?people`,
      events: ['record.updated'],
      tableId: people,
    });
    const everyTable = await insertWebhook(db, {
      databaseId,
      url: `${receiver.url}?all`,
      events: ['record.updated'],
    });
    const otherType = await insertWebhook(db, {
      databaseId,
      url: `${receiver.url}?type`,
      events: ['record.deleted'],
    });
    const otherBase = await insertWebhook(db, {
      databaseId: otherDatabaseId,
      url: `${receiver.url}?base`,
      events: ['record.updated'],
    });

    const eventId = await insertEvent(db, { databaseId, tableId: orders, type: 'record.updated' });
    await waitFor(() => forEvent(eventId)().length >= 2, { what: 'two deliveries' });
    await sleep(500);
    expect(
      forEvent(eventId)()
        .map((request) => request.url)
        .sort(),
    ).toEqual(['/hook?all', '/hook?orders']);
    const rows = await waitFor(async () => {
      const found = await deliveryRows(db, eventId);
      return found.length === 2 && found;
    });
    expect(rows.map((row) => row.webhook_id)).toEqual([ordersHook.id, everyTable.id]);
    expect([peopleHook.id, otherType.id, otherBase.id]).not.toContain(
      forEvent(eventId)()[0]?.json.metadata.webhookId,
    );
  });

  it('sends record.updated to a webhook watching fields only when one of them changed', async () => {
    start();
    const databaseId = await insertDatabase(db);
    const orders = await insertTable(db, databaseId, 'Orders');
    const watching = await insertWebhook(db, {
      databaseId,
      url: `${receiver.url}?watching`,
      events: ['record.updated', 'record.created'],
      tableId: orders,
      fieldIds: ['fldStatus0000001', 'fldAmount0000001'],
    });
    await insertWebhook(db, {
      databaseId,
      url: `${receiver.url}?every`,
      events: ['record.updated'],
      tableId: orders,
    });
    const unwatched = await insertEvent(db, {
      databaseId,
      tableId: orders,
      type: 'record.updated',
      changedFieldIds: ['fldNotes00000001'],
    });
    const watched = await insertEvent(db, {
      databaseId,
      tableId: orders,
      type: 'record.updated',
      changedFieldIds: ['fldNotes00000001', 'fldAmount0000001'],
    });
    // The field filter narrows record.updated alone.
    const created = await insertEvent(db, { databaseId, tableId: orders, type: 'record.created' });
    await waitFor(() => forEvent(watched)().length >= 2 && forEvent(created)().length >= 1, {
      what: 'the watched change and the creation delivered',
    });
    await waitFor(() => forEvent(unwatched)().length >= 1, { what: 'the unwatched change to every change' });
    await sleep(500);
    expect(forEvent(unwatched)().map((request) => request.url)).toEqual(['/hook?every']);
    expect(
      forEvent(watched)()
        .map((request) => request.url)
        .sort(),
    ).toEqual(['/hook?every', '/hook?watching']);
    expect(forEvent(created)()[0]?.json.metadata.webhookId).toBe(watching.id);
  });

  it('sends nothing to an inactive webhook, even one deactivated after its delivery was written', async () => {
    start({ sweepGraceMs: 200 });
    const databaseId = await insertDatabase(db);
    await insertWebhook(db, { databaseId, url: receiver.url, events: ['table.created'], active: false });
    const eventId = await insertEvent(db, {
      databaseId,
      tableId: null,
      type: 'table.created',
      data: { table: {} },
    });
    await waitFor(async () => {
      const event = await db.pool.query('SELECT dispatched_at FROM outbox_events WHERE id = $1', [eventId]);
      return event.rows[0]?.dispatched_at;
    });
    expect(await deliveryRows(db, eventId)).toEqual([]);

    // A delivery that exists when its webhook is deactivated is closed at send time.
    const later = await insertWebhook(db, { databaseId, url: receiver.url, events: ['table.updated'] });
    await db.pool.query(
      `INSERT INTO webhook_deliveries (event_id, webhook_id, event_type, status, next_attempt_at)
       SELECT $1, $2, 'table.updated', 'pending', now() + interval '1 second'`,
      [eventId, later.id],
    );
    await db.pool.query('UPDATE webhooks SET active = false WHERE id = $1', [later.id]);
    await waitFor(async () => (await deliveryRows(db, eventId))[0]?.status === 'failed', {
      what: 'the close',
    });
    expect(receiver.requests).toHaveLength(0);
  });

  it('retries a failing receiver on the schedule with the same event id and a growing attempt', async () => {
    start({ retryScheduleMs: [300, 300] });
    receiver.respond((request, response) => {
      const failing = attemptOf(request) <= 2;
      response.statusCode = failing ? 500 : 200;
      response.end(failing ? 'boom' : 'ok');
    });
    const databaseId = await insertDatabase(db);
    const webhook = await insertWebhook(db, { databaseId, url: receiver.url, events: ['field.created'] });
    const eventId = await insertEvent(db, {
      databaseId,
      tableId: 'tblx',
      type: 'field.created',
      data: { tableId: 'tblx', field: {} },
    });
    await waitFor(() => forEvent(eventId)().length >= 3, { what: 'three attempts' });
    const requests = forEvent(eventId)();
    expect(requests.map((r) => r.headers['webhook-id'])).toEqual(Array(3).fill(`evt_${eventId}`));
    expect(requests.map((r) => r.json.metadata.attempt)).toEqual([1, 2, 3]);
    // Signed afresh each time, each signature valid.
    for (const request of requests) {
      expect(() =>
        new Webhook(webhook.secret).verify(request.body, {
          'webhook-id': String(request.headers['webhook-id']),
          'webhook-timestamp': String(request.headers['webhook-timestamp']),
          'webhook-signature': String(request.headers['webhook-signature']),
        }),
      ).not.toThrow();
    }
    const [delivery] = await waitFor(async () => {
      const rows = await deliveryRows(db, eventId);
      return rows[0]?.status === 'succeeded' && rows;
    });
    expect(delivery).toMatchObject({ attempts: 3, last_status_code: 200 });
    expect(
      (await attemptRows(db, delivery!.id)).map((row) => [row.attempt, row.status_code, row.error_kind]),
    ).toEqual([
      [1, 500, 'http'],
      [2, 500, 'http'],
      [3, 200, null],
    ]);
    expect((await attemptRows(db, delivery!.id))[0]!.response_excerpt).toBe('boom');
    const health = await db.pool.query('SELECT failing_since FROM webhooks WHERE id = $1', [webhook.id]);
    expect(health.rows[0].failing_since).toBeNull();
  });

  it('marks a delivery failed after the last step of the schedule', async () => {
    start({ retryScheduleMs: [200] });
    receiver.respond((_request, response) => {
      response.statusCode = 503;
      response.end();
    });
    const databaseId = await insertDatabase(db);
    const webhook = await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.deleted'] });
    const eventId = await insertEvent(db, { databaseId, tableId: 'tbly', type: 'record.deleted' });
    const [delivery] = await waitFor(async () => {
      const rows = await deliveryRows(db, eventId);
      return rows[0]?.status === 'failed' && rows;
    });
    expect(delivery).toMatchObject({ attempts: 2, last_status_code: 503, next_attempt_at: null });
    await sleep(500);
    expect(forEvent(eventId)()).toHaveLength(2);
    const health = await db.pool.query('SELECT active, failing_since FROM webhooks WHERE id = $1', [
      webhook.id,
    ]);
    expect(health.rows[0]).toEqual({ active: true, failing_since: expect.any(Date) });
  });

  it('deactivates a webhook whose receiver answers 410 Gone, at once', async () => {
    start();
    receiver.respond((_request, response) => {
      response.statusCode = 410;
      response.end();
    });
    const databaseId = await insertDatabase(db);
    const webhook = await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
    const eventId = await insertEvent(db, { databaseId, tableId: 'tblz', type: 'record.created' });
    const [delivery] = await waitFor(async () => {
      const rows = await deliveryRows(db, eventId);
      return rows[0]?.status === 'failed' && rows;
    });
    expect(delivery).toMatchObject({ attempts: 1, last_status_code: 410 });
    const state = await db.pool.query('SELECT active FROM webhooks WHERE id = $1', [webhook.id]);
    expect(state.rows[0].active).toBe(false);

    const next = await insertEvent(db, { databaseId, tableId: 'tblz', type: 'record.created' });
    await waitFor(async () => {
      const event = await db.pool.query('SELECT dispatched_at FROM outbox_events WHERE id = $1', [next]);
      return event.rows[0]?.dispatched_at;
    });
    await sleep(300);
    expect(forEvent(next)()).toHaveLength(0);
  });

  it('deactivates a webhook failing without a success for longer than the disable span', async () => {
    start({ retryScheduleMs: [200, 200, 200, 200, 200, 200, 200, 200], disableAfterMs: 600 });
    receiver.respond((_request, response) => {
      response.statusCode = 500;
      response.end();
    });
    const databaseId = await insertDatabase(db);
    const webhook = await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
    const eventId = await insertEvent(db, { databaseId, tableId: 'tblw', type: 'record.created' });
    await waitFor(
      async () =>
        (await db.pool.query('SELECT active FROM webhooks WHERE id = $1', [webhook.id])).rows[0].active ===
        false,
      { what: 'the deactivation' },
    );
    const [delivery] = await waitFor(async () => {
      const rows = await deliveryRows(db, eventId);
      return rows[0]?.status === 'failed' && rows;
    });
    // Stopped well before the schedule ran out.
    expect(delivery!.attempts).toBeLessThan(9);
    await sleep(500);
    expect(forEvent(eventId)()).toHaveLength(delivery!.attempts);
  });

  it('waits at least as long as Retry-After asks', async () => {
    start({ retryScheduleMs: [100] });
    receiver.respond((request, response) => {
      if (attemptOf(request) === 1) response.writeHead(429, { 'retry-after': '2' });
      response.end();
    });
    const databaseId = await insertDatabase(db);
    await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
    const eventId = await insertEvent(db, { databaseId, tableId: 'tblv', type: 'record.created' });
    await waitFor(() => forEvent(eventId)().length >= 1);
    const first = Date.now();
    const [delivery] = await waitFor(async () => {
      const rows = await deliveryRows(db, eventId);
      return rows[0]?.status === 'retrying' && rows;
    });
    expect(delivery!.next_attempt_at!.getTime() - first).toBeGreaterThan(1500);
    await waitFor(() => forEvent(eventId)().length >= 2, { what: 'the retry' });
    expect(Date.now() - first).toBeGreaterThanOrEqual(1700);
  });
});

describe('durability', () => {
  it('re-enqueues, from PostgreSQL, a due delivery whose job Redis never had', async () => {
    // The dispatcher starts only once the scene is set: started earlier, it would dispatch the
    // event itself before the test marks it as handled by "another life".
    const databaseId = await insertDatabase(db);
    const webhook = await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
    // An event dispatched by "another life" of the dispatcher, whose retry job is gone.
    const eventId = await insertEvent(db, { databaseId, tableId: 'tblu', type: 'record.created' });
    await db.pool.query('UPDATE outbox_events SET dispatched_at = now() WHERE id = $1', [eventId]);
    await db.pool.query(
      `INSERT INTO webhook_deliveries (event_id, webhook_id, event_type, status, attempts, next_attempt_at)
       VALUES ($1, $2, 'record.created', 'retrying', 1, now() - interval '10 seconds')`,
      [eventId, webhook.id],
    );
    start({ sweepGraceMs: 1000 });
    const [request] = await waitFor(() => forEvent(eventId)().length > 0 && forEvent(eventId)(), {
      what: 'the swept delivery',
    });
    expect(request!.json.metadata.attempt).toBe(2);
  });

  it('dispatches, from PostgreSQL, an event whose publish was lost', async () => {
    const databaseId = await insertDatabase(db);
    await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
    // Committed, never published (Redis away, or the writer died after its commit).
    const eventId = await insertOutboxEvent(db, { databaseId, tableId: 'tblt', type: 'record.created' });
    start({ sweepGraceMs: 1000 });
    await waitFor(() => forEvent(eventId)().length > 0, { what: 'the swept dispatch' });
    // Recorded after the receipt (the dispatcher sends first).
    await waitFor(async () => (await deliveryRows(db, eventId))[0]?.status === 'succeeded', {
      what: 'the record',
    });
    await sleep(1500);
    expect(forEvent(eventId)()).toHaveLength(1);
  });

  it('delivers at once a delivery the API asks to retry (NOTIFY on the deliveries channel)', async () => {
    // The sweep would only act after a minute: the NOTIFY is what triggers the retry.
    start({ retryScheduleMs: [] });
    receiver.respond((request, response) => {
      response.statusCode = attemptOf(request) === 1 ? 500 : 200;
      response.end();
    });
    const databaseId = await insertDatabase(db);
    await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
    const eventId = await insertEvent(db, { databaseId, tableId: 'tbls', type: 'record.created' });
    const [failed] = await waitFor(async () => {
      const rows = await deliveryRows(db, eventId);
      return rows[0]?.status === 'failed' && rows;
    });
    // What the records-api retry endpoint does.
    await db.pool.query(
      "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), updated_at = now() WHERE id = $1",
      [failed!.id],
    );
    await db.pool.query('SELECT pg_notify($1, $2)', [DELIVERIES_CHANNEL, failed!.id]);
    await waitFor(() => forEvent(eventId)().length >= 2, { timeoutMs: 5000, what: 'the requested retry' });
    expect(forEvent(eventId)()[1]!.json.metadata.attempt).toBe(2);
    await waitFor(async () => (await deliveryRows(db, eventId))[0]?.status === 'succeeded');
  });

  it('dispatches events published before the dispatcher started, once', async () => {
    const databaseId = await insertDatabase(db);
    await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
    const eventIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      eventIds.push(await insertEvent(db, { databaseId, tableId: 'tblr', type: 'record.created' }));
    }
    start();
    await waitFor(() => eventIds.every((id) => forEvent(id)().length > 0), { what: 'five deliveries' });
    await sleep(1500);
    for (const id of eventIds) expect(forEvent(id)()).toHaveLength(1);
  });
});

describe('retention', () => {
  it('deletes delivered history past its retention, as it runs', async () => {
    start({ attemptRetentionMs: 1, eventRetentionMs: 1, historyRetentionMs: 1, pruneIntervalMs: 200 });
    const databaseId = await insertDatabase(db);
    await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
    const eventId = await insertEvent(db, { databaseId, tableId: 'tblk', type: 'record.created' });
    await waitFor(() => forEvent(eventId)().length > 0, { what: 'the delivery' });
    await waitFor(
      async () => {
        const left = await db.pool.query<{ n: number }>(
          `SELECT (SELECT count(*) FROM outbox_events WHERE id = $1)
                + (SELECT count(*) FROM webhook_deliveries WHERE event_id = $1) AS n`,
          [eventId],
        );
        return Number(left.rows[0]!.n) === 0;
      },
      { what: 'the pruning' },
    );
  });
});

describe('subscription time', () => {
  it('does not deliver to a webhook an event committed before it was created, however late the dispatch', async () => {
    const databaseId = await insertDatabase(db);
    const before = await insertEvent(db, { databaseId, tableId: 'tblq', type: 'record.created' });
    // The dispatcher is away while the event waits, and someone subscribes meanwhile.
    await sleep(20);
    const webhook = await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
    await sleep(20);
    const after = await insertEvent(db, { databaseId, tableId: 'tblq', type: 'record.created' });
    start();
    await waitFor(() => forEvent(after)().length > 0, { what: 'the later event' });
    await sleep(1000);
    expect(forEvent(before)()).toHaveLength(0);
    expect((await deliveryRows(db, before)).filter((row) => row.webhook_id === webhook.id)).toHaveLength(0);
  });
});

describe('subscriptions held in memory', () => {
  it('see a webhook created, changed or deactivated after they were loaded, from the next event on', async () => {
    start();
    const databaseId = await insertDatabase(db);
    const first = await insertWebhook(db, {
      databaseId,
      url: `${receiver.url}?first`,
      events: ['record.created'],
    });
    const warm = await insertEvent(db, { databaseId, tableId: 'tblm', type: 'record.created' });
    await waitFor(() => forEvent(warm)().length === 1, { what: 'the first delivery' });

    const second = await insertWebhook(db, {
      databaseId,
      url: `${receiver.url}?second`,
      events: ['record.created'],
    });
    await db.pool.query("UPDATE webhooks SET events = '{record.updated}' WHERE id = $1", [first.id]);
    const next = await insertEvent(db, { databaseId, tableId: 'tblm', type: 'record.created' });
    await waitFor(() => forEvent(next)().length === 1, { what: 'the delivery to the new webhook' });
    await db.pool.query('UPDATE webhooks SET active = false WHERE id = $1', [second.id]);
    const last = await insertEvent(db, { databaseId, tableId: 'tblm', type: 'record.created' });
    await waitFor(
      async () =>
        (await db.pool.query('SELECT dispatched_at FROM outbox_events WHERE id = $1', [last])).rows[0]
          ?.dispatched_at,
    );
    await sleep(300);
    expect(forEvent(next)().map((request) => request.url)).toEqual(['/hook?second']);
    expect(forEvent(last)()).toEqual([]);
  });
});

describe('isolation', () => {
  it('does not let a slow receiver hold up deliveries to others', async () => {
    start({ timeoutMs: 5000 });
    const slow = await startReceiver('127.0.0.1', () => {
      // Never answers within the test.
    });
    try {
      const databaseId = await insertDatabase(db);
      await insertWebhook(db, { databaseId, url: slow.url, events: ['record.created'] });
      await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
      const stuck: string[] = [];
      for (let i = 0; i < 5; i++)
        stuck.push(await insertEvent(db, { databaseId, tableId: 'tblq', type: 'record.created' }));
      await waitFor(() => slow.requests.length >= 5, { what: 'the slow receiver to hold five requests' });
      const started = Date.now();
      const eventId = await insertEvent(db, { databaseId, tableId: 'tblq', type: 'record.created' });
      await waitFor(() => forEvent(eventId)().length > 0, { what: 'the fast delivery' });
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await slow.close();
    }
  });
});

describe('per-receiver limit', () => {
  it('holds at most its limit of attempts to a hanging receiver and puts off the rest, while another receiver gets every event', async () => {
    start({ receiverConcurrency: 2, timeoutMs: 4000 });
    let open = 0;
    let mostOpen = 0;
    const hanging = await startReceiver('127.0.0.1', (_request, response) => {
      open++;
      mostOpen = Math.max(mostOpen, open);
      response.on('close', () => open--);
      // Never answers: each attempt runs to its timeout.
    });
    try {
      const databaseId = await insertDatabase(db);
      const stuck = await insertWebhook(db, { databaseId, url: hanging.url, events: ['record.created'] });
      await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
      const eventIds: string[] = [];
      for (let i = 0; i < 10; i++) {
        eventIds.push(await insertEvent(db, { databaseId, tableId: 'tbln', type: 'record.created' }));
      }
      await waitFor(() => eventIds.every((id) => forEvent(id)().length > 0), {
        timeoutMs: 3000,
        what: 'every event at the healthy receiver',
      });
      // Two attempts in flight; once the receiver counts as stuck, the rest are put off, durably.
      await waitFor(
        async () => {
          const rows = await db.pool.query<{ status: string; attempts: number }>(
            'SELECT status, attempts FROM webhook_deliveries WHERE webhook_id = $1',
            [stuck.id],
          );
          return rows.rows.filter((row) => row.status === 'pending' && row.attempts === 0).length >= 6;
        },
        { timeoutMs: 3000, what: 'the put-off deliveries' },
      );
      expect(hanging.requests.length).toBeLessThanOrEqual(4);
      expect(mostOpen).toBeLessThanOrEqual(2);
    } finally {
      await hanging.close();
    }
  });
});

describe('operational routes', () => {
  it('reports the workers in /readyz and the dispatcher metrics on /metrics', async () => {
    const metrics = createMetrics('webhook-dispatcher');
    const dispatcher = start({ metrics });
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      const api = supertest(createApp({ db, redis, logger: silentLogger, metrics, dispatcher }));
      await waitFor(async () => (await api.get('/readyz')).status === 200, { what: 'readiness' });
      const ready = await api.get('/readyz').expect(200);
      expect(ready.body.checks).toEqual({ postgres: 'ok', redis: 'ok', workers: 'ok' });

      const databaseId = await insertDatabase(db);
      await insertWebhook(db, { databaseId, url: receiver.url, events: ['record.created'] });
      const eventId = await insertEvent(db, { databaseId, tableId: 'tblp', type: 'record.created' });
      await waitFor(async () => (await deliveryRows(db, eventId))[0]?.status === 'succeeded');
      const text = (await api.get('/metrics').expect(200)).text;
      expect(text).toMatch(/webhook_deliveries_total\{[^}]*outcome="succeeded"[^}]*\} [1-9]/);
      expect(text).toMatch(/webhook_delivery_duration_seconds_count\{[^}]*outcome="success"[^}]*\} [1-9]/);
      expect(text).toMatch(/webhook_event_lag_seconds_count\{[^}]*\} [1-9]/);
      expect(text).toContain('webhook_outbox_undispatched_events');

      await dispatcher.close();
      const stopped = await api.get('/readyz').expect(503);
      expect(stopped.body.checks.workers).toBe('unavailable');
    } finally {
      redis.disconnect();
    }
  });
});

/**
 * A delivery goes only to a webhook that still hears its event. A webhook
 * repointed elsewhere with other events must not receive the record deliveries still open on it.
 */
describe('a webhook that no longer subscribes', () => {
  let elsewhere: Receiver;
  beforeAll(async () => {
    elsewhere = await startReceiver();
  });
  afterAll(() => elsewhere.close());

  /** An event whose first attempt failed, its retry pending `retryMs` later. */
  async function failedOnce(options: { tableId: string; type: 'record.updated' | 'record.created' }) {
    receiver.respond((_request, response) => {
      response.statusCode = 500;
      response.end();
    });
    const databaseId = await insertDatabase(db);
    const webhook = await insertWebhook(db, {
      databaseId,
      url: receiver.url,
      events: [options.type],
      tableId: options.tableId,
    });
    const eventId = await insertEvent(db, {
      databaseId,
      tableId: options.tableId,
      type: options.type,
      data: {
        tableId: options.tableId,
        recordIds: [RECORD_ID],
        records: [{ id: RECORD_ID, data: { Salary: 1e6 } }],
      },
      changedFieldIds: ['fldsalary'],
    });
    const [delivery] = await waitFor(async () => {
      const rows = await deliveryRows(db, eventId);
      return rows[0]?.status === 'retrying' && rows;
    });
    return { webhook, eventId, delivery: delivery! };
  }

  it('ends a pending retry unsent, with the reason in its log, once the webhook subscribes to other events', async () => {
    start({ retryScheduleMs: [1500, 1500] });
    const { webhook, eventId, delivery } = await failedOnce({
      tableId: 'tblretarget',
      type: 'record.updated',
    });
    // What a PATCH {url, events: ["table.created"]} writes.
    await db.pool.query("UPDATE webhooks SET url = $2, events = '{table.created}' WHERE id = $1", [
      webhook.id,
      elsewhere.url,
    ]);
    const [closed] = await waitFor(
      async () => {
        expect(elsewhere.requests).toHaveLength(0);
        const rows = await deliveryRows(db, eventId);
        return rows[0]?.status === 'failed' && rows;
      },
      { what: 'the delivery to end' },
    );
    expect(closed).toMatchObject({ id: delivery.id, next_attempt_at: null });
    expect(
      (await attemptRows(db, delivery.id)).map((row) => [row.attempt, row.error_kind, row.error]),
    ).toEqual([
      [1, 'http', expect.any(String)],
      [2, 'unsubscribed', 'the webhook no longer subscribes to record.updated'],
    ]);
    // Past the rest of the schedule: nothing sent anywhere after the first attempt.
    await sleep(2000);
    expect(elsewhere.requests).toHaveLength(0);
    expect(forEvent(eventId)()).toHaveLength(1);
    // Not reopened by the sweep either: the delivery stays closed.
    expect((await deliveryRows(db, eventId))[0]!.status).toBe('failed');
  });

  it('ends a retry, a requested one included, once the webhook listens to another table', async () => {
    start({ retryScheduleMs: [60_000] });
    const { webhook, eventId, delivery } = await failedOnce({ tableId: 'tblfirst', type: 'record.created' });
    await db.pool.query("UPDATE webhooks SET url = $2, table_id = 'tblsecond' WHERE id = $1", [
      webhook.id,
      elsewhere.url,
    ]);
    // What the records-api retry endpoint does, bypassing its own check.
    await db.pool.query(
      "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), updated_at = now() WHERE id = $1",
      [delivery.id],
    );
    await db.pool.query('SELECT pg_notify($1, $2)', [DELIVERIES_CHANNEL, delivery.id]);
    await waitFor(
      async () => {
        expect(elsewhere.requests).toHaveLength(0);
        return (await deliveryRows(db, eventId))[0]?.status === 'failed';
      },
      { what: 'the delivery to end' },
    );
    const attempts = await attemptRows(db, delivery.id);
    expect(attempts.at(-1)).toMatchObject({
      error_kind: 'unsubscribed',
      error: 'the webhook no longer subscribes to events of table tblfirst',
      status_code: null,
    });
    expect(elsewhere.requests).toHaveLength(0);
    expect(forEvent(eventId)()).toHaveLength(1);
  });
});
