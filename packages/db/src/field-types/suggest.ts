/**
 * "Did you mean" for a name that names nothing: the known names within a few edits of it (case
 * aside). The edit distance is computed only in a band around the diagonal and gives up as soon
 * as the band exceeds the limit, so an error about a name costs O(length x limit) per candidate,
 * never the square of its length; names past 64 characters get no suggestion at all.
 */

const MAX_EDITS = 3;
const MAX_SUGGESTIONS = 3;
/** Longer names get no suggestion: bounds an error's cost at names x 64 x 7 steps. */
const MAX_SUGGESTED_LENGTH = 64;

/**
 * The edit distance of `a` and `b` (insertions, deletions, substitutions, and swaps of two
 * neighbouring characters, the commonest typo) if at most `limit`, else Infinity.
 */
export function editDistanceWithin(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return Number.POSITIVE_INFINITY;
  const far = Number.POSITIVE_INFINITY;
  let beforePrevious = new Array<number>(b.length + 1).fill(far);
  let previous = new Array<number>(b.length + 1).fill(far);
  let current = new Array<number>(b.length + 1).fill(far);
  for (let j = 0; j <= Math.min(b.length, limit); j += 1) previous[j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    const from = Math.max(1, i - limit);
    const to = Math.min(b.length, i + limit);
    // Only the cells next to the band are reset: the later rows read no further (a whole-row
    // reset would make every row cost the length of b).
    current[from - 1] = from === 1 && i <= limit ? i : far;
    if (to + 1 <= b.length) current[to + 1] = far;
    let best = current[from - 1] as number;
    for (let j = from; j <= to; j += 1) {
      const same = a.charCodeAt(i - 1) === b.charCodeAt(j - 1);
      let value = Math.min(
        (previous[j - 1] as number) + (same ? 0 : 1),
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
      );
      if (
        i > 1 &&
        j > 1 &&
        a.charCodeAt(i - 1) === b.charCodeAt(j - 2) &&
        a.charCodeAt(i - 2) === b.charCodeAt(j - 1)
      ) {
        value = Math.min(value, (beforePrevious[j - 2] as number) + 1);
      }
      current[j] = value;
      if (value < best) best = value;
    }
    if (best > limit) return far;
    [beforePrevious, previous, current] = [previous, current, beforePrevious];
  }
  const distance = previous[b.length] as number;
  return distance <= limit ? distance : far;
}

/** The names nearest to `given`: those at the smallest distance within the limit, at most three, in the order given. */
export function nearestNames(given: string, names: readonly string[]): string[] {
  // A name this long is no typo of a field's: nothing to suggest, and nothing to spend on it.
  if (given.length > MAX_SUGGESTED_LENGTH) return [];
  const wanted = given.toLowerCase();
  // A short name allows fewer edits: "Id" is not a suggestion for "Ab".
  const limit = Math.min(MAX_EDITS, Math.max(1, Math.floor(wanted.length / 3)));
  const scored: { name: string; distance: number; order: number }[] = [];
  names.forEach((name, order) => {
    const distance = editDistanceWithin(wanted, name.toLowerCase(), limit);
    if (distance <= limit) scored.push({ name, distance, order });
  });
  // The nearest only: "createdat" suggests createdAt, not updatedAt three edits away too.
  const nearest = Math.min(...scored.map((entry) => entry.distance));
  return scored
    .filter((entry) => entry.distance === nearest)
    .slice(0, MAX_SUGGESTIONS)
    .map((entry) => entry.name);
}

/** ` (did you mean "Name"?)`, or '' when nothing is near. */
export function didYouMean(given: string, names: readonly string[]): string {
  const near = nearestNames(given, names);
  if (near.length === 0) return '';
  return ` (did you mean ${near.map((name) => JSON.stringify(name)).join(' or ')}?)`;
}
