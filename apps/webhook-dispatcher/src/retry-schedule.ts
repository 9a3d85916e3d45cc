/**
 * Durations, the retry schedule, and when to try a failed delivery again.
 *
 * Policy for `Retry-After` (documented in the README): the wait before the next attempt is the
 * scheduled delay with ±10% jitter, or the receiver's `Retry-After` when that is longer, and never
 * more than MAX_RETRY_DELAY_MS (24 h). A receiver can ask us to wait longer, never to come back
 * sooner than the schedule, and cannot park a delivery for longer than a day per step.
 */

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export const MAX_RETRY_DELAY_MS = 24 * UNIT_MS.h;
export const JITTER_RATIO = 0.1;

/** `250ms`, `5s`, `30m`, `2h`, `5d` (integers or decimals); a unit is required. */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/i.exec(text);
  if (!match) throw new Error(`"${text}" is not a duration such as 500ms, 5s, 30m, 2h or 5d`);
  const unit = match[2]!.toLowerCase() as keyof typeof UNIT_MS;
  const ms = Math.round(Number(match[1]) * UNIT_MS[unit]);
  if (!Number.isSafeInteger(ms)) throw new Error(`"${text}" is too long`);
  return ms;
}

/**
 * A comma list of durations, the wait before each retry: `5s,5m,30m` means four attempts. An
 * empty list (or `none`) means one attempt and no retry.
 */
export function parseRetrySchedule(text: string): number[] {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.toLowerCase() === 'none') return [];
  return trimmed.split(',').map((part) => {
    const ms = parseDuration(part);
    if (ms > MAX_RETRY_DELAY_MS) throw new Error(`"${part.trim()}" is longer than the 24h maximum`);
    return ms;
  });
}

export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms >= UNIT_MS[unit] && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * `Retry-After` as milliseconds from `now`: delay-seconds or an HTTP date. Undefined when absent
 * or unreadable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds * 1000) ? seconds * 1000 : MAX_RETRY_DELAY_MS;
  }
  // IMF-fixdate, or the obsolete forms Date.parse also reads; digits alone were handled above.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

export function withJitter(ms: number, random: () => number = Math.random): number {
  return Math.round(ms * (1 - JITTER_RATIO + 2 * JITTER_RATIO * random()));
}

/**
 * The wait before the next attempt after failed attempt number `attempt` (1-based), or null when
 * the schedule has no step left and the delivery has failed for good.
 */
export function nextRetryDelay(
  schedule: readonly number[],
  attempt: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number | null {
  const scheduled = schedule[attempt - 1];
  if (scheduled === undefined) return null;
  const jittered = withJitter(scheduled, random);
  const wanted = retryAfterMs === undefined ? jittered : Math.max(jittered, retryAfterMs);
  return Math.min(wanted, MAX_RETRY_DELAY_MS);
}
