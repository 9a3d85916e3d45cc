import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { AppError } from './errors';
import type { Logger } from './logger';

/**
 * Per-key rate limit shared by every replica: a generic cell rate algorithm (a token bucket
 * expressed as one timestamp per key) evaluated atomically in Redis with Redis's own clock. A
 * request costs `cost` tokens (1, or bytes for a bandwidth budget); a forced charge is taken even
 * past the bucket, leaving a debt the next requests wait out (for what was measured afterwards); a
 * negative one gives tokens back, up to a full bucket.
 * Returns [allowed, remaining tokens or ms to wait, ms until the bucket is full again].
 */
const GCRA_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + interval * cost
if new_tat < now then new_tat = now end
local allow_at = new_tat - burst * interval
if now < allow_at and ARGV[4] ~= '1' then
  return {0, math.ceil(allow_at - now), math.ceil(tat - now)}
end
redis.call('SET', KEYS[1], tostring(new_tat), 'PX', math.ceil(new_tat - now) + 1)
return {1, math.max(0, math.floor((now - allow_at) / interval)), math.ceil(new_tat - now)}
`;

/**
 * 429 RATE_LIMITED with Retry-After: the wait in whole seconds, at least one, which `message`
 * words.
 */
export function rateLimited(waitMs: number, message: (retryAfterSeconds: string) => string): AppError {
  const retryAfter = String(Math.max(1, Math.ceil(waitMs / 1000)));
  return new AppError('RATE_LIMITED', message(retryAfter), { 'Retry-After': retryAfter });
}

export interface RateLimitOptions {
  /** Sustained requests per second. */
  perSecond: number;
  /** Requests allowed at once after a quiet spell. */
  burst: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  remaining: number;
  retryAfterMs: number;
  resetMs: number;
}

type RedisWithGcra = Redis & {
  rbGcra(
    key: string,
    interval: number,
    burst: number,
    cost: number,
    force: 0 | 1,
  ): Promise<[number, number, number]>;
};

export interface RateLimitCharge {
  /** Tokens taken (default 1). */
  cost?: number;
  /** Taken whatever the bucket holds (a charge for what was measured once done). */
  force?: boolean;
}

export function createRateLimiter(redis: Redis, options: RateLimitOptions) {
  if (!('rbGcra' in redis)) redis.defineCommand('rbGcra', { numberOfKeys: 1, lua: GCRA_SCRIPT });
  const interval = 1000 / options.perSecond;
  return async function check(subject: string, charge: RateLimitCharge = {}): Promise<RateLimitDecision> {
    const [allowed, value, resetMs] = await (redis as RedisWithGcra).rbGcra(
      `ratelimit:${subject}`,
      interval,
      options.burst,
      charge.cost ?? 1,
      charge.force ? 1 : 0,
    );
    return allowed === 1
      ? { allowed: true, remaining: value, retryAfterMs: 0, resetMs }
      : { allowed: false, remaining: 0, retryAfterMs: value, resetMs };
  };
}

/**
 * Answers 429 RATE_LIMITED with Retry-After past the limit, and RateLimit-* headers always. When
 * Redis cannot be asked, requests pass: the limiter protects the service, it must not take it down.
 */
export function rateLimitMiddleware(
  check: ReturnType<typeof createRateLimiter>,
  options: RateLimitOptions,
  subjectOf: (res: Parameters<RequestHandler>[1]) => string,
  logger: Logger,
): RequestHandler {
  const policy = `${options.burst};w=${Math.max(1, Math.round(options.burst / options.perSecond))}`;
  return async (_req, res, next) => {
    let decision: RateLimitDecision;
    try {
      decision = await check(subjectOf(res));
    } catch (error) {
      logger.warn({ err: error }, 'rate limiter unavailable; letting the request through');
      next();
      return;
    }
    res.setHeader('RateLimit-Policy', policy);
    res.setHeader('RateLimit-Limit', String(options.burst));
    res.setHeader('RateLimit-Remaining', String(decision.remaining));
    res.setHeader('RateLimit-Reset', String(Math.ceil(decision.resetMs / 1000)));
    if (!decision.allowed) {
      throw rateLimited(
        decision.retryAfterMs,
        (retryAfter) => `Rate limit exceeded; retry after ${retryAfter} s`,
      );
    }
    next();
  };
}
