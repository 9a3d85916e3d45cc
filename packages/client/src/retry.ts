/**
 * When to send a request again. 429 and 503 are retried for every request: the service answers
 * them before anything is written, or after rolling it back. A failed connection is retried only
 * for requests that change nothing (reads), since a lost answer to a write may hide a done write.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included; 1 turns retries off. */
  maxAttempts: number;
  /** The longest wait before one attempt. A Retry-After asking more fails at once instead. */
  maxDelayMs: number;
  /** Wait before the second attempt when the service names none; doubled for each next one. */
  baseDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 4, maxDelayMs: 30_000, baseDelayMs: 500 };

export const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * `Retry-After` as milliseconds from `now`: delay-seconds or an HTTP date (RFC 9110 10.2.3).
 * Undefined when absent or unreadable; a date in the past is 0.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Exponential backoff with up to 20% jitter, so that many clients refused together spread out. */
export function backoffMs(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const exponential = policy.baseDelayMs * 2 ** (attempt - 1);
  return Math.min(policy.maxDelayMs, Math.round(exponential * (1 + 0.2 * random())));
}

/**
 * The wait before attempt `attempt + 1` after a retryable status, or undefined when there is
 * none: no attempts left, or a Retry-After past the cap (waiting less would only be refused again).
 */
export function delayAfterStatus(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs: number | undefined,
): number | undefined {
  if (attempt >= policy.maxAttempts) return undefined;
  if (retryAfterMs === undefined) return backoffMs(policy, attempt);
  return retryAfterMs <= policy.maxDelayMs ? retryAfterMs : undefined;
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
