import { Webhook } from 'standardwebhooks';
import { type Receiver, startReceiver } from './receiver';
import { type Stack, startStack } from './stack';

let stack: Stack;
let receiver: Receiver;
let baseId: string;
let tasks: { id: string; fields: { id: string; name: string }[] };

beforeAll(async () => {
  stack = await startStack({ env: { WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s' } });
  receiver = await startReceiver();
  const base = await stack.api('POST', '/bases', {
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
  expect(base.status).toBe(201);
  baseId = base.body.id;
  tasks = base.body.tables[0];
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
  for (const id of subscribed.splice(0)) await stack.api('DELETE', `/bases/${baseId}/webhooks/${id}`);
});

async function subscribe(body: object): Promise<{ id: number; secret: string }> {
  const response = await stack.api('POST', `/bases/${baseId}/webhooks`, { url: receiver.url, ...body });
  expect(response.status).toBe(201);
  subscribed.push(response.body.id);
  return response.body;
}

async function unsubscribe(id: number) {
  expect((await stack.api('DELETE', `/bases/${baseId}/webhooks/${id}`)).status).toBe(200);
  subscribed.splice(subscribed.indexOf(id), 1);
}

describe('webhooks, end to end', () => {
  it('delivers record, table and field events with the contract envelope and a verifiable signature', async () => {
    const hook = await subscribe({ events: ['record.created', 'table.created', 'field.created'] });
    const created = await stack.api('POST', `/bases/${baseId}/tables/Tasks/records/bulk`, {
      records: [
        { Title: 'one', Points: 1 },
        { Title: 'two', Points: 2 },
      ],
    });
    expect(created.status).toBe(201);
    const table = await stack.api('POST', `/bases/${baseId}/tables`, {
      name: 'Later',
      fields: [{ name: 'N', type: 'number' }],
    });
    const field = await stack.api('POST', `/bases/${baseId}/tables/Tasks/fields`, {
      name: 'Done',
      type: 'checkbox',
    });
    // At least once: a repeat of an event may arrive, and counts once.
    const deliveries = await receiver.waitFor(3, 30_000, { webhookId: hook.id, distinct: true });
    const verifier = new Webhook(hook.secret);
    for (const delivery of deliveries) {
      expect(delivery.headers['content-type']).toMatch(/^application\/json/);
      const verified = verifier.verify(delivery.body, {
        'webhook-id': String(delivery.headers['webhook-id']),
        'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
        'webhook-signature': String(delivery.headers['webhook-signature']),
      });
      expect(verified).toEqual(delivery.json);
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
      recordIds: created.body.records.map((r: { id: string }) => r.id),
      records: created.body.records,
    });
    expect(byType['table.created']).toEqual({ table: table.body });
    expect(byType['field.created']).toEqual({ tableId: tasks.id, field: field.body });
    await unsubscribe(hook.id);
  });

  it('delivers only the events of the webhook table when tableId is set', async () => {
    const hook = await subscribe({ events: ['record.created'], tableId: 'Notes' });
    await stack.api('POST', `/bases/${baseId}/tables/Tasks/records`, {
      record: { Title: 'not for this hook' },
    });
    const note = await stack.api('POST', `/bases/${baseId}/tables/Notes/records`, {
      record: { Text: 'for this hook' },
    });
    const [delivery] = await receiver.waitFor(1, 30_000, { webhookId: hook.id });
    await new Promise((done) => setTimeout(done, 1500));
    expect(new Set(receiver.of(hook.id).map((r) => r.json.id)).size).toBe(1);
    expect(delivery!.json.data.recordIds).toEqual([note.body.id]);
    await unsubscribe(hook.id);
  });

  it('delivers nothing to an inactive webhook', async () => {
    const hook = await subscribe({ events: ['record.created'] });
    expect((await stack.api('PATCH', `/bases/${baseId}/webhooks/${hook.id}`, { active: false })).status).toBe(
      200,
    );
    await stack.api('POST', `/bases/${baseId}/tables/Tasks/records`, { record: { Title: 'unseen' } });
    await new Promise((done) => setTimeout(done, 2500));
    expect(receiver.of(hook.id)).toHaveLength(0);
    await unsubscribe(hook.id);
  });

  it('retries a receiver answering 500 twice, then 200, with the same event id', async () => {
    const hook = await subscribe({ events: ['record.updated'] });
    const record = await stack.api('POST', `/bases/${baseId}/tables/Tasks/records`, {
      record: { Title: 'retry me' },
    });
    receiver.respondWith(500, 500, 200);
    await stack.api('PATCH', `/bases/${baseId}/tables/Tasks/records/${record.body.id}`, {
      record: { Points: 5 },
    });
    const deliveries = await receiver.waitFor(3, 20_000, { webhookId: hook.id });
    expect(deliveries.map((d) => d.json.id)).toEqual(Array(3).fill(deliveries[0]!.json.id));
    expect(deliveries.map((d) => d.json.metadata.attempt)).toEqual([1, 2, 3]);
    await new Promise((done) => setTimeout(done, 1500));
    expect(receiver.of(hook.id)).toHaveLength(3);
    const log = await stack.api('GET', `/bases/${baseId}/webhooks/${hook.id}/deliveries`);
    expect(log.body.deliveries.map((d: { statusCode: number }) => d.statusCode)).toEqual([200, 500, 500]);
    await unsubscribe(hook.id);
  });

  it('disables a webhook whose receiver answers 410', async () => {
    const hook = await subscribe({ events: ['record.deleted'] });
    const record = await stack.api('POST', `/bases/${baseId}/tables/Tasks/records`, {
      record: { Title: 'gone' },
    });
    receiver.respondWith(410);
    await stack.api('DELETE', `/bases/${baseId}/tables/Tasks/records/${record.body.id}`);
    await receiver.waitFor(1, 30_000, { webhookId: hook.id });
    const deadline = Date.now() + 10_000;
    let active = true;
    while (active && Date.now() < deadline) {
      active = (await stack.api('GET', `/bases/${baseId}/webhooks/${hook.id}`)).body.active;
      if (active) await new Promise((done) => setTimeout(done, 100));
    }
    expect(active).toBe(false);
    await new Promise((done) => setTimeout(done, 2500));
    expect(receiver.of(hook.id)).toHaveLength(1);
    await unsubscribe(hook.id);
  });
});
