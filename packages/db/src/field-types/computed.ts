import { ISO_UTC_MILLIS } from './column-sql';
import type { FieldTypeModule } from './types';

/**
 * What the computed types share: values nobody writes (a record body naming one is refused
 * before any coercion, records/values.ts), nothing built into them by a type conversion.
 */

export const neverWritten: FieldTypeModule['coerce'] = () => {
  throw new Error('computed values are never written: the write paths refuse them first');
};

/** No plain field becomes a computed one: its values could not be kept. */
export const notConvertedInto: FieldTypeModule['convertFrom'] = () => null;

/** An instant as the API answers it, for the date-time computed types. */
export const instantJson = (column: string) =>
  `COALESCE(to_json(to_char(${column} AT TIME ZONE 'UTC', ${ISO_UTC_MILLIS}))::text, 'null')`;

/**
 * What a computed type's module for one field (forField) takes away from the written type whose
 * reads, filters and sorts it borrows: it is never matched on, imported, written or fitted.
 */
export const unwrittenParts = {
  match: undefined,
  fromText: undefined,
  prepared: undefined,
  storedValuesSql: undefined,
  fitToTemplate: undefined,
  updatedTemplate: undefined,
} as const;
