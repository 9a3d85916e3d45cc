import type { RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import { AppError } from './errors';
import type { Logger } from './logger';

/**
 * Bounds on work in flight at once, shared by every replica: each bound is a sorted set in Redis
 * of the work holding it, scored by when its lease ends. A process renews the leases of its work
 * while it runs and removes them when it ends; the lease of a process that died ends on its own,
 * so a crash never keeps a key out for long. Admission checks every bound and takes them all, or
 * none, in one script with Redis's own clock. Without Redis, each process keeps the bounds alone.
 */

const ACQUIRE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) >= tonumber(ARGV[2 + i]) then return i end
end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now + lease, ARGV[2])
  redis.call('PEXPIRE', key, lease * 2)
end
return 0
`;

const RENEW_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, 'XX', now + lease, ARGV[2])
  redis.call('PEXPIRE', key, lease * 2)
end
return 0
`;

type RedisWithInFlight = Redis & {
  rbInFlightAcquire(...args: (string | number)[]): Promise<number>;
  rbInFlightRenew(...args: (string | number)[]): Promise<number>;
};

export interface InFlightBound {
  /** The Redis key of the bound, e.g. `inflight:key:<id>`. */
  key: string;
  /** Work admitted at once. */
  limit: number;
  /** What is bounded, for the refusal: "requests of this API key". */
  what: string;
}

export interface InFlightLease {
  release(): void;
}

export type InFlightAdmission =
  | { admitted: true; lease: InFlightLease }
  | { admitted: false; bound: InFlightBound };

export interface InFlightLimiter {
  admit(bounds: readonly InFlightBound[]): Promise<InFlightAdmission>;
  close(): void;
}

/** The contract's default bound on one API key's requests in flight at once. */
export const DEFAULT_REQUESTS_IN_FLIGHT_PER_KEY = 16;

/** One API key's requests in flight, one bound for every service and replica of an installation. */
export const requestsOfKey = (keyId: string | null, limit: number): InFlightBound => ({
  key: `inflight:key:${keyId ?? 'root'}`,
  limit,
  what: 'requests of this API key',
});

let nextMember = 0;

/** An admission whose lease gives its places back once, however often it is released. */
function leaseReleasing(giveBack: () => void): InFlightAdmission {
  let released = false;
  return {
    admitted: true,
    lease: {
      release() {
        if (released) return;
        released = true;
        giveBack();
      },
    },
  };
}

/**
 * When Redis cannot be asked (away, or too slow to answer in time, as under a CPU starved by an
 * overload), each process bounds the work it admits on its own, with the same limits: a bound
 * that lapsed exactly when the machine is overloaded would protect nothing.
 */
function localBounds() {
  const counts = new Map<string, number>();
  return {
    admit(bounds: readonly InFlightBound[]): InFlightAdmission {
      const full = bounds.find((bound) => (counts.get(bound.key) ?? 0) >= bound.limit);
      if (full) return { admitted: false, bound: full };
      for (const bound of bounds) counts.set(bound.key, (counts.get(bound.key) ?? 0) + 1);
      return leaseReleasing(() => {
        for (const bound of bounds) {
          const left = (counts.get(bound.key) ?? 1) - 1;
          if (left > 0) counts.set(bound.key, left);
          else counts.delete(bound.key);
        }
      });
    },
  };
}

export interface InFlightOptions {
  leaseMs?: number;
  /** Told (at most once a minute) when Redis could not be asked and the process's bounds stood in. */
  logger?: Logger;
}

const FALLBACK_WARNING_INTERVAL_MS = 60_000;

export function createInFlightLimiter(redis: Redis, options: InFlightOptions = {}): InFlightLimiter {
  const leaseMs = options.leaseMs ?? 30_000;
  if (!('rbInFlightAcquire' in redis)) {
    redis.defineCommand('rbInFlightAcquire', { lua: ACQUIRE_SCRIPT });
    redis.defineCommand('rbInFlightRenew', { lua: RENEW_SCRIPT });
  }
  const commands = redis as RedisWithInFlight;
  const prefix = `${process.pid}:${Date.now().toString(36)}:`;
  const held = new Map<string, readonly string[]>();
  const local = localBounds();
  let lastWarning = Number.NEGATIVE_INFINITY;
  const fellBack = (error: unknown) => {
    if (Date.now() - lastWarning < FALLBACK_WARNING_INTERVAL_MS) return;
    lastWarning = Date.now();
    options.logger?.warn(
      { err: error },
      'Redis did not answer: requests in flight are bounded by this process alone',
    );
  };
  const renewal = setInterval(
    () => {
      for (const [member, keys] of held) {
        commands.rbInFlightRenew(keys.length, ...keys, leaseMs, member).catch(() => {});
      }
    },
    Math.max(10, Math.floor(leaseMs / 3)),
  );
  renewal.unref();

  return {
    async admit(bounds) {
      nextMember += 1;
      const member = `${prefix}${nextMember}`;
      const keys = bounds.map((bound) => bound.key);
      let refused: number;
      try {
        refused = await commands.rbInFlightAcquire(
          keys.length,
          ...keys,
          leaseMs,
          member,
          ...bounds.map((bound) => bound.limit),
        );
      } catch (error) {
        fellBack(error);
        return local.admit(bounds);
      }
      if (refused > 0) return { admitted: false, bound: bounds[refused - 1] as InFlightBound };
      held.set(member, keys);
      return leaseReleasing(() => {
        held.delete(member);
        // One command per bound (ioredis sends those of a tick together); a place left behind
        // by a lost command ends with its lease.
        for (const key of keys) redis.zrem(key, member).catch(() => {});
      });
    },
    close() {
      clearInterval(renewal);
    },
  };
}

/** How long a refused caller is told to wait: in-flight work usually ends within a second. */
const RETRY_AFTER_S = 1;

export function inFlightRefusal(bound: InFlightBound): AppError {
  return new AppError(
    'RATE_LIMITED',
    `Too many ${bound.what} in flight at once (at most ${bound.limit}); retry after ${RETRY_AFTER_S} s`,
    { 'Retry-After': String(RETRY_AFTER_S) },
  );
}

/**
 * Admits a request while its bounds allow, holding them until its answer is sent or its client
 * gone; 429 RATE_LIMITED with Retry-After past them.
 */
export function inFlightMiddleware(
  limiter: InFlightLimiter,
  boundsOf: (res: Response) => readonly InFlightBound[],
): RequestHandler {
  return async (_req, res, next) => {
    const admission = await limiter.admit(boundsOf(res));
    if (!admission.admitted) throw inFlightRefusal(admission.bound);
    const { lease } = admission;
    res.locals.requestPlace = lease;
    res.once('close', () => lease.release());
    next();
  };
}

/**
 * Gives the request's place back before its answer ends, for an answer that stays open (a change
 * stream), bounded by its own limit instead.
 */
export function releaseRequestPlace(res: Response): void {
  (res.locals.requestPlace as InFlightLease | undefined)?.release();
}
