import type { FieldType } from '@recordbase/contracts/fields';
import type { FilterOperator } from '@recordbase/contracts/filters';
import { rawKey, textOrNull } from './column-sql';
import type { KeyKind } from './key-kinds';
import { needNumber, needNumberList } from './operands';
import { comparisonOperators, equalityOperators, isNotNull, isNull, listOperators } from './operators';
import { asNumberOrNull, notSupported } from './oracle';
import { numberFromText } from './text-cells';
import type { ColumnSpec, FieldTypeModule, MatchKey, OperatorSql, Readings } from './types';

/**
 * What the number types (number, currency, percent, duration, rating) share: a numeric column,
 * the number operators, numeric order. Doubles differ only in name; rating overrides its column,
 * its coercion (the template's max) and how it is built from other types.
 */

export const numberOperators: Partial<Record<FilterOperator, OperatorSql>> = {
  ...equalityOperators(needNumber, 'double precision'),
  ...comparisonOperators(needNumber, 'double precision'),
  is_empty: isNull,
  is_not_empty: isNotNull,
  ...listOperators(needNumberList, 'double precision'),
};

/** Numbers in the oracle: comparisons never match an empty value. */
export function matchNumber(number: number | null, operator: FilterOperator, operand: unknown): boolean {
  switch (operator) {
    case 'equals':
      return number !== null && number === operand;
    case 'does_not_equal':
      return !matchNumber(number, 'equals', operand);
    case 'greater_than':
      return number !== null && number > (operand as number);
    case 'greater_than_or_equal_to':
      return number !== null && number >= (operand as number);
    case 'less_than':
      return number !== null && number < (operand as number);
    case 'less_than_or_equal_to':
      return number !== null && number <= (operand as number);
    case 'is_empty':
      return number === null;
    case 'is_not_empty':
      return number !== null;
    case 'in':
      return number !== null && (operand as number[]).includes(number);
    case 'not_in':
      return !matchNumber(number, 'in', operand);
    default:
      throw notSupported(operator, 'numbers');
  }
}

export function numericReadings(column: string): Readings {
  return { text: `${column}::text`, number: `${column}::double precision`, numberColumn: column };
}

interface NumericVariant {
  column: ColumnSpec;
  keyKind: KeyKind;
  matchKey: MatchKey;
  coerce: FieldTypeModule['coerce'];
  fromText: (text: string) => number | undefined;
  convertFrom: FieldTypeModule['convertFrom'];
  fitToTemplate?: FieldTypeModule['fitToTemplate'];
}

const double: NumericVariant = {
  column: { sqlType: 'double precision' },
  keyKind: 'float',
  matchKey: rawKey('float8_ops'),
  coerce: (value) => value,
  fromText: numberFromText,
  convertFrom: (from) => from.number ?? null,
};

export function numeric<T extends FieldType>(
  type: T,
  variant: Partial<NumericVariant> = {},
): FieldTypeModule<T> {
  const { column, keyKind, matchKey, coerce, fromText, convertFrom, fitToTemplate } = {
    ...double,
    ...variant,
  };
  return {
    type,
    column,
    formula: 'number',
    prepared: 'columns',
    coerce,
    fromText,
    json: ({ column }) => textOrNull(column),
    filters: numberOperators,
    sort: ({ column }) => ({ expression: column, kind: keyKind }),
    match: { key: matchKey },
    readIndex: { order: (column) => column, filter: 'order' },
    readings: numericReadings,
    convertFrom,
    ...(fitToTemplate ? { fitToTemplate } : {}),
    oracle: {
      matches: (value, operator, operand) => matchNumber(asNumberOrNull(value), operator, operand),
      sortKey: asNumberOrNull,
    },
  };
}
