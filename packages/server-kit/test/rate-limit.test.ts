import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRateLimiter } from '../src/rate-limit';

let redis: Redis;

beforeAll(() => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    keyPrefix: `test:${randomBytes(6).toString('hex')}:`,
  });
});
afterAll(() => redis.quit());

describe('rate limiter', () => {
  it('allows a burst, then refuses with the wait until the next token', async () => {
    const check = createRateLimiter(redis, { perSecond: 1, burst: 3 });
    const decisions = [];
    const began = performance.now();
    for (let i = 0; i < 4; i++) decisions.push(await check('burst'));
    // The next token comes a second after the first was taken: what is left of that second when
    // the fourth is refused, however long a loaded machine took between the two.
    const elapsedMs = performance.now() - began;
    expect(decisions.slice(0, 3).map((d) => d.allowed)).toEqual([true, true, true]);
    expect(decisions.slice(0, 3).map((d) => d.remaining)).toEqual([2, 1, 0]);
    expect(decisions[3]).toMatchObject({ allowed: false, remaining: 0 });
    // (Redis's clock counts whole milliseconds: 2 ms of rounding.)
    expect(decisions[3]!.retryAfterMs).toBeGreaterThanOrEqual(1000 - elapsedMs - 2);
    expect(decisions[3]!.retryAfterMs).toBeLessThanOrEqual(1000);
  });

  it('keeps separate buckets per subject', async () => {
    const check = createRateLimiter(redis, { perSecond: 1, burst: 1 });
    expect((await check('first')).allowed).toBe(true);
    expect((await check('first')).allowed).toBe(false);
    expect((await check('second')).allowed).toBe(true);
  });

  it('refills at the sustained rate', async () => {
    // A token a second: a loaded machine's two checks in a row are well within one refill.
    const check = createRateLimiter(redis, { perSecond: 1, burst: 1 });
    expect((await check('refill')).allowed).toBe(true);
    expect((await check('refill')).allowed).toBe(false);
    await new Promise((done) => setTimeout(done, 1100));
    expect((await check('refill')).allowed).toBe(true);
  });

  it('takes a cost in tokens, refuses one the bucket cannot cover, and leaves a forced charge as a debt', async () => {
    // A bandwidth budget: 1,000 bytes a second, 5,000 at once.
    const check = createRateLimiter(redis, { perSecond: 1000, burst: 5000 });
    expect(await check('bytes', { cost: 3000 })).toMatchObject({ allowed: true, remaining: 2000 });
    const refused = await check('bytes', { cost: 3000 });
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    // 1,000 bytes more are needed: a second's refill, less what refilled between the two checks
    // (a loaded machine has taken 130 ms between them).
    expect(refused.retryAfterMs).toBeGreaterThan(500);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(1000);
    // What was measured afterwards is taken all the same, past the bucket.
    expect(await check('bytes', { cost: 9000, force: true })).toMatchObject({ allowed: true, remaining: 0 });
    // Even nothing waits until the debt is paid: 7,000 bytes past empty, 7 s.
    const inDebt = await check('bytes', { cost: 0 });
    expect(inDebt.allowed).toBe(false);
    // Less what refilled since the charge, which a loaded machine stretches past 100 ms.
    expect(inDebt.retryAfterMs).toBeGreaterThan(6000);
    expect(inDebt.retryAfterMs).toBeLessThanOrEqual(7000);
  });

  it('takes a forced refund back to a full bucket at most, however long ago the charge was', async () => {
    // A chunked upload charged its route's largest body, settled to its small file once stored.
    const check = createRateLimiter(redis, { perSecond: 1000, burst: 5000 });
    expect((await check('refund', { cost: 5000 })).allowed).toBe(true);
    // The upload took longer than its 100 bytes take to refill: the refund leads past "now".
    await new Promise((done) => setTimeout(done, 200));
    expect(await check('refund', { cost: -4900, force: true })).toMatchObject({
      allowed: true,
      remaining: 5000,
    });
    expect(await check('refund', { cost: 5000 })).toMatchObject({ allowed: true, remaining: 0 });
  });
});
