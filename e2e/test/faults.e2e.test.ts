import type { RecordbaseClient } from '@recordbase/client';
import { clientOf } from './client';
import { startPrivateRedis, stopPrivateRedis } from './private-redis';
import { type Receiver, startReceiver } from './receiver';
import { freePort, type Stack, startStack } from './stack';

/**
 * Faults while events are written: Redis down, the dispatcher killed. At-least-once: every
 * event arrives in the end (duplicates allowed, loss not).
 */

let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());
beforeEach(() => {
  receiver.received.length = 0;
  receiver.delayBy(0);
});

/** Each request sent once: a write the faults disturb must succeed the first time, not on a retry. */
const onceClient = (stack: Stack) => clientOf(stack, { retry: { maxAttempts: 1 } });

async function newBaseWithWebhook(client: RecordbaseClient) {
  const base = await client.bases.create({
    name: 'F',
    tables: [{ name: 'Items', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  await client.webhooks.create(base.id, { url: receiver.url, events: ['record.created'] });
  return base.id;
}

async function distinctRecordIdsReceived(expected: string[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = new Set(receiver.received.flatMap((d) => d.json.data.recordIds as string[]));
    if (expected.every((id) => seen.has(id))) return seen;
    if (Date.now() > deadline) {
      throw new Error(`missing deliveries for ${expected.filter((id) => !seen.has(id)).join(', ')}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}

describe('faults', () => {
  it('delivers every event written while Redis is down, and those written after it is back', async () => {
    const port = await freePort();
    let redis = await startPrivateRedis(port);
    const stack = await startStack({
      redisUrl: `redis://127.0.0.1:${port}`,
      env: {
        DISPATCH_SWEEP_INTERVAL_MS: '1000',
        DISPATCH_SWEEP_GRACE_MS: '2000',
      },
    });
    try {
      const client = onceClient(stack);
      const baseId = await newBaseWithWebhook(client);
      await stopPrivateRedis(redis);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const created = await client.records.create(baseId, 'Items', { Name: `while down ${i}` });
        ids.push(created.id);
      }
      // Their publish failed; the outbox has them, and the dispatcher's sweep sends them even
      // before Redis is back.
      await distinctRecordIdsReceived(ids, 60_000);
      redis = await startPrivateRedis(port);
      const after = await client.records.create(baseId, 'Items', { Name: 'after' });
      await distinctRecordIdsReceived([...ids, after.id], 60_000);
    } finally {
      await stack.stop();
      await stopPrivateRedis(redis);
    }
  });

  it('delivers every event when the dispatcher is killed (SIGKILL) mid-delivery and restarted', async () => {
    const stack = await startStack({
      env: {
        DISPATCH_SWEEP_INTERVAL_MS: '1000',
        DISPATCH_SWEEP_GRACE_MS: '2000',
      },
    });
    try {
      const client = onceClient(stack);
      const baseId = await newBaseWithWebhook(client);
      receiver.delayBy(3000);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const created = await client.records.create(baseId, 'Items', { Name: `in flight ${i}` });
        ids.push(created.id);
      }
      await new Promise((done) => setTimeout(done, 1000));
      await stack.kill('webhook-dispatcher', 'SIGKILL');
      receiver.delayBy(0);
      await stack.start('webhook-dispatcher');
      await distinctRecordIdsReceived(ids, 90_000);
    } finally {
      await stack.stop();
    }
  });
});
