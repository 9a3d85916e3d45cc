import type { ChildProcess } from 'node:child_process';
import { clientOf } from './client';
import { startPrivateRedis, stopPrivateRedis } from './private-redis';
import { type Receiver, startReceiver } from './receiver';
import { freePort, type Stack, startStack } from './stack';
import { expectNoWriteLostOrHalfWritten, newWriteTable, startWriteLoad } from './write-load';

/**
 * Redis restarted (killed, then started empty) under a load of concurrent bulk writes, on a
 * redis-server of the test's own: writes keep succeeding (Redis carries no write: the outbox in
 * PostgreSQL does), and every acknowledged record's event reaches the receiver afterwards (at
 * least once). Quick; runs in `npm test`.
 */

const WRITERS = 4;

let receiver: Receiver;
let redis: ChildProcess | undefined;
let stack: Stack | undefined;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await stack?.stop();
  if (redis) await stopPrivateRedis(redis);
  await receiver.close();
});

it('Redis restarted under write load: every write succeeds, every event is delivered afterwards', async () => {
  const port = await freePort();
  redis = await startPrivateRedis(port);
  stack = await startStack({
    redisUrl: `redis://127.0.0.1:${port}`,
    env: { DISPATCH_SWEEP_INTERVAL_MS: '1000', DISPATCH_SWEEP_GRACE_MS: '2000' },
  });
  const baseId = await newWriteTable(stack);
  await clientOf(stack).webhooks.create(baseId, { url: receiver.url, events: ['record.created'] });
  const load = startWriteLoad(stack, baseId, WRITERS);
  try {
    await load.waitForSuccesses(10, 30_000);
    // A crash: whatever Redis held (queued jobs, rate-limit counters) is gone.
    await stopPrivateRedis(redis, 'SIGKILL');
    await load.waitForSuccesses(10, 30_000);
    redis = await startPrivateRedis(port);
    await load.waitForSuccesses(10, 30_000);
  } finally {
    await load.stop();
  }
  expect(load.outcomes.filter((o) => o.status < 200 || o.status >= 300)).toEqual([]);
  await expectNoWriteLostOrHalfWritten(stack, baseId, load.outcomes);

  const acknowledged = load.outcomes.flatMap((o) => o.ids);
  const deadline = Date.now() + 90_000;
  for (;;) {
    const seen = new Set(receiver.received.flatMap((d) => d.json.data.recordIds as string[]));
    const missing = acknowledged.filter((id) => !seen.has(id));
    if (missing.length === 0) break;
    if (Date.now() > deadline) throw new Error(`${missing.length} records' events were never delivered`);
    await new Promise((done) => setTimeout(done, 200));
  }
});
