import {
  DomainError,
  type InputPath,
  issueProblems,
  type NamePath,
  type Problem,
} from '@recordbase/contracts/domain-errors';
import {
  type AttachmentWriteValue,
  type RecordValuesInput,
  recordValueWriteSchemaByType,
} from '@recordbase/contracts/records';
import { moduleOfField } from '@recordbase/db/field-types';
import { type FieldMeta, findField, type TableMeta, unknownField, unwritable } from './table-meta';

/**
 * Turns a record body (keys are field names or ids) into values ready for the typed columns,
 * refusing anything the field cannot hold with a problem at the record's key.
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

/** Why a field cannot hold a value, at the value's place. */
class ValueProblem {
  constructor(readonly problems: Problem[]) {}
}

/** The value ready to store, or its problem (`where` and `key` are the value's place). */
function fieldValue(field: FieldMeta, raw: unknown, where: InputPath, key: string): unknown {
  const parsed = recordValueWriteSchemaByType[field.type].safeParse(raw);
  if (!parsed.success) return new ValueProblem(issueProblems([...where, key], parsed.error.issues));
  try {
    return moduleOfField(field).coerce(parsed.data, {
      template: field.template,
      raw,
      fail: refuseValue,
    });
  } catch (error) {
    if (error instanceof RefusedValue)
      return new ValueProblem([{ path: [...where, key], message: error.message }]);
    throw error;
  }
}

/** How many problems one refusal lists. */
export const MAX_RECORD_PROBLEMS = 20;

/**
 * The problems of a write, each naming its place: the first twenty listed, the rest counted, so
 * that a client fixes a record, or a batch, in one round trip rather than one per value. Only a
 * listed problem's words are made (a suggestion costs a pass over the table's names).
 */
class Problems {
  private readonly listed: Problem[][] = [];
  /** Problems not listed of the one record whose listing the limit cut short. */
  private cutShort: { where: InputPath; count: number } = { where: [], count: 0 };
  /** Bad records reached once the listing was full, none of whose problems is listed. */
  private unlistedRecords = 0;

  get full(): boolean {
    return this.listed.length >= MAX_RECORD_PROBLEMS;
  }

  /** A problem of the record `where`, begun while there was room in the listing. */
  add(where: InputPath, describe: () => Problem[]): void {
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

  /** The refusal that lists them, when there are any. */
  refusal(): DomainError | null {
    if (this.listed.length === 0) return null;
    const { where, count } = this.cutShort;
    const tail: Problem[] = [
      ...(count > 0 ? [{ path: null, message: (at: NamePath) => `and ${count} more in ${at(where)}` }] : []),
      ...(this.unlistedRecords > 0
        ? [{ path: null, message: `and ${this.unlistedRecords} more bad records` }]
        : []),
    ];
    return new DomainError('invalid', [...this.listed.flat(), ...tail]);
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
  where: InputPath,
  problems: Problems,
): PreparedRecord | null {
  const prepared: PreparedRecord = { columns: new Map(), links: new Map(), attachments: new Map() };
  const listing = !problems.full;
  let bad = false;
  const keyByField = new Map<string, string>();
  for (const [key, raw] of Object.entries(input)) {
    const field = findField(table, key);
    const earlier = field && keyByField.get(field.id);
    let problem: (() => Problem[]) | undefined;
    const refused = field && unwritable(field);
    if (!field) {
      problem = () => [{ path: where, message: unknownField(table, key) }];
    } else if (refused) {
      problem = () => [{ path: [...where, key], message: refused }];
    } else if (earlier !== undefined) {
      problem = () => [
        {
          path: where,
          message: `field ${JSON.stringify(field.name)} is given twice (as ${JSON.stringify(earlier)} and ${JSON.stringify(key)})`,
        },
      ];
    } else {
      keyByField.set(field.id, key);
      const value = fieldValue(field, raw, where, key);
      // Every written type says where its values go; only computed ones, refused above, do not.
      const into = moduleOfField(field).prepared ?? 'columns';
      if (!(value instanceof ValueProblem)) {
        (prepared[into] as Map<string, unknown>).set(field.id, value);
        continue;
      }
      problem = () => value.problems;
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
 * Every record of a write prepared, or one refusal, before anything is written, that lists the
 * problems of every bad record, all of each record's (the first twenty in all, then how many
 * more).
 */
export function prepareRecords(
  table: TableMeta,
  inputs: readonly RecordValuesInput[],
  where: (index: number) => InputPath,
): PreparedRecord[] {
  const problems = new Problems();
  const prepared = inputs.map((input, index) => prepareRecord(table, input, where(index), problems));
  const refusal = problems.refusal();
  if (refusal) throw refusal;
  return prepared as PreparedRecord[];
}
