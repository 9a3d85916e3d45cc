import type { FieldTemplate } from '@recordbase/contracts/fields';
import { systemColumns } from '../physical/naming';
import { instantJson, neverWritten, notConvertedInto } from './computed';
import { datetime, matchDateTime } from './datetime';
import { asStringOrNull } from './oracle';
import type { FieldTypeModule } from './types';

/**
 * When a write last changed a field it watches (its template's fieldIds; every written field
 * without them), the record's creation before that. A timestamptz column that a new record
 * fills by default (now(): its createdAt, the same transaction's time) and that each update
 * statement sets itself, comparing the values it writes with those before it (WriteContext's
 * `changed`): a write that changes nothing watched leaves it, and a watched link field is
 * compared with its junction table's rows, which a row trigger on the record table never sees.
 */

const watched = (template: unknown) =>
  (template as FieldTemplate<'last_modified_time'> | undefined)?.fieldIds;

export const lastModifiedTime: FieldTypeModule<'last_modified_time'> = {
  type: 'last_modified_time',
  column: { sqlType: 'timestamptz', notNullDefault: 'now()' },
  primary: false,
  formula: 'datetime',
  // Records already there: which of their writes touched the chosen fields is not known, so
  // their creation; watching every field, their last write (updatedAt).
  columnAdded: ({ table, column, field }) => [
    `UPDATE ${table} SET ${column} = ${watched(field.template) === undefined ? systemColumns.updatedAt : systemColumns.createdAt}`,
  ],
  written: {
    updated: ({ column, field, changed }) =>
      `CASE WHEN ${changed(watched(field.template))} THEN now() ELSE ${column} END`,
  },
  coerce: neverWritten,
  json: ({ column }) => instantJson(column),
  filters: datetime.filters,
  sort: ({ column }) => ({ expression: column, kind: 'timestamp' }),
  readIndex: { order: (column) => column, filter: 'order' },
  readings: datetime.readings,
  convertFrom: notConvertedInto,
  oracle: {
    matches: (value, operator, operand) => matchDateTime(asStringOrNull(value), operator, operand),
    sortKey: datetime.oracle.sortKey,
  },
};
