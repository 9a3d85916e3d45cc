import type { FilterOperator } from '@recordbase/contracts/filters';
import { FORMULA_COLUMN_TYPE } from '../formula/compile';
import type { FormulaType } from '../formula/types';
import { checkbox } from './checkbox';
import { neverWritten, notConvertedInto, unwrittenParts } from './computed';
import { date } from './date';
import { datetime } from './datetime';
import { multipleSelect } from './multiple-select';
import { number } from './number';
import { singleLineText } from './single-line-text';
import type { ConditionContext, FieldShape, FieldSql, FieldTypeModule } from './types';

/**
 * A formula field: its expression compiled to SQL (formula/compile.ts) when it is saved, and
 * computed by PostgreSQL. One that reads only the row's own stored columns and no clock is a
 * stored generated column, which PostgreSQL keeps current on every write and listings index like
 * any column; any other (NOW(), TODAY()) is its SQL, computed when a record is read. Either way it
 * reads, filters and sorts as the type of its result: its module for a field (forField) is that
 * type's, with the formula's own column and value.
 */

/** A formula's template as the service keeps it (the client sees only `expression`, by names). */
export interface KeptFormula {
  /** Fields by id. */
  expression: string;
  resultType: FormulaType;
  /** The fields it reads directly, by id. */
  fieldIds: string[];
  /** The generated column's expression over the row's bare columns, when it is stored. */
  columnSql?: string;
  /** Its value over the record table aliased `r`, when it is computed at read time. */
  valueSql?: string;
}

export const keptFormula = (field: Pick<FieldShape, 'template'>) => field.template as KeptFormula;

/** The type whose reads, filters and sorts a result type takes (an array reads as a multiple_select). */
const RESULT_MODULES: Readonly<Record<FormulaType, FieldTypeModule>> = {
  text: singleLineText as FieldTypeModule,
  number: number as FieldTypeModule,
  checkbox: checkbox as FieldTypeModule,
  date: date as FieldTypeModule,
  datetime: datetime as FieldTypeModule,
  array: multipleSelect as FieldTypeModule,
};

/** The field type a result type reads, filters and sorts as (the type a frozen formula becomes). */
export const fieldTypeOfResult = (resultType: FormulaType) => RESULT_MODULES[resultType].type;

const resultModule = (field: Pick<FieldShape, 'template'>) =>
  RESULT_MODULES[keptFormula(field).resultType] ?? RESULT_MODULES.text;

const own = {
  formula: 'text' as FormulaType,
  derived: true as const,
  columnOf: (field: FieldShape) => {
    const kept = keptFormula(field);
    return kept?.columnSql
      ? { sqlType: FORMULA_COLUMN_TYPE[kept.resultType], generated: kept.columnSql }
      : undefined;
  },
  // Parenthesised: the result type's SQL appends to it (`::text`, `IS NULL`).
  valueSql: (field: FieldShape) => `(${keptFormula(field).valueSql ?? 'NULL'})`,
  coerce: neverWritten,
  convertFrom: notConvertedInto,
};

export const formula: FieldTypeModule<'formula'> = {
  ...own,
  type: 'formula',
  json: (sql) => resultModule(sql.field).json(sql),
  // Each operator as the result type has it; which apply is the result type's group's to say.
  filters: Object.fromEntries(
    [...new Set(Object.values(RESULT_MODULES).flatMap((module) => Object.keys(module.filters)))].map(
      (operator) => [
        operator,
        (sql: FieldSql, ctx: ConditionContext) => {
          const operatorSql = resultModule(sql.field).filters[operator as FilterOperator];
          if (!operatorSql) throw new Error(`formula: no ${operator} for its result type`);
          return operatorSql(sql, ctx);
        },
      ],
    ),
  ),
  sort: (sql) => resultModule(sql.field).sort(sql),
  readings: (column) => singleLineText.readings(column),
  oracle: {
    matches: () => {
      throw new Error('a formula field filters in the oracle as its result type (forField)');
    },
    sortKey: () => {
      throw new Error('a formula field sorts in the oracle as its result type (forField)');
    },
  },
  forField: (field) => {
    const reading = resultModule(field);
    const stored = keptFormula(field)?.columnSql !== undefined;
    return {
      ...reading,
      ...own,
      type: 'formula',
      formula: keptFormula(field)?.resultType ?? 'text',
      ...unwrittenParts,
      // A column computed at read time has nothing for an index to hold.
      readIndex: stored ? reading.readIndex : undefined,
    } as FieldTypeModule;
  },
};
