import type { RecordbaseClient, Table } from '@recordbase/client';
import { WebhookVerifier } from '@recordbase/client/webhooks';
import { Webhook } from 'standardwebhooks';
import { clientOf } from './client';
import { type Receiver, startReceiver } from './receiver';
import { type Stack, startStack } from './stack';

let stack: Stack;
let client: RecordbaseClient;
let receiver: Receiver;
let baseId: string;
let tasks: Table;

beforeAll(async () => {
  stack = await startStack({ env: { WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s' } });
  client = clientOf(stack);
  receiver = await startReceiver();
  const base = await client.bases.create({
    name: 'E2E',
    tables: [
      {
        name: 'Tasks',
        fields: [
          { name: 'Title', type: 'single_line_text' },
          { name: 'Points', type: 'number' },
        ],
      },
      { name: 'Notes', fields: [{ name: 'Text', type: 'long_text' }] },
    ],
  });
  baseId = base.id;
  tasks = base.tables[0]!;
});
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

const subscribed: number[] = [];

beforeEach(() => {
  receiver.received.length = 0;
});
// Removed even when a test fails, so that no webhook of one test hears the next one's events.
afterEach(async () => {
  for (const id of subscribed.splice(0)) await client.webhooks.delete(baseId, id);
});

async function subscribe(body: Omit<Parameters<RecordbaseClient['webhooks']['create']>[1], 'url'>) {
  const hook = await client.webhooks.create(baseId, { url: receiver.url, ...body });
  subscribed.push(hook.id);
  return hook;
}

async function unsubscribe(id: number) {
  await expect(client.webhooks.delete(baseId, id)).resolves.toMatchObject({ success: true });
  subscribed.splice(subscribed.indexOf(id), 1);
}

describe('webhooks, end to end', () => {
  it('delivers record, table and field events with the contract envelope and a verifiable signature', async () => {
    const hook = await subscribe({ events: ['record.created', 'table.created', 'field.created'] });
    const created = await client.records.createMany(baseId, 'Tasks', [
      { Title: 'one', Points: 1 },
      { Title: 'two', Points: 2 },
    ]);
    expect(created.createdRecordIds).toHaveLength(2);
    const table = await client.tables.create(baseId, {
      name: 'Later',
      fields: [{ name: 'N', type: 'number' }],
    });
    const field = await client.fields.create(baseId, 'Tasks', { name: 'Done', type: 'checkbox' });
    // At least once: a repeat of an event may arrive, and counts once.
    const deliveries = await receiver.waitFor(3, 30_000, { webhookId: hook.id, distinct: true });
    // Both the client's verifier and the standardwebhooks library accept every delivery.
    const library = new Webhook(hook.secret);
    const verifier = new WebhookVerifier(hook.secret);
    for (const delivery of deliveries) {
      expect(delivery.headers['content-type']).toMatch(/^application\/json/);
      const verified = library.verify(delivery.body, {
        'webhook-id': String(delivery.headers['webhook-id']),
        'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
        'webhook-signature': String(delivery.headers['webhook-signature']),
      });
      expect(verified).toEqual(delivery.json);
      await expect(verifier.verify(delivery.body, delivery.headers)).resolves.toEqual(delivery.json);
      await expect(verifier.verify(`${delivery.body} `, delivery.headers)).rejects.toMatchObject({
        code: 'INVALID_WEBHOOK',
        reason: 'INVALID_SIGNATURE',
      });
      expect(delivery.headers['webhook-id']).toBe(delivery.json.id);
      expect(delivery.json.id).toMatch(/^evt_[0-9a-f-]{36}$/);
      expect(Date.parse(delivery.json.timestamp)).not.toBeNaN();
      expect(delivery.json.metadata).toMatchObject({
        webhookId: hook.id,
        baseId,
        attempt: 1,
        source: 'public_api',
      });
    }
    const byType = Object.fromEntries(deliveries.map((d) => [d.json.type, d.json.data]));
    expect(byType['record.created']).toEqual({
      tableId: tasks.id,
      recordIds: created.records.map((r) => r.id),
      records: created.records,
    });
    expect(byType['table.created']).toEqual({ table });
    expect(byType['field.created']).toEqual({ tableId: tasks.id, field });
    await unsubscribe(hook.id);
  });

  it('delivers only the events of the webhook table when tableId is set', async () => {
    const hook = await subscribe({ events: ['record.created'], tableId: 'Notes' });
    await client.records.create(baseId, 'Tasks', { Title: 'not for this hook' });
    const note = await client.records.create(baseId, 'Notes', { Text: 'for this hook' });
    const [delivery] = await receiver.waitFor(1, 30_000, { webhookId: hook.id });
    await new Promise((done) => setTimeout(done, 1500));
    expect(new Set(receiver.of(hook.id).map((r) => r.json.id)).size).toBe(1);
    expect(delivery!.json.data.recordIds).toEqual([note.id]);
    await unsubscribe(hook.id);
  });

  it('delivers through a view only the records entering, inside or leaving it, each with view', async () => {
    await client.views.create(baseId, 'Tasks', {
      name: 'Big',
      filter: { field: 'Points', greater_than: 10 },
    });
    const hook = await subscribe({
      events: ['record.created', 'record.updated'],
      tableId: 'Tasks',
      viewId: 'Big',
    });
    const {
      records: [small, big],
    } = await client.records.createMany(baseId, 'Tasks', [
      { Title: 'small', Points: 1 },
      { Title: 'big', Points: 50 },
    ]);
    await client.records.update(baseId, 'Tasks', small!.id, { Points: 2 }); // stays outside: unheard
    await client.records.update(baseId, 'Tasks', big!.id, { Points: 5 }); // leaves
    await client.records.update(baseId, 'Tasks', small!.id, { Points: 20 }); // enters
    const deliveries = await receiver.waitFor(3, 30_000, { webhookId: hook.id });
    await new Promise((done) => setTimeout(done, 1500));
    const seen = receiver
      .of(hook.id)
      .sort((a, b) => a.json.timestamp.localeCompare(b.json.timestamp))
      .map((delivery) =>
        delivery.json.data.records.map((record: { fields: { Title: string }; view: object }) => [
          delivery.json.type,
          record.fields.Title,
          record.view,
        ]),
      );
    expect(deliveries).toHaveLength(3);
    expect(seen).toEqual([
      [['record.created', 'big', { before: false, after: true }]],
      [['record.updated', 'big', { before: true, after: false }]],
      [['record.updated', 'small', { before: false, after: true }]],
    ]);
    await unsubscribe(hook.id);
  });

  it('delivers nothing to an inactive webhook', async () => {
    const hook = await subscribe({ events: ['record.created'] });
    expect((await client.webhooks.update(baseId, hook.id, { active: false })).active).toBe(false);
    await client.records.create(baseId, 'Tasks', { Title: 'unseen' });
    await new Promise((done) => setTimeout(done, 2500));
    expect(receiver.of(hook.id)).toHaveLength(0);
    await unsubscribe(hook.id);
  });

  it('retries a receiver answering 500 twice, then 200, with the same event id', async () => {
    const hook = await subscribe({ events: ['record.updated'] });
    const record = await client.records.create(baseId, 'Tasks', { Title: 'retry me' });
    receiver.respondWith(500, 500, 200);
    await client.records.update(baseId, 'Tasks', record.id, { Points: 5 });
    const deliveries = await receiver.waitFor(3, 20_000, { webhookId: hook.id });
    expect(deliveries.map((d) => d.json.id)).toEqual(Array(3).fill(deliveries[0]!.json.id));
    expect(deliveries.map((d) => d.json.metadata.attempt)).toEqual([1, 2, 3]);
    await new Promise((done) => setTimeout(done, 1500));
    expect(receiver.of(hook.id)).toHaveLength(3);
    const log = await client.webhooks.deliveries(baseId, hook.id);
    expect(log.map((d) => d.statusCode)).toEqual([200, 500, 500]);
    await unsubscribe(hook.id);
  });

  it('disables a webhook whose receiver answers 410', async () => {
    const hook = await subscribe({ events: ['record.deleted'] });
    const record = await client.records.create(baseId, 'Tasks', { Title: 'gone' });
    receiver.respondWith(410);
    await client.records.delete(baseId, 'Tasks', record.id);
    await receiver.waitFor(1, 30_000, { webhookId: hook.id });
    const deadline = Date.now() + 10_000;
    let active = true;
    while (active && Date.now() < deadline) {
      active = (await client.webhooks.get(baseId, hook.id)).active;
      if (active) await new Promise((done) => setTimeout(done, 100));
    }
    expect(active).toBe(false);
    await new Promise((done) => setTimeout(done, 2500));
    expect(receiver.of(hook.id)).toHaveLength(1);
    await unsubscribe(hook.id);
  });
});
