import { quoteIdent, quoteLiteral } from '../physical/naming';
import { textOrNull } from './column-sql';
import { neverWritten, notConvertedInto } from './computed';
import { matchNumber, numberOperators, numericReadings } from './numeric';
import { asNumberOrNull } from './oracle';
import type { AddedColumn, FieldTypeModule } from './types';

/**
 * 1, 2, 3… in creation order: a bigint column whose default takes the next value of the field's
 * own sequence (a table has one identity column, `seq`, already). Numbers are never reused: a
 * deleted record's number stays taken, as the sequence never goes back. Converted to a written
 * type, the numbers stay as values; the sequence, owned by the column, goes with it.
 */

function sequenceOf({ schemaName, field }: Pick<AddedColumn, 'schemaName' | 'field'>): string {
  return `${quoteIdent(schemaName)}.${quoteIdent(`${field.id}_seq`)}`;
}

/**
 * The records already there numbered by creation order (createdAt, then insertion order) in one
 * statement, the sequence set to continue after them, and only then the default and NOT NULL.
 */
function numberRecords(added: AddedColumn): string[] {
  const { table, column } = added;
  const sequence = sequenceOf(added);
  const name = quoteLiteral(sequence);
  return [
    `CREATE SEQUENCE ${sequence} AS bigint OWNED BY ${table}.${column}`,
    `UPDATE ${table} AS r SET ${column} = n.number
       FROM (SELECT id, row_number() OVER (ORDER BY created_at, seq) AS number FROM ${table}) AS n
      WHERE r.id = n.id`,
    `SELECT setval(${name}, (SELECT count(*) FROM ${table}) + 1, false)`,
    `ALTER TABLE ${table} ALTER COLUMN ${column} SET DEFAULT nextval(${name}), ALTER COLUMN ${column} SET NOT NULL`,
  ];
}

export const autonumber: FieldTypeModule<'autonumber'> = {
  type: 'autonumber',
  column: { sqlType: 'bigint' },
  primary: false,
  formula: 'number',
  columnAdded: numberRecords,
  coerce: neverWritten,
  json: ({ column }) => textOrNull(column),
  filters: numberOperators,
  sort: ({ column }) => ({ expression: column, kind: 'bigint' }),
  readIndex: { order: (column) => column, filter: 'order' },
  readings: numericReadings,
  convertFrom: notConvertedInto,
  oracle: {
    matches: (value, operator, operand) => matchNumber(asNumberOrNull(value), operator, operand),
    sortKey: asNumberOrNull,
  },
};
