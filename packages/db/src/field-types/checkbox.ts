import { rawKey } from './column-sql';
import { needBoolean } from './operands';
import { equalityOperators } from './operators';
import { notSupported } from './oracle';
import { booleanFromText } from './text-cells';
import type { FieldTypeModule } from './types';

/** true or false, never empty: an absent value is false. */
export const checkbox: FieldTypeModule<'checkbox'> = {
  type: 'checkbox',
  formula: 'checkbox',
  column: { sqlType: 'boolean', notNullDefault: 'false' },
  prepared: 'columns',
  coerce: (value) => value ?? false,
  fromText: booleanFromText,
  // A boolean's text output is already its JSON, and the column is never null.
  json: ({ column }) => `${column}::text`,
  filters: equalityOperators(needBoolean, 'boolean'),
  sort: ({ column }) => ({ expression: column, kind: 'boolean' }),
  match: { key: rawKey('bool_ops') },
  readIndex: { order: (column) => column, filter: 'order' },
  readings: (column) => ({
    text: `CASE WHEN ${column} THEN 'true' END`,
    number: `CASE WHEN ${column} THEN 1 ELSE 0 END::double precision`,
  }),
  convertFrom: (from) => {
    if (from.textColumn !== undefined)
      return `COALESCE(NULLIF(btrim(${from.textColumn}), '')::boolean, false)`;
    if (from.numberColumn !== undefined) return `COALESCE(${from.numberColumn} <> 0, false)`;
    return null;
  },
  oracle: {
    matches: (value, operator, operand) => {
      const checked = value === true;
      if (operator === 'equals') return checked === operand;
      if (operator === 'does_not_equal') return checked !== operand;
      throw notSupported(operator, 'checkbox');
    },
    sortKey: (value) => value === true,
  },
};
