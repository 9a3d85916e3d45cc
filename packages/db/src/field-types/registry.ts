import type { FieldType } from '@recordbase/contracts/fields';
import { attachments } from './attachments';
import { createdBy, lastModifiedBy } from './authors';
import { autonumber } from './autonumber';
import { checkbox } from './checkbox';
import { count } from './count';
import { createdTime } from './created-time';
import { currency } from './currency';
import { date } from './date';
import { datetime } from './datetime';
import { duration } from './duration';
import { email } from './email';
import { formula } from './formula';
import { lastModifiedTime } from './last-modified-time';
import { linkedRecord } from './linked-record';
import { longText } from './long-text';
import { lookup } from './lookup';
import { multipleSelect } from './multiple-select';
import { number } from './number';
import { percent } from './percent';
import { phoneNumber } from './phone-number';
import { rating } from './rating';
import { rollup } from './rollup';
import { singleLineText } from './single-line-text';
import { singleSelect } from './single-select';
import type { FieldShape, FieldTypeModule } from './types';
import { url } from './url';

/**
 * The field type registry: one module per type (see types.ts for what a module declares). The
 * contracts' `fieldTypeContracts` lists the public side of each type (group, template, write
 * value); a new type is an entry there, a module here and its line below.
 */
export const fieldTypeModules: { readonly [Type in FieldType]: FieldTypeModule<Type> } = {
  single_line_text: singleLineText,
  long_text: longText,
  email,
  url,
  phone_number: phoneNumber,
  number,
  currency,
  percent,
  rating,
  duration,
  date,
  datetime,
  single_select: singleSelect,
  multiple_select: multipleSelect,
  checkbox,
  attachments,
  linked_record: linkedRecord,
  autonumber,
  created_time: createdTime,
  last_modified_time: lastModifiedTime,
  created_by: createdBy,
  last_modified_by: lastModifiedBy,
  formula,
  count,
  lookup,
  rollup,
};

export function fieldTypeModule(type: FieldType): FieldTypeModule {
  return fieldTypeModules[type] as FieldTypeModule;
}

/**
 * The module that reads, filters and sorts one field: its type's, or for a type whose result
 * depends on the field (formula, count, lookup, rollup) its result type's.
 */
export function moduleOfField(field: FieldShape): FieldTypeModule {
  const module = fieldTypeModule(field.type);
  return module.forField ? module.forField(field) : module;
}
