import { systemColumns } from '../physical/naming';
import { instantJson, neverWritten, notConvertedInto } from './computed';
import { datetime, matchDateTime } from './datetime';
import { asStringOrNull } from './oracle';
import type { FieldTypeModule } from './types';

/**
 * The record's createdAt as a field: no column of its own, its value is the record's created_at
 * (valueSql), which every reader, filter and sort takes from fieldValueSql. Converted to a
 * written type, it keeps the instants it showed in a new column.
 */

export const createdTime: FieldTypeModule<'created_time'> = {
  type: 'created_time',
  primary: false,
  formula: 'datetime',
  valueSql: () => `r.${systemColumns.createdAt}`,
  coerce: neverWritten,
  json: ({ column }) => instantJson(column),
  filters: datetime.filters,
  sort: ({ column }) => ({ expression: column, kind: 'timestamp' }),
  readings: datetime.readings,
  convertFrom: notConvertedInto,
  oracle: {
    matches: (value, operator, operand) => matchDateTime(asStringOrNull(value), operator, operand),
    sortKey: datetime.oracle.sortKey,
  },
};
