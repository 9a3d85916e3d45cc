import { type ChildProcess, spawn } from 'node:child_process';
import type { RecordbaseClient } from '@recordbase/client';
import { clientOf } from './client';
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

/** A Redis of the test's own, so stopping it disturbs nothing else on the machine. */
async function startRedis(port: number): Promise<ChildProcess> {
  const redis = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const socket = await import('node:net').then(
        (net) =>
          new Promise<boolean>((resolve) => {
            const s = net.connect(port, '127.0.0.1', () => {
              s.end();
              resolve(true);
            });
            s.on('error', () => resolve(false));
          }),
      );
      if (socket) return redis;
    } catch {
      // retry
    }
    if (Date.now() > deadline) throw new Error('redis-server did not start');
    await new Promise((done) => setTimeout(done, 100));
  }
}

async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM') {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill(signal);
  await exited;
}

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
    let redis = await startRedis(port);
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
      await stopProcess(redis);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const created = await client.records.create(baseId, 'Items', { Name: `while down ${i}` });
        ids.push(created.id);
      }
      // Their publish failed; the outbox has them, and the dispatcher's sweep sends them even
      // before Redis is back.
      await distinctRecordIdsReceived(ids, 60_000);
      redis = await startRedis(port);
      const after = await client.records.create(baseId, 'Items', { Name: 'after' });
      await distinctRecordIdsReceived([...ids, after.id], 60_000);
    } finally {
      await stack.stop();
      await stopProcess(redis);
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
