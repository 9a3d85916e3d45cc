import type { Redis } from 'ioredis';
import type { Logger } from './logger';
import { rateLimited } from './rate-limit';

/**
 * Each API key's budget of a kind of time, shared by every replica and service: database time
 * (what its requests hold connections for, spent as they release them) and import time (what the
 * import worker spends on its files). A key may spend the whole minute's budget at once, then as
 * fast as it refills; past it, its next request is 429 until it has. One tenant's slow work then
 * takes at most that share of the machine, however it spreads it over time, connections, files
 * or replicas. A generic cell rate algorithm weighted by the time spent: one timestamp per key
 * (when the budget is whole again), kept with Redis's own clock.
 */

/** How long until the key's budget is whole again, in ms of Redis's clock (0 when it is). */
const CHECK_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local full_at = tonumber(redis.call('GET', KEYS[1]) or now)
if full_at < now then return 0 end
return math.ceil(full_at - now)
`;

const SPEND_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local full_at = tonumber(redis.call('GET', KEYS[1]) or now)
if full_at < now then full_at = now end
full_at = full_at + tonumber(ARGV[1])
redis.call('SET', KEYS[1], tostring(full_at), 'PX', math.ceil(full_at - now) + 1000)
return math.ceil(full_at - now)
`;

type RedisWithDbTime = Redis & {
  rbDbTimeCheck(key: string): Promise<number>;
  rbDbTimeSpend(key: string, advanceMs: number): Promise<number>;
};

export interface TimeBudget {
  /**
   * Refuses (429 RATE_LIMITED, Retry-After) a key whose budget is spent; otherwise resolves to the
   * part of it spent, 0 (none, or Redis did not answer) to 1.
   */
  check(keyId: string): Promise<number>;
  /**
   * Takes `ms` of the budget's time from the key's budget; needs no waiting for (it never
   * rejects), but resolves once Redis has it.
   */
  spend(keyId: string, ms: number): Promise<void>;
}

/** The kinds of time budgeted: the Redis key of each, and how the refusal names it. */
const KINDS = {
  database: { prefix: 'dbtime', words: 'database time' },
  import: { prefix: 'importtime', words: 'import time' },
} as const;

/** The budget's window: a key may spend `secondsPerMinute` at once, as much again each minute after. */
const WINDOW_MS = 60_000;

/**
 * A key's budget as last read (by a check, or in the answer to this process's own spending) stands
 * in for asking Redis while it is this recent and shows less than TRUSTED_BELOW of the budget
 * spent: a request then costs no round trip before it starts. What other processes spent meanwhile
 * goes unseen for that long; a key holds few connections at once (DB_CONNECTIONS_PER_KEY), so in
 * 250 ms they spend a few hundredths of a budget at most, far from the half where a key's share of
 * connections shrinks and from the whole where it is refused.
 */
const KNOWN_FOR_MS = 250;
const TRUSTED_BELOW = 0.25;
/** Keys read at once past which readings too old to use are dropped. */
const MAX_KNOWN_KEYS = 10_000;

export function createTimeBudget(
  redis: Redis,
  options: { kind: keyof typeof KINDS; secondsPerMinute: number; logger?: Logger },
): TimeBudget {
  const kind = KINDS[options.kind];
  if (!('rbDbTimeCheck' in redis)) {
    redis.defineCommand('rbDbTimeCheck', { numberOfKeys: 1, lua: CHECK_SCRIPT });
    redis.defineCommand('rbDbTimeSpend', { numberOfKeys: 1, lua: SPEND_SCRIPT });
  }
  const commands = redis as RedisWithDbTime;
  // A millisecond of database time pushes the moment the budget is whole by this much.
  const wallPerDbMs = WINDOW_MS / (options.secondsPerMinute * 1000);
  const keyOf = (keyId: string) => `${kind.prefix}:${keyId}`;
  let lastWarning = Number.NEGATIVE_INFINITY;
  const unavailable = (error: unknown) => {
    if (Date.now() - lastWarning < WINDOW_MS) return;
    lastWarning = Date.now();
    options.logger?.warn({ err: error }, `Redis did not answer: ${kind.words} budgets not kept`);
  };
  const known = new Map<string, { untilWholeMs: number; at: number }>();
  const remember = (keyId: string, untilWholeMs: number) => {
    const at = performance.now();
    if (known.size >= MAX_KNOWN_KEYS) {
      for (const [id, reading] of known) if (at - reading.at > KNOWN_FOR_MS) known.delete(id);
    }
    known.set(keyId, { untilWholeMs, at });
  };
  return {
    async check(keyId) {
      const last = known.get(keyId);
      if (last) {
        const age = performance.now() - last.at;
        const untilWhole = Math.max(0, last.untilWholeMs - age);
        if (age <= KNOWN_FOR_MS && untilWhole < TRUSTED_BELOW * WINDOW_MS) return untilWhole / WINDOW_MS;
      }
      let untilWholeMs: number;
      try {
        untilWholeMs = await commands.rbDbTimeCheck(keyOf(keyId));
        remember(keyId, untilWholeMs);
      } catch (error) {
        // Coarser bounds still hold (a process's share of connections, a key's open imports).
        unavailable(error);
        return 0;
      }
      // Whole budget spent once the moment it is whole again is a window away.
      const waitMs = untilWholeMs - WINDOW_MS;
      if (waitMs > 0) {
        throw rateLimited(
          waitMs,
          (retryAfter) =>
            `This API key has used its ${kind.words} (${options.secondsPerMinute} s a minute); retry after ${retryAfter} s`,
        );
      }
      return untilWholeMs / WINDOW_MS;
    },
    async spend(keyId, ms) {
      if (ms <= 0) return;
      await commands
        .rbDbTimeSpend(keyOf(keyId), Math.ceil(ms * wallPerDbMs))
        .then((untilWholeMs) => remember(keyId, untilWholeMs), unavailable);
    },
  };
}
