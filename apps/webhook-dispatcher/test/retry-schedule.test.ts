import { DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS } from '@recordbase/contracts/jobs';
import { loadConfig } from '../src/config';
import {
  MAX_RETRY_DELAY_MS,
  nextRetryDelay,
  parseDuration,
  parseRetryAfter,
  parseRetrySchedule,
  withJitter,
} from '../src/retry-schedule';

describe('durations', () => {
  it.each([
    ['250ms', 250],
    ['5s', 5000],
    ['5m', 300_000],
    ['2h', 7_200_000],
    ['5d', 432_000_000],
    ['1.5s', 1500],
    [' 10H ', 36_000_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '5', 's', '5 sec', '-1s', '1w'])('refuses %j', (text) => {
    expect(() => parseDuration(text)).toThrow(/not a duration/);
  });
});

describe('retry schedule', () => {
  it('reads a comma list', () => {
    expect(parseRetrySchedule('5s,5m,30m,2h,5h,10h,10h')).toEqual([...DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS]);
    expect(parseRetrySchedule('1s, 1s')).toEqual([1000, 1000]);
    expect(parseRetrySchedule('none')).toEqual([]);
  });

  it('refuses a bad step or one longer than a day', () => {
    expect(() => parseRetrySchedule('5s,,5m')).toThrow();
    expect(() => parseRetrySchedule('5s,2d')).toThrow(/24h/);
  });

  it('defaults to the production schedule and 5 days in the configuration', () => {
    const config = loadConfig({ WEBHOOK_SECRET_KEY: Buffer.alloc(32, 1).toString('base64') });
    expect(config.WEBHOOK_RETRY_SCHEDULE).toEqual([...DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS]);
    expect(config.WEBHOOK_DISABLE_AFTER).toBe(5 * 86_400_000);
  });

  it('names the variable of a bad schedule', () => {
    expect(() =>
      loadConfig({
        WEBHOOK_SECRET_KEY: Buffer.alloc(32, 1).toString('base64'),
        WEBHOOK_RETRY_SCHEDULE: '5x',
      }),
    ).toThrow(/WEBHOOK_RETRY_SCHEDULE: "5x" is not a duration/);
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2026-11-22T10:00:00.000Z');

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('0', now)).toBe(0);
  });

  it('reads an HTTP date, a past one as 0', () => {
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:01:30 GMT', now)).toBe(90_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });

  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
  });
});

describe('next retry delay', () => {
  const schedule = [5000, 300_000];
  const middle = () => 0.5;

  it('follows the schedule step of the failed attempt, and ends after the last step', () => {
    expect(nextRetryDelay(schedule, 1, undefined, middle)).toBe(5000);
    expect(nextRetryDelay(schedule, 2, undefined, middle)).toBe(300_000);
    expect(nextRetryDelay(schedule, 3, undefined, middle)).toBeNull();
    expect(nextRetryDelay([], 1)).toBeNull();
  });

  it('adds at most ±10% jitter', () => {
    expect(withJitter(10_000, () => 0)).toBe(9000);
    expect(withJitter(10_000, () => 0.999999)).toBe(11_000);
    for (let i = 0; i < 100; i++) {
      const delay = nextRetryDelay(schedule, 1)!;
      expect(delay).toBeGreaterThanOrEqual(4500);
      expect(delay).toBeLessThanOrEqual(5500);
    }
  });

  it('waits for a longer Retry-After, never less than the schedule, never more than 24 h', () => {
    expect(nextRetryDelay(schedule, 1, 60_000, middle)).toBe(60_000);
    expect(nextRetryDelay(schedule, 1, 1000, middle)).toBe(5000);
    expect(nextRetryDelay(schedule, 1, 0, middle)).toBe(5000);
    expect(nextRetryDelay(schedule, 1, 7 * 86_400_000, middle)).toBe(MAX_RETRY_DELAY_MS);
  });

  it('does not retry past the schedule even when Retry-After asks', () => {
    expect(nextRetryDelay(schedule, 3, 1000, middle)).toBeNull();
  });
});
