import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { type Stack, startStack } from './stack';

/**
 * Two installations may share one Redis (README, "Redis"): records-api keeps its rate-limit
 * budgets under the installation's QUEUE_PREFIX like its queues, so the root key (whose id is the
 * same in every installation) does not spend another installation's budget.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `e2e-keys-${randomBytes(6).toString('hex')}`;
let stack: Stack;
let redis: Redis;

beforeAll(async () => {
  // One request per 1,000 s: a budget's key then lives that long (the key expires when the bucket
  // is full again), whatever the machine's load between the request and the look.
  stack = await startStack({
    env: { QUEUE_PREFIX: prefix, RATE_LIMIT_PER_SECOND: '0.001', RATE_LIMIT_BURST: '50' },
  });
  redis = new Redis(REDIS_URL);
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  if (redis) {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.unlink(...keys);
    redis.disconnect();
  }
});

it("keeps the root key's rate-limit budget under the installation's prefix", async () => {
  expect((await stack.api('GET', '/bases')).status).toBe(200);
  const keys = await redis.keys(`${prefix}:ratelimit:*`);
  expect(keys).toEqual([`${prefix}:ratelimit:root`]);
});
