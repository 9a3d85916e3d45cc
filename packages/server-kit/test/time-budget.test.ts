import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createTimeBudget } from '../src/time-budget';
import { unreachableRedis } from './unreachable-redis';

let redis: Redis;

beforeAll(() => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    keyPrefix: `test:${randomBytes(6).toString('hex')}:`,
  });
});
afterAll(() => redis.quit());

describe('time budgets', () => {
  it("spends a minute's budget at once, then refuses with the wait until it may start again", async () => {
    const budget = createTimeBudget(redis, { kind: 'database', secondsPerMinute: 6 });
    expect(await budget.check('a')).toBe(0);
    await budget.spend('a', 5_000);
    // 5 of 6 s spent: more may start, and overdraw; the check says how much is spent.
    expect(await budget.check('a')).toBeCloseTo(5 / 6, 2);
    await budget.spend('a', 3_000);
    // 8 s spent of 6, refilling at 6 s a minute: 20 s until the debt is paid.
    const refusal = await budget.check('a').then(
      () => null,
      (error: { code: string; message: string; headers: Record<string, string> }) => error,
    );
    expect(refusal?.code).toBe('RATE_LIMITED');
    expect(refusal?.message).toMatch(
      /^This API key has used its database time \(6 s a minute\); retry after (19|20) s$/,
    );
    expect(['19', '20']).toContain(refusal?.headers['Retry-After']);
    // Every key has a budget of its own, and every kind of time.
    await budget.check('b');
    await createTimeBudget(redis, { kind: 'import', secondsPerMinute: 6 }).check('a');
  });

  it('answers from its last reading while it is recent and low, and from Redis otherwise', async () => {
    // Two processes' budgets on one Redis: 60 s a minute, so 6 s is a tenth of the budget.
    const here = createTimeBudget(redis, { kind: 'database', secondsPerMinute: 60 });
    const elsewhere = createTimeBudget(redis, { kind: 'database', secondsPerMinute: 60 });
    expect(await here.check('k')).toBe(0);
    // This process's own spending is known from Redis's answer to it, at once.
    await here.spend('k', 6_000);
    expect(await here.check('k')).toBeCloseTo(0.1, 2);
    // Another process's is unseen while the reading is recent and shows little spent…
    await elsewhere.spend('k', 24_000);
    expect(await here.check('k')).toBeCloseTo(0.1, 2);
    // …and seen once it is not recent any more.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await here.check('k')).toBeCloseTo(0.5, 1);
    // Past a quarter spent, every check asks Redis.
    await elsewhere.spend('k', 6_000);
    expect(await here.check('k')).toBeCloseTo(0.6, 1);
  });

  it('lets work through, and says so, when Redis does not answer', async () => {
    const away = unreachableRedis();
    const warnings: string[] = [];
    const budget = createTimeBudget(away, {
      kind: 'database',
      secondsPerMinute: 1,
      logger: { warn: (_: unknown, message: string) => warnings.push(message) } as never,
    });
    await budget.spend('a', 60_000);
    expect(await budget.check('a')).toBe(0);
    expect(warnings).toContain('Redis did not answer: database time budgets not kept');
    away.disconnect();
  });
});
