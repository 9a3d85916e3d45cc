import type { Filter } from '@recordbase/contracts/records';
import fc from 'fast-check';

/**
 * Building blocks of random list filters, shared by the property tests that hold the API against
 * the in-memory oracle (filter-evaluator.ts). Each takes the arbitrary of the field reference (a
 * name or an id), so a test decides which fields exist and how they are named.
 */

export const COMPARISON_OPERATORS = [
  'equals',
  'does_not_equal',
  'greater_than',
  'greater_than_or_equal_to',
  'less_than',
  'less_than_or_equal_to',
];
export const TEXT_OPERATORS = [
  'equals',
  'does_not_equal',
  'contains',
  'does_not_contain',
  'starts_with',
  'ends_with',
];
export const SELECT_OPERATORS = ['equals', 'does_not_equal', 'contains', 'does_not_contain'];

/** `is_empty: true` or `is_not_empty: true`. */
export const emptinessCondition = (field: fc.Arbitrary<string>): fc.Arbitrary<Filter> =>
  fc
    .record({ field, op: fc.constantFrom('is_empty', 'is_not_empty') })
    .map(({ field: f, op }) => ({ field: f, [op]: true }) as Filter);

/** One of `ops` with a single operand. */
export const scalarCondition = (
  field: fc.Arbitrary<string>,
  ops: readonly string[],
  value: fc.Arbitrary<unknown>,
): fc.Arbitrary<Filter> =>
  fc
    .record({ field, op: fc.constantFrom(...ops), value })
    .map(({ field: f, op, value: v }) => ({ field: f, [op]: v }) as Filter);

/** `in` or `not_in` with up to three operands (possibly none). */
export const listCondition = (
  field: fc.Arbitrary<string>,
  value: fc.Arbitrary<unknown>,
): fc.Arbitrary<Filter> =>
  fc
    .record({ field, op: fc.constantFrom('in', 'not_in'), value: fc.array(value, { maxLength: 3 }) })
    .map(({ field: f, op, value: v }) => ({ field: f, [op]: v }) as Filter);

/** Conditions nested in `and` / `or` groups of one to three members. */
export const filterTree = (condition: fc.Arbitrary<Filter>): fc.Arbitrary<Filter> =>
  fc.letrec<{ filter: Filter }>((tie) => ({
    filter: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      condition,
      fc.record({ and: fc.array(tie('filter'), { minLength: 1, maxLength: 3 }) }) as fc.Arbitrary<Filter>,
      fc.record({ or: fc.array(tie('filter'), { minLength: 1, maxLength: 3 }) }) as fc.Arbitrary<Filter>,
    ),
  })).filter;
