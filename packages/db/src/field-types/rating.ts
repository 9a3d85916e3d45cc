import type { FieldTemplate } from '@recordbase/contracts/fields';
import { failed, rawKey } from './column-sql';
import { numeric } from './numeric';

/** A whole number from 0 to the template's max (at most 10), so a smallint. */
export const rating = numeric('rating', {
  column: { sqlType: 'smallint' },
  keyKind: 'smallint',
  matchKey: rawKey('int2_ops'),
  coerce: (value, { template, fail }) => {
    const { max } = template as FieldTemplate<'rating'>;
    if (value !== null && (value as number) > max) fail(`must be between 0 and ${max}`);
    return value;
  },
  // Ratings above a lowered maximum are capped.
  fitToTemplate: (table, column, template) => ({
    text: `UPDATE ${table} SET ${column} = $1 WHERE ${column} > $1`,
    values: [(template as FieldTemplate<'rating'>).max],
  }),
  convertFrom: (from, context) => {
    const number = from.number;
    if (number === undefined) return null;
    const max = (context.template as Partial<FieldTemplate<'rating'>> | undefined)?.max ?? 5;
    return `CASE WHEN (${number}) IS NULL THEN NULL WHEN (${number}) = trunc(${number}) AND (${number}) BETWEEN 0 AND ${max} THEN (${number})::smallint ELSE ${failed(number, `rating (a whole number from 0 to ${max})`)}::smallint END`;
  },
});
