/**
 * Throttles failed authentications per client address, in memory: the check costs a map lookup,
 * so a flood of bad keys is turned away before each one costs a database lookup. Per process on
 * purpose (no Redis round trip); the per-key limit in rate-limit.ts is the shared one.
 */
export interface AuthThrottleOptions {
  /** Failures an address may make at once after a quiet spell. */
  burst: number;
  /** Sustained failures per minute an address may make. */
  perMinute: number;
  /** Addresses remembered at most; the least recently failing are forgotten first. */
  maxAddresses?: number;
}

export interface AuthThrottle {
  /** 0 when the address may try; otherwise how long it must wait. */
  retryAfterMs(address: string): number;
  recordFailure(address: string): void;
}

const DEFAULT_MAX_ADDRESSES = 100_000;

/** A cell-rate limiter per address: one "theoretical arrival time" each, as rate-limit.ts does in Redis. */
export function createAuthThrottle(options: AuthThrottleOptions, now: () => number = Date.now): AuthThrottle {
  const interval = 60_000 / options.perMinute;
  const tolerance = options.burst * interval;
  const maxAddresses = options.maxAddresses ?? DEFAULT_MAX_ADDRESSES;
  // Map order is insertion order: re-inserting on each failure keeps the oldest first.
  const arrival = new Map<string, number>();

  return {
    retryAfterMs(address) {
      const tat = arrival.get(address);
      if (tat === undefined) return 0;
      const wait = tat - now() - tolerance + interval;
      return wait > 0 ? Math.ceil(wait) : 0;
    },
    recordFailure(address) {
      const current = now();
      const tat = Math.max(arrival.get(address) ?? current, current) + interval;
      arrival.delete(address);
      arrival.set(address, tat);
      for (const [oldest, oldestTat] of arrival) {
        if (arrival.size <= maxAddresses && oldestTat > current) break;
        arrival.delete(oldest);
      }
    },
  };
}
