import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createInFlightLimiter, type InFlightBound, type InFlightLease } from '../src/in-flight';
import { unreachableRedis } from './unreachable-redis';

let redis: Redis;

beforeAll(() => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    keyPrefix: `test:${randomBytes(6).toString('hex')}:`,
  });
});
afterAll(() => redis.quit());

const bound = (key: string, limit: number): InFlightBound => ({ key, limit, what: `work of ${key}` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function lease(limiter: ReturnType<typeof createInFlightLimiter>, bounds: InFlightBound[]) {
  const admission = await limiter.admit(bounds);
  if (!admission.admitted) throw new Error(`refused by ${admission.bound.key}`);
  return admission.lease;
}

describe('in-flight limiter', () => {
  it('admits up to the bound, refuses past it naming the bound, and admits again on release', async () => {
    const limiter = createInFlightLimiter(redis);
    const held: InFlightLease[] = [
      await lease(limiter, [bound('a', 2)]),
      await lease(limiter, [bound('a', 2)]),
    ];
    expect(await limiter.admit([bound('a', 2)])).toEqual({ admitted: false, bound: bound('a', 2) });
    held[0]?.release();
    held[0]?.release();
    const again = await limiter.admit([bound('a', 2)]);
    expect(again.admitted).toBe(true);
    expect(await limiter.admit([bound('a', 2)])).toMatchObject({ admitted: false });
    limiter.close();
  });

  it('takes every bound or none', async () => {
    const limiter = createInFlightLimiter(redis);
    await lease(limiter, [bound('full', 1)]);
    expect(await limiter.admit([bound('open', 1), bound('full', 1)])).toEqual({
      admitted: false,
      bound: bound('full', 1),
    });
    // The first bound was not taken by the refused admission.
    expect((await limiter.admit([bound('open', 1)])).admitted).toBe(true);
    limiter.close();
  });

  it('is shared by every process of the installation', async () => {
    const one = createInFlightLimiter(redis);
    const other = createInFlightLimiter(redis);
    await lease(one, [bound('shared', 1)]);
    expect((await other.admit([bound('shared', 1)])).admitted).toBe(false);
    one.close();
    other.close();
  });

  it('keeps the place of long work by renewing its lease, and frees that of a process gone', async () => {
    const leaseMs = 300;
    const alive = createInFlightLimiter(redis, { leaseMs });
    const dead = createInFlightLimiter(redis, { leaseMs });
    const other = createInFlightLimiter(redis, { leaseMs });
    await lease(alive, [bound('long', 1)]);
    await lease(dead, [bound('crash', 1)]);
    // The process holding `crash` dies: nothing renews or releases its place.
    dead.close();
    await sleep(leaseMs * 3);
    expect((await other.admit([bound('long', 1)])).admitted).toBe(false);
    expect((await other.admit([bound('crash', 1)])).admitted).toBe(true);
    alive.close();
    other.close();
  });
});

describe('without Redis', () => {
  it('keeps the bounds in each process, and says so, rather than letting everything through', async () => {
    const away = unreachableRedis();
    const warnings: string[] = [];
    const logger = { warn: (_: unknown, message: string) => warnings.push(message) };
    const limiter = createInFlightLimiter(away, { logger: logger as never });
    try {
      const first = await limiter.admit([bound('x', 2)]);
      const second = await limiter.admit([bound('x', 2), bound('y', 5)]);
      expect([first.admitted, second.admitted]).toEqual([true, true]);
      expect(await limiter.admit([bound('x', 2)])).toEqual({ admitted: false, bound: bound('x', 2) });
      if (first.admitted) first.lease.release();
      expect((await limiter.admit([bound('x', 2)])).admitted).toBe(true);
      expect(warnings).toEqual([
        'Redis did not answer: requests in flight are bounded by this process alone',
      ]);
    } finally {
      limiter.close();
      away.disconnect();
    }
  });
});
