import { randomUUID } from 'node:crypto';
import type { Principal } from '@recordbase/contracts/api-keys';
import { UUID_PATTERN } from '@recordbase/contracts/common';
import { DomainError, type InputPath, invalid, notFound } from '@recordbase/contracts/domain-errors';
import type { EventSource } from '@recordbase/contracts/events';
import type {
  AggregateRecordsRequest,
  BulkDeleteRecordsRequest,
  BulkRecordsRequest,
  BulkUpdateRecordsRequest,
  ListRecordsRequest,
  RecordValuesInput,
} from '@recordbase/contracts/records';
import { deleteIntoTrash, newRecordId } from '@recordbase/db';
import { moduleOfField } from '@recordbase/db/field-types';
import type pg from 'pg';
import { requireScope } from '../access-policy';
import { actorOf, type EventContext, type TransactionEvents } from '../events';
import { aggregateRecords } from './aggregate';
import { expandedLinks } from './expand';
import {
  linkedReadersOf,
  lockLinkedRead,
  refreshAfterWrite,
  refreshLinkedReaders,
  refreshOwnLinkedValues,
  writtenFieldIds,
} from './linked-refresh';
import { ensureMatchIndex, inCanonicalOrder } from './match-indexes';
import { presentRecords } from './presentation';
import { DEFAULT_READ_INDEX_MIN_ROWS, ensureReadIndexes } from './read-indexes';
import { recordChanges } from './record-changes';
import { inStatement, inTransaction, type RecordsDb, type TableAddress, withTable } from './record-work';
import { needsUploads, resolveAttachments, resolveReferences } from './references';
import { addSelectOptions } from './select-option-additions';
import {
  fetchRecordsJson,
  type ListedRecords,
  type ListRendering,
  listRecords,
  lockExisting,
  lockKeys,
  recordsInOrder,
  updateRecords,
} from './store';
import { type FieldMeta, projectedFields, type TableMeta, unwritable } from './table-meta';
import { typecastRecords } from './typecast';
import { type PreparedRecord, prepareRecords } from './values';
import { insideNone, insideNow, recordViewMembers, watchedViews } from './view-members';
import { listingOf } from './view-reads';
import { runWrite, type WriteProblem } from './write-statement';

/**
 * The record use cases: they take parsed input and return JSON text or throw DomainError.
 * Each runs through record-work.ts: the table's metadata, a statement or a transaction.
 */

export type { RecordsDb, TableAddress } from './record-work';

/** The key a write is made by, as the JSON its created_by and last_modified_by fields keep. */

/** A write's events: by its key, and for history only when it asked that webhooks not hear of it. */
const eventContext = (principal: Principal, suppressWebhooks: boolean | undefined): EventContext => ({
  actor: actorOf(principal),
  quiet: suppressWebhooks === true,
});

/** The id as stored (lower case), or the invalid_record_id refusal of one that is no UUID. */
export function validRecordId(id: string): string {
  if (!UUID_PATTERN.test(id))
    throw new DomainError('invalid_record_id', [
      { path: null, message: `Record id ${JSON.stringify(id)} is not a valid UUID` },
    ]);
  return id.toLowerCase();
}

export async function list(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  request: ListRecordsRequest,
): Promise<ListedRecords> {
  return withTable(records.tables, records.db, principal, address, (table) =>
    listTable(records, principal, table, request),
  );
}

/** A listing of a table whose metadata the caller has (withTable): `list` without the lookup. */
export async function listTable(
  records: RecordsDb,
  principal: Principal,
  table: TableMeta,
  request: ListRecordsRequest,
  rendering: ListRendering = {},
): Promise<ListedRecords> {
  const { db, fileLinks } = records;
  // A search (and a view) is a filter from here on: the same SQL, indexes, total and cursor binding.
  const listing = listingOf(table, request);
  const expanded = await expandedLinks(db, table, request.expand, ['expand']);
  const listed = await listRecords(db, table, listing, expanded, rendering);
  ensureReadIndexes(
    records.background,
    table,
    listing,
    listed.tableRows,
    records.readIndexMinRows ?? DEFAULT_READ_INDEX_MIN_ROWS,
    records.onBackgroundError ?? (() => {}),
  );
  // Another shape holds no stored file's url to sign: its caller renders those fields itself.
  if (rendering.shape !== undefined && rendering.shape.kind !== 'record') return listed;
  return { ...listed, recordsJson: presentRecords(listed.recordsJson, table, principal, fileLinks) };
}

export async function aggregate(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  request: AggregateRecordsRequest,
): Promise<string> {
  const { db, tables } = records;
  return withTable(tables, db, principal, address, (table) => aggregateRecords(db, table, request));
}

const matchableTypes = (field: FieldMeta) => moduleOfField(field).match !== undefined;

function matchOnFields(table: TableMeta, matchOn: readonly string[]): FieldMeta[] {
  return matchOn.map((id, index) => {
    const field = table.fieldsById.get(id);
    if (!field) throw invalid(['matchOn', index], `no field with id ${JSON.stringify(id)} in this table`);
    const refused = unwritable(field);
    if (refused) throw invalid(['matchOn', index], `${refused}, so it cannot be matched on`);
    if (!matchableTypes(field))
      throw invalid(['matchOn', index], `a ${field.type} field cannot be matched on`);
    return field;
  });
}

function isEmptyValue(value: unknown): boolean {
  return value === null || value === undefined || (Array.isArray(value) && value.length === 0);
}

/** The matchOn values of each record, refusing records without them and duplicates within the request. */
function matchKeys(records: PreparedRecord[], fields: FieldMeta[]): unknown[][] {
  const seen = new Map<string, number>();
  return records.map((record, index) => {
    const values = fields.map((field) => {
      const value = record.columns.get(field.id);
      if (isEmptyValue(value)) {
        throw invalid(['records', index], `needs a value for matchOn field ${JSON.stringify(field.name)}`);
      }
      return Array.isArray(value) ? [...value].sort() : value;
    });
    const key = JSON.stringify(values);
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      throw invalid(['records', index], (at) => `has the same matchOn values as ${at(['records', earlier])}`);
    }
    seen.set(key, index);
    return values;
  });
}

/** What a write may ask besides its records. */
export interface WriteOptions {
  /** Write without telling webhooks: the record events are appended for history only. */
  suppressWebhooks?: boolean;
  /** Convert values to their fields' types and add missing select options (typecast.ts). */
  typecast?: boolean;
  /** The events' source, when not the public API's own write (a restore to a revision). */
  source?: EventSource;
}

const NO_NEW_OPTIONS: ReadonlyMap<string, readonly string[]> = new Map();

interface PreparedWrite {
  prepared: PreparedRecord[];
  /** Select options the write adds first, in its transaction (select-option-additions.ts). */
  newOptions: ReadonlyMap<string, readonly string[]>;
}

/** The records as a write checks them, typecast first when asked. */
function prepareWrite(
  principal: Principal,
  table: TableMeta,
  inputs: readonly RecordValuesInput[],
  where: (index: number) => InputPath,
  typecast: boolean | undefined,
): PreparedWrite {
  if (!typecast) return { prepared: prepareRecords(table, inputs, where), newOptions: NO_NEW_OPTIONS };
  const cast = typecastRecords(table, inputs, where);
  const prepared = prepareRecords(cast.table, cast.inputs, where);
  for (const [fieldId, names] of cast.newOptions) {
    requireScope(
      principal,
      'schema:write',
      `typecast would add ${names.map((name) => JSON.stringify(name)).join(', ')} to the options of field ${JSON.stringify(table.fieldsById.get(fieldId)?.name)}, which changes the table's schema`,
    );
  }
  return { prepared, newOptions: cast.newOptions };
}

export interface BulkResult {
  created: boolean;
  recordsJson: string;
  /** What happened to each input record: created, or (an upsert's match) updated. */
  createdIds: string[];
  updatedIds: string[];
}

/** Turns what the write statement refused into the refusal the checks in Node used to give. */
function refuse(problem: WriteProblem, table: TableMeta, where: (index: number) => InputPath): never {
  if (problem.kind === 'missing-link') {
    const field = table.fieldsById.get(problem.fieldId)!;
    throw invalid([...where(problem.index), field.name], `no record ${problem.linkedId} in the linked table`);
  }
  throw invalid(
    where(problem.index),
    `matches ${problem.count} existing records on matchOn; it must match at most one`,
  );
}

export async function bulkWrite(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  body: BulkRecordsRequest,
): Promise<BulkResult> {
  return withTable(records.tables, records.db, principal, address, (table) =>
    bulkWriteTo(records, principal, table, body),
  );
}

/** bulkWrite to a table whose metadata the caller holds (withTable). */
export function bulkWriteTo(
  records: RecordsDb,
  principal: Principal,
  table: TableMeta,
  body: BulkRecordsRequest,
): Promise<BulkResult> {
  return writeRecords(records, principal, table, body, (index) => ['records', index]);
}

/**
 * Writes the records of `body` in one statement (an upsert's behind its key locks, a write adding
 * select options or attaching uploaded files in a transaction): bulk writes, and a single create
 * as a bulk write of one. `where` places a record's problems in the request.
 */
async function writeRecords(
  records: RecordsDb,
  principal: Principal,
  table: TableMeta,
  body: BulkRecordsRequest,
  where: (index: number) => InputPath,
): Promise<BulkResult> {
  const { prepared, newOptions } = prepareWrite(principal, table, body.records, where, body.typecast);
  const context = eventContext(principal, body.suppressWebhooks);
  const write = async (client: pg.PoolClient, events: TransactionEvents, matchOn?: FieldMeta[]) => {
    const current = await addSelectOptions(client, events, table, newOptions);
    // An upsert's matches may be linking records already; new records are linked by nobody.
    if (matchOn) await lockLinkedRead(client, current, prepared);
    await resolveAttachments(client, table, prepared, where, records.fileLinks.keyOf);
    const createdEventId = randomUUID();
    const outcome = await runWrite(client, events, {
      table,
      records: prepared,
      newIds: prepared.map(() => newRecordId()),
      ...(matchOn ? { matchOn } : {}),
      eventIds: { created: createdEventId },
      author: actorOf(principal),
      quiet: events.quiet,
    });
    if (outcome.problem) refuse(outcome.problem, table, where);
    events.appended(outcome.eventIds, outcome.eventsAppended);
    if (outcome.createdIds.length > 0 && !events.quiet) {
      await recordViewMembers(client, current, createdEventId, outcome.createdIds, insideNone(current));
    }
    // Only an upsert's matches can be linked to already: new records are linked by nobody.
    await refreshAfterWrite(
      client,
      events.quiet ? null : events,
      current,
      outcome.updatedIds,
      writtenFieldIds(prepared),
    );
    return outcome;
  };
  if (!body.matchOn) {
    // One statement is a transaction of its own, unless uploaded files must be locked first or
    // the views webhooks watch need their members worked out after it (view-members.ts).
    const { recordsJson, createdIds, updatedIds } =
      needsUploads(prepared, records.fileLinks.keyOf) || newOptions.size > 0 || watchedViews(table).length > 0
        ? await inTransaction(records, context, (client, events) => write(client, events))
        : await inStatement(records, context, (client, events) => write(client, events));
    if (newOptions.size > 0) records.tables?.clear();
    // New records hold only the attachments this request gave: without a file of the upload
    // service among them there is no link to sign, and the text PostgreSQL rendered is the answer.
    const signable = needsUploads(prepared, records.fileLinks.keyOf) || !principal.scopes.has('records:read');
    return {
      created: true,
      recordsJson: signable ? presentRecords(recordsJson, table, principal, records.fileLinks) : recordsJson,
      createdIds,
      updatedIds,
    };
  }
  requireScope(
    principal,
    'records:read',
    'an upsert with matchOn looks records up by their values, which is reading them',
  );
  // In one order whatever the request's, so [a, b] and [b, a] take the same key locks.
  const fields = inCanonicalOrder(matchOnFields(table, body.matchOn));
  const keys = matchKeys(prepared, fields);
  const { recordsJson, createdIds, updatedIds } = await inTransaction(
    records,
    context,
    async (client, events) => {
      // Its own statement: the write's snapshot must begin after the locks are held.
      await lockKeys(
        client,
        table,
        keys.map((key) => `${table.id}:${JSON.stringify(key)}`),
      );
      return write(client, events, fields);
    },
  );
  if (newOptions.size > 0) records.tables?.clear();
  ensureMatchIndex(records.background, table, fields, records.onBackgroundError ?? (() => {}));
  return {
    created: false,
    recordsJson: presentRecords(recordsJson, table, principal, records.fileLinks),
    createdIds,
    updatedIds,
  };
}

export async function createOne(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  input: RecordValuesInput,
  options: WriteOptions = {},
): Promise<string> {
  return withTable(records.tables, records.db, principal, address, async (table) => {
    // A bulk create of one: one statement, its event appended in it.
    const written = await writeRecords(
      records,
      principal,
      table,
      { records: [input], typecast: options.typecast, suppressWebhooks: options.suppressWebhooks },
      () => ['record'],
    );
    // The answer is an array of the one record.
    return written.recordsJson.slice(1, -1);
  });
}

export async function getOne(
  { db, tables, fileLinks }: RecordsDb,
  principal: Principal,
  address: TableAddress,
  recordId: string,
  /** Names or ids of the fields to return; all when absent. */
  fields?: readonly string[],
  /** Link fields whose linked records to render beside their ids. */
  expand?: readonly string[],
): Promise<string> {
  const id = validRecordId(recordId);
  return withTable(tables, db, principal, address, (table) =>
    getOneOf({ db, fileLinks }, principal, table, id, fields, expand),
  );
}

/** A record of a table whose metadata the caller has (withTable), by a valid id: `getOne` without the lookup. */
export async function getOneOf(
  { db, fileLinks }: Pick<RecordsDb, 'db' | 'fileLinks'>,
  principal: Principal,
  table: TableMeta,
  id: string,
  fields?: readonly string[],
  expand?: readonly string[],
): Promise<string> {
  const projected = projectedFields(table, fields, ['fields']);
  const expanded = await expandedLinks(db, table, expand, ['expand']);
  const client = await db.connect();
  try {
    const json = (await fetchRecordsJson(client, table, [id], projected, expanded)).get(id);
    if (!json) throw notFound(`Record ${id} not found`);
    return presentRecords(json, table, principal, fileLinks);
  } finally {
    client.release();
  }
}

export async function updateOne(
  { db, tables, fileLinks, events: publisher }: RecordsDb,
  principal: Principal,
  address: TableAddress,
  recordId: string,
  input: RecordValuesInput,
  options: WriteOptions = {},
): Promise<string> {
  const id = validRecordId(recordId);
  return withTable(tables, db, principal, address, async (table) => {
    const where = (): InputPath => ['record'];
    const write = prepareWrite(principal, table, [input], where, options.typecast);
    const { newOptions } = write;
    const [prepared] = write.prepared as [PreparedRecord];
    const json = await inTransaction(
      { db, events: publisher },
      eventContext(principal, options.suppressWebhooks),
      async (client, events) => {
        const current = await addSelectOptions(client, events, table, newOptions);
        await lockLinkedRead(client, current, [prepared]);
        if (!(await lockExisting(client, current, [id])).has(id))
          throw notFound(`Record ${recordId} not found`);
        await resolveReferences(client, table, [prepared], where, fileLinks.keyOf);
        const changes = prepared.columns.size > 0 || prepared.links.size > 0;
        // The state the event's `changes` compare with.
        const before = changes ? await recordsInOrder(client, table, [id]) : '';
        const insideBefore = changes && !events.quiet ? await insideNow(client, current, [id]) : undefined;
        if (changes) await updateRecords(client, table, [{ id, record: prepared }], actorOf(principal));
        if (prepared.links.size > 0) await refreshOwnLinkedValues(client, table, [id]);
        const json = (await fetchRecordsJson(client, table, [id])).get(id)!;
        if (changes) {
          const eventId = await events.records(table, 'record.updated', [id], `[${json}]`, {
            changes: recordChanges(before, `[${json}]`),
            ...(options.source ? { source: options.source } : {}),
          });
          await recordViewMembers(client, current, eventId, [id], insideBefore);
          await refreshAfterWrite(
            client,
            events.quiet ? null : events,
            current,
            [id],
            writtenFieldIds([prepared]),
          );
        }
        return json;
      },
    );
    if (newOptions.size > 0) tables?.clear();
    return presentRecords(json, table, principal, fileLinks);
  });
}

/**
 * Updates records by id, all or none (PATCH .../records/bulk): each changes only the fields it
 * gives; an id that does not exist, or one given twice, refuses the whole request. One
 * record.updated event carries the records that changed.
 */
export async function updateMany(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  body: BulkUpdateRecordsRequest,
): Promise<BulkResult> {
  // The ids are checked before the table is looked up: a malformed one is a 400 wherever it points.
  const ids = updatedIds(body);
  return withTable(records.tables, records.db, principal, address, (table) =>
    updateManyOf(records, principal, table, body, ids),
  );
}

/** Each record's id, checked, refusing one given twice. */
function updatedIds(body: BulkUpdateRecordsRequest): string[] {
  const seen = new Map<string, number>();
  return body.records.map((record, index) => {
    const id = validRecordId(record.id);
    const earlier = seen.get(id);
    if (earlier !== undefined) {
      throw invalid(['records', index, 'id'], (at) => `the same record as ${at(['records', earlier])}`);
    }
    seen.set(id, index);
    return id;
  });
}

/** updateMany in a table whose metadata the caller holds (withTable). */
export async function updateManyOf(
  { db, tables, fileLinks, events: publisher }: RecordsDb,
  principal: Principal,
  table: TableMeta,
  body: BulkUpdateRecordsRequest,
  ids: readonly string[] = updatedIds(body),
): Promise<BulkResult> {
  const where = (index: number): InputPath => ['records', index, 'fields'];
  const { prepared, newOptions } = prepareWrite(
    principal,
    table,
    body.records.map((record) => record.fields),
    where,
    body.typecast,
  );
  const json = await inTransaction(
    { db, events: publisher },
    eventContext(principal, body.suppressWebhooks),
    async (client, events) => {
      const current = await addSelectOptions(client, events, table, newOptions);
      await lockLinkedRead(client, current, prepared);
      const existing = await lockExisting(client, current, ids);
      const missing = ids.filter((id) => !existing.has(id));
      if (missing.length > 0) throw notFound(`Record ${missing.join(', ')} not found; nothing was updated`);
      await resolveReferences(client, table, prepared, where, fileLinks.keyOf);
      const writes = ids
        .map((id, index) => ({ id, record: prepared[index] as PreparedRecord }))
        .filter((write) => write.record.columns.size > 0 || write.record.links.size > 0);
      const changed = writes.map((write) => write.id);
      const announced = writes.length > 0;
      // The state the event's `changes` compare with.
      const before = announced ? await recordsInOrder(client, table, changed) : '';
      const insideBefore = announced && !events.quiet ? await insideNow(client, current, changed) : undefined;
      await updateRecords(client, table, writes, actorOf(principal));
      const relinked = writes.filter((write) => write.record.links.size > 0).map((write) => write.id);
      await refreshOwnLinkedValues(client, table, relinked);
      const json = await recordsInOrder(client, table, ids);
      if (announced) {
        const changedJson =
          writes.length === ids.length ? json : await recordsInOrder(client, table, changed);
        const eventId = await events.records(table, 'record.updated', changed, changedJson, {
          changes: recordChanges(before, changedJson),
        });
        await recordViewMembers(client, current, eventId, changed, insideBefore);
      }
      await refreshAfterWrite(
        client,
        events.quiet ? null : events,
        current,
        changed,
        writtenFieldIds(writes.map((write) => write.record)),
      );
      return json;
    },
  );
  if (newOptions.size > 0) tables?.clear();
  return {
    created: false,
    recordsJson: presentRecords(json, table, principal, fileLinks),
    createdIds: [],
    updatedIds: [...ids],
  };
}

/**
 * Deletes records, all or none: when any id does not exist nothing is deleted and the answer
 * names it. The record.deleted event carries the records' last state.
 */
async function deleteExisting(
  records: Pick<RecordsDb, 'db' | 'events'>,
  context: EventContext,
  table: TableMeta,
  ids: readonly string[],
): Promise<void> {
  await inTransaction(records, context, async (client, events) => {
    const existing = await lockExisting(client, table, ids);
    const missing = ids.filter((id) => !existing.has(id));
    if (missing.length > 0) {
      throw notFound(
        `Record ${missing.join(', ')} not found${ids.length > 1 ? '; nothing was deleted' : ''}`,
      );
    }
    const lastState = await recordsInOrder(client, table, ids);
    const insideBefore = events.quiet ? undefined : await insideNow(client, table, ids);
    // Found before the delete, whose cascade takes the link rows that lead to them.
    const readers = await linkedReadersOf(client, table, ids);
    // The trash lists a record through its deletion's event, appended first for that.
    const eventId = await events.records(table, 'record.deleted', ids, lastState);
    await deleteIntoTrash(client, table, ids, eventId);
    await recordViewMembers(client, table, eventId, ids, insideBefore, insideNone(table));
    await refreshLinkedReaders(client, events.quiet ? null : events, readers);
  });
}

export async function deleteOne(
  { db, tables, events: publisher }: RecordsDb,
  principal: Principal,
  address: TableAddress,
  recordId: string,
  options: WriteOptions = {},
): Promise<void> {
  const id = validRecordId(recordId);
  return withTable(tables, db, principal, address, async (table) => {
    await deleteExisting(
      { db, events: publisher },
      eventContext(principal, options.suppressWebhooks),
      table,
      [id],
    );
  });
}

export async function deleteMany(
  { db, tables, events: publisher }: RecordsDb,
  principal: Principal,
  address: TableAddress,
  body: BulkDeleteRecordsRequest,
): Promise<string[]> {
  const ids = [...new Set(body.ids.map(validRecordId))];
  return withTable(tables, db, principal, address, async (table) => {
    await deleteExisting(
      { db, events: publisher },
      eventContext(principal, body.suppressWebhooks),
      table,
      ids,
    );
    return ids;
  });
}
