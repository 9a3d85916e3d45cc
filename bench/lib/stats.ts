/** The figures every suite takes of its samples. */

/** Nearest-rank percentile of sorted values (Infinity, e.g. an undelivered latency, sorts last). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

/** Median of the values (Infinity sorts last; NaN, no value, is left out). */
export function median(values: readonly number[]): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length % 2 === 1) return sorted[middle]!;
  const [a, b] = [sorted[middle - 1]!, sorted[middle]!];
  // Two Infinities are Infinity, not their sum halved.
  return a === b ? a : (a + b) / 2;
}
