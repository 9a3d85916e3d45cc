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

/** Until Redis has the spending (it is sent without waiting for the answer). */
const settled = () => redis.ping();

describe('time budgets', () => {
  it("spends a minute's budget at once, then refuses with the wait until it may start again", async () => {
    const budget = createTimeBudget(redis, { kind: 'database', secondsPerMinute: 6 });
    expect(await budget.check('a')).toBe(0);
    budget.spend('a', 5_000);
    await settled();
    // 5 of 6 s spent: more may start, and overdraw; the check says how much is spent.
    expect(await budget.check('a')).toBeCloseTo(5 / 6, 2);
    budget.spend('a', 3_000);
    await settled();
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

  it('lets work through, and says so, when Redis does not answer', async () => {
    const away = unreachableRedis();
    const warnings: string[] = [];
    const budget = createTimeBudget(away, {
      kind: 'database',
      secondsPerMinute: 1,
      logger: { warn: (_: unknown, message: string) => warnings.push(message) } as never,
    });
    budget.spend('a', 60_000);
    expect(await budget.check('a')).toBe(0);
    expect(warnings).toContain('Redis did not answer: database time budgets not kept');
    away.disconnect();
  });
});
