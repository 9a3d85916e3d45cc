import fc from 'fast-check';
import { didYouMean, editDistanceWithin, nearestNames } from '../src/field-types';

/** The full table of the optimal string alignment distance: the reference the banded one must equal. */
function reference(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      row[j] = Math.min(
        (up[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
        (up[j] as number) + 1,
        (row[j - 1] as number) + 1,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

describe('suggestions for a name that names nothing', () => {
  it('measure the same distance as the full table, within the limit, and Infinity beyond it', () => {
    const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd'), maxLength: 9 });
    fc.assert(
      fc.property(word, word, fc.integer({ min: 0, max: 4 }), (a, b, limit) => {
        const exact = reference(a, b);
        expect(editDistanceWithin(a, b, limit)).toBe(exact <= limit ? exact : Number.POSITIVE_INFINITY);
      }),
      { numRuns: 3000 },
    );
  });

  it('offer the nearest names, a swap of two letters counting as one edit, case aside', () => {
    expect(nearestNames('Nmae', ['Name', 'Email', 'Amount'])).toEqual(['Name']);
    expect(nearestNames('createdat', ['createdAt', 'updatedAt'])).toEqual(['createdAt']);
    expect(nearestNames('Stat', ['Stage', 'State', 'Start', 'Status'])).toEqual(['State', 'Start']);
    expect(nearestNames('Ab', ['Id'])).toEqual([]);
    expect(didYouMean('Quantity', ['Name', 'Count'])).toBe('');
    expect(didYouMean('Cuont', ['Name', 'Count'])).toBe(' (did you mean "Count"?)');
  });

  it('stay cheap for long names: the band, not the square of the length', () => {
    const long = 'x'.repeat(255);
    const names = Array.from({ length: 500 }, (_, index) => `${'y'.repeat(250)}${index}`);
    expect(nearestNames(long, names)).toEqual([]);
  });
});
