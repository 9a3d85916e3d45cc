import { type ByteRange, InvalidStorageKeyError } from './object-storage';

// One segment: starts with a letter or digit, so `.`, `..`, hidden names and the drivers' own
// temporary and probe names (which start with a dot) can never be keys.
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const MAX_SEGMENTS = 8;
const MAX_LENGTH = 512;

function keyProblem(key: unknown): string | null {
  if (typeof key !== 'string') return 'not a string';
  if (key.length === 0) return 'empty';
  if (key.length > MAX_LENGTH) return `longer than ${MAX_LENGTH} characters`;
  const segments = key.split('/');
  if (segments.length > MAX_SEGMENTS) return `more than ${MAX_SEGMENTS} segments`;
  // The message names the rule, not the key: keys may come from a request and end up in logs.
  if (!segments.every((segment) => SEGMENT.test(segment)))
    return 'each /-separated segment must be 1-128 of A-Z a-z 0-9 . _ - and start with a letter or digit';
  return null;
}

/** The one key check of both drivers; throws InvalidStorageKeyError. */
export function assertStorageKey(key: string): void {
  const problem = keyProblem(key);
  if (problem) throw new InvalidStorageKeyError(problem);
}

export const isStorageKey = (key: string): boolean => keyProblem(key) === null;

/** A list prefix: empty, or a key, or a key followed by `/` (so `a`, `a/` and `a/fi` are fine). */
export function assertStoragePrefix(prefix: string): void {
  if (prefix === '') return;
  assertStorageKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
}

/** Refuses a range that no object could satisfy (negative, reversed, not whole numbers). */
export function assertByteRange(range: ByteRange): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start)
    throw new RangeError('byte range must be whole numbers with 0 <= start <= end');
}
