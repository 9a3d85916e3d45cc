import {
  type AttachmentWriteValue,
  type RecordValuesInput,
  recordValueWriteSchemaByType,
} from '@recordbase/contracts/records';
import { fieldTypeModule } from '@recordbase/db/field-types';
import { type AppError, badRequest } from '@recordbase/server-kit/errors';
import { describeIssues } from '@recordbase/server-kit/validate';
import { type FieldMeta, findField, type TableMeta, unknownField } from './table-meta';

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

/** Why a field cannot hold a value, worded with the value's place. */
class ValueProblem {
  constructor(readonly message: string) {}
}

/** The value ready to store, or its problem (`where` and `key` name the value in the message). */
function fieldValue(field: FieldMeta, raw: unknown, where: string, key: string): unknown {
  const parsed = recordValueWriteSchemaByType[field.type].safeParse(raw);
  if (!parsed.success) {
    return new ValueProblem(describeIssues('body', parsed.error.issues).replace(/^body/, `${where}.${key}`));
  }
  try {
    return fieldTypeModule(field.type).coerce(parsed.data, {
      template: field.template,
      raw,
      fail: refuseValue,
    });
  } catch (error) {
    if (error instanceof RefusedValue) return new ValueProblem(`${where}.${key}: ${error.message}`);
    throw error;
  }
}

/** How many problems one 400 lists. */
export const MAX_RECORD_PROBLEMS = 20;

/**
 * The problems of a write, each naming its place: the first twenty listed, the rest counted, so
 * that a client fixes a record, or a batch, in one round trip rather than one per value. Only a
 * listed problem's words are made (a suggestion costs a pass over the table's names).
 */
class Problems {
  private readonly listed: string[] = [];
  /** Problems not listed of the one record whose listing the limit cut short. */
  private cutShort = { where: '', count: 0 };
  /** Bad records reached once the listing was full, none of whose problems is listed. */
  private unlistedRecords = 0;

  get full(): boolean {
    return this.listed.length >= MAX_RECORD_PROBLEMS;
  }

  /** A problem of the record `where`, begun while there was room in the listing. */
  add(where: string, describe: () => string): void {
    if (!this.full) {
      this.listed.push(describe());
      return;
    }
    this.cutShort = { where, count: this.cutShort.count + 1 };
  }

  /** A bad record reached once the listing was full. */
  addUnlistedRecord(): void {
    this.unlistedRecords += 1;
  }

  /** The 400 that lists them, when there are any. */
  refusal(): AppError | null {
    if (this.listed.length === 0) return null;
    const { where, count } = this.cutShort;
    const tail = [
      ...(count > 0 ? [`and ${count} more in ${where}`] : []),
      ...(this.unlistedRecords > 0 ? [`and ${this.unlistedRecords} more bad records`] : []),
    ];
    return badRequest([...this.listed, ...tail].join('; '));
  }
}

/**
 * One record's values prepared, or null once `problems` has every problem of the record: each
 * unknown key, field given twice and value its field cannot hold, not only the first. A record
 * reached when the listing is already full is only counted, at its first problem.
 */
function prepareRecord(
  table: TableMeta,
  input: RecordValuesInput,
  where: string,
  problems: Problems,
): PreparedRecord | null {
  const prepared: PreparedRecord = { columns: new Map(), links: new Map(), attachments: new Map() };
  const listing = !problems.full;
  let bad = false;
  const keyByField = new Map<string, string>();
  for (const [key, raw] of Object.entries(input)) {
    const field = findField(table, key);
    const earlier = field && keyByField.get(field.id);
    let problem: (() => string) | undefined;
    if (!field) {
      problem = () => `${where}: ${unknownField(table, key)}`;
    } else if (earlier !== undefined) {
      problem = () =>
        `${where}: field ${JSON.stringify(field.name)} is given twice (as ${JSON.stringify(earlier)} and ${JSON.stringify(key)})`;
    } else {
      keyByField.set(field.id, key);
      const value = fieldValue(field, raw, where, key);
      if (!(value instanceof ValueProblem)) {
        (prepared[fieldTypeModule(field.type).prepared] as Map<string, unknown>).set(field.id, value);
        continue;
      }
      problem = () => value.message;
    }
    bad = true;
    if (!listing) break;
    problems.add(where, problem);
  }
  if (!bad) return prepared;
  if (!listing) problems.addUnlistedRecord();
  return null;
}

/**
 * Every record of a write prepared, or one 400, before anything is written, that lists the
 * problems of every bad record, all of each record's (the first twenty in all, then how many
 * more).
 */
export function prepareRecords(
  table: TableMeta,
  inputs: readonly RecordValuesInput[],
  where: (index: number) => string,
): PreparedRecord[] {
  const problems = new Problems();
  const prepared = inputs.map((input, index) => prepareRecord(table, input, where(index), problems));
  const refusal = problems.refusal();
  if (refusal) throw refusal;
  return prepared as PreparedRecord[];
}
