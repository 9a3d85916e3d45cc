import { createAuthThrottle } from '../src/auth-throttle';

describe('createAuthThrottle', () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = 1_000_000;
  });

  it('lets an address fail a burst at once, then makes it wait for the sustained rate', () => {
    const throttle = createAuthThrottle({ burst: 3, perMinute: 60 }, clock);
    for (let i = 0; i < 3; i += 1) {
      expect(throttle.retryAfterMs('a')).toBe(0);
      throttle.recordFailure('a');
    }
    expect(throttle.retryAfterMs('a')).toBe(1000);
    now += 1000;
    expect(throttle.retryAfterMs('a')).toBe(0);
  });

  it('keeps addresses apart', () => {
    const throttle = createAuthThrottle({ burst: 1, perMinute: 60 }, clock);
    throttle.recordFailure('a');
    expect(throttle.retryAfterMs('a')).toBeGreaterThan(0);
    expect(throttle.retryAfterMs('b')).toBe(0);
  });

  it('forgets the oldest addresses past its bound, so a flood of addresses cannot grow memory', () => {
    const throttle = createAuthThrottle({ burst: 1, perMinute: 1, maxAddresses: 100 }, clock);
    for (let i = 0; i < 10_000; i += 1) throttle.recordFailure(`10.0.${i >> 8}.${i & 255}`);
    const remembered = Array.from({ length: 10_000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).filter(
      (address) => throttle.retryAfterMs(address) > 0,
    );
    expect(remembered).toHaveLength(100);
    expect(remembered[99]).toBe('10.0.39.15');
  });
});
