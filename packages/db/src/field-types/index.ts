/**
 * The field types as other code sees them (`@recordbase/db/field-types`): the registry and the
 * helpers built on it. The registry is a module of its own so that the helpers that read it
 * (imports.ts, typecast.ts) import it, not this file that re-exports them.
 */

export { ISO_UTC_MILLIS } from './column-sql';
export { type DateTimeOperand, epochMicros, parseDateTimeOperand } from './dates';
export { dateTimeCondition, matchDateTime } from './datetime';
export { fieldTypeOfResult, type KeptFormula, keptFormula } from './formula';
export * from './imports';
export { type KeyKind, type KeyKindSpec, type KeyValue, keyKinds } from './key-kinds';
export {
  fillLinkedValuesSql,
  givenLinkedValueSql,
  type KeptLinkedValues,
  keptLinkedValues,
  linkIdsJsonSql,
  storedLinkedValuesJoin,
} from './linked-values';
export { needUuid, needUuidList } from './operands';
export { lower, notSupported } from './oracle';
export { fieldTypeModule, fieldTypeModules, moduleOfField } from './registry';
export { optionNames } from './select-options';
export { didYouMean, editDistanceWithin, nearestNames } from './suggest';
export { typecastValue } from './typecast';
export type * from './types';
export {
  insertedColumns,
  once,
  updatedColumns,
  type WrittenBy,
  type WrittenColumn,
} from './written-columns';
