/**
 * "Did you mean" for a name that names nothing: the known names within a few edits of it (case
 * aside). The edit distance is computed only in a band around the diagonal and gives up as soon
 * as the band exceeds the limit, so an error about a long name costs O(length x limit) per
 * candidate, never the square of its length.
 */

const MAX_EDITS = 3;
const MAX_SUGGESTIONS = 3;

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
    current.fill(far);
    if (i <= limit) current[0] = i;
    let best = current[0] as number;
    for (let j = Math.max(1, i - limit); j <= Math.min(b.length, i + limit); j += 1) {
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
