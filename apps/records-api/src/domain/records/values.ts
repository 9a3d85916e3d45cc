import {
  type AttachmentWriteValue,
  type RecordValuesInput,
  recordValueWriteSchemaByType,
} from '@recordbase/contracts/records';
import { fieldTypeModule } from '@recordbase/db/field-types';
import { AppError, badRequest } from '@recordbase/server-kit/errors';
import { describeIssues } from '@recordbase/server-kit/validate';
import { type FieldMeta, requireField, type TableMeta } from './table-meta';

/**
 * Turns a record body (keys are field names or ids) into values ready for the typed columns,
 * refusing anything the field cannot hold with a 400 that names the record and the key.
 * Checks that need the database (linked ids, uploaded files) come after, in references.ts.
 */

export interface PreparedRecord {
  /** Column values by field id, only for the fields the body gave. */
  columns: Map<string, unknown>;
  /** Linked record ids by link field id, only for the link fields the body gave. */
  links: Map<string, string[]>;
  /** Attachment values by field id, to be completed from the uploads table. */
  attachments: Map<string, AttachmentWriteValue[]>;
}

/** What a type's coercion refuses a value with; prepareRecord words it with the value's place. */
class RefusedValue extends Error {}

// One function for every value, not a closure per value: bulk writes prepare thousands.
const refuseValue = (message: string): never => {
  throw new RefusedValue(message);
};

/** `where` and `key` name the value in messages (joined only when there is one to write). */
function fieldValue(field: FieldMeta, raw: unknown, where: string, key: string): unknown {
  const parsed = recordValueWriteSchemaByType[field.type].safeParse(raw);
  if (!parsed.success) {
    throw badRequest(describeIssues('body', parsed.error.issues).replace(/^body/, `${where}.${key}`));
  }
  try {
    return fieldTypeModule(field.type).coerce(parsed.data, {
      template: field.template,
      raw,
      fail: refuseValue,
    });
  } catch (error) {
    if (error instanceof RefusedValue) throw badRequest(`${where}.${key}: ${error.message}`);
    throw error;
  }
}

export function prepareRecord(table: TableMeta, input: RecordValuesInput, where: string): PreparedRecord {
  const prepared: PreparedRecord = { columns: new Map(), links: new Map(), attachments: new Map() };
  const keyByField = new Map<string, string>();
  for (const [key, raw] of Object.entries(input)) {
    const field = requireField(table, key, where);
    const earlier = keyByField.get(field.id);
    if (earlier !== undefined) {
      throw badRequest(
        `${where}: field ${JSON.stringify(field.name)} is given twice (as ${JSON.stringify(earlier)} and ${JSON.stringify(key)})`,
      );
    }
    keyByField.set(field.id, key);
    const value = fieldValue(field, raw, where, key);
    (prepared[fieldTypeModule(field.type).prepared] as Map<string, unknown>).set(field.id, value);
  }
  return prepared;
}

/** How many bad records one 400 of a batch lists. */
export const MAX_RECORD_PROBLEMS = 20;

/**
 * Every record of a batch prepared, or one 400 that lists each bad record's problem (the first
 * twenty, then how many more): a client fixes its batch in one round trip, not one per record.
 */
export function prepareRecords(
  table: TableMeta,
  inputs: readonly RecordValuesInput[],
  where: (index: number) => string,
): PreparedRecord[] {
  const problems: string[] = [];
  let unlisted = 0;
  const prepared = inputs.map((input, index) => {
    try {
      return prepareRecord(table, input, where(index));
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 400) throw error;
      if (problems.length < MAX_RECORD_PROBLEMS) problems.push(error.message);
      else unlisted += 1;
      return null;
    }
  });
  if (problems.length > 0) {
    throw badRequest([...problems, ...(unlisted > 0 ? [`and ${unlisted} more bad records`] : [])].join('; '));
  }
  return prepared as PreparedRecord[];
}
