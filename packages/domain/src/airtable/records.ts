import { createHash } from 'node:crypto';
import {
  AIRTABLE_MAX_PAGE_SIZE,
  type AirtableListParams,
  type AirtableRecord,
} from '@recordbase/contracts/airtable';
import type { Principal } from '@recordbase/contracts/api-keys';
import { DomainError, type InputPath, invalid, type Problem } from '@recordbase/contracts/domain-errors';
import type {
  Filter,
  ListRecordsRequest,
  RecordValuesInput,
  TableRecord,
} from '@recordbase/contracts/records';
import type { FormulaFilter } from '../records/query-compiler';
import { renderedInSqlForAirtable } from '../records/record-json';
import type { RecordsDb, TableAddress } from '../records/record-work';
import { withTable } from '../records/record-work';
import {
  bulkWriteTo,
  deleteMany,
  getOneOf,
  listTable,
  updateManyOf,
  validRecordId,
} from '../records/records-service';
import { findField, type TableMeta, unknownField, unwritable } from '../records/table-meta';

/**
 * Records through the Airtable-compatible API (api-contract "The Airtable-compatible API"): its
 * parameters turned into a listing of ours (the same compiler, cursors, views and limits, with
 * filterByFormula as a formula condition), and our records rendered as Airtable renders its own:
 * `{id, createdTime, fields}` with empty values left out (null, "", [], false), attachments as
 * `{id, url, filename, size, type}`, keyed by field name or, when asked, by field id.
 */

/** A page of a listing: its records as a JSON array's text, and where the next page starts. */
export interface AirtablePage {
  recordsJson: string;
  offset?: string;
}

/**
 * What a listing of the table answers. PostgreSQL renders the records in Airtable's shape when
 * every field's JSON is already Airtable's (record-json.ts); a table with attachments has its
 * page rendered here. Airtable shows no total, so none is counted.
 */
export async function listAirtableRecords(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  params: AirtableListParams,
): Promise<AirtablePage> {
  return withTable(records.tables, records.db, principal, address, async (table) => {
    const { served, cursor } = parseOffset(params.offset);
    const pageSize = params.pageSize ?? AIRTABLE_MAX_PAGE_SIZE;
    const left = params.maxRecords === undefined ? pageSize : params.maxRecords - served;
    // An offset past maxRecords is never given out; one made by hand lists nothing more.
    if (left <= 0) return { recordsJson: '[]' };
    const limit = Math.min(pageSize, left);
    const formula = params.filterByFormula?.trim() ? params.filterByFormula : undefined;
    const request: ListRecordsRequest = {
      limit,
      offset: 0,
      ...(cursor !== undefined ? { cursor } : {}),
      // Only this module builds a formula condition; compileFilter takes it, the body schema cannot.
      ...(formula !== undefined ? { filter: { formula } satisfies FormulaFilter as unknown as Filter } : {}),
      ...(params.sort
        ? { sort: params.sort.map(({ field, direction }) => ({ field, direction: direction ?? 'asc' })) }
        : {}),
      ...(params.fields && params.fields.length > 0 ? { fields: params.fields } : {}),
      ...(params.view !== undefined ? { view: params.view } : {}),
    };
    const byFieldId = params.returnFieldsByFieldId === true;
    const inSql = table.fields.every(renderedInSqlForAirtable);
    const listed = await listTable(records, principal, table, request, {
      ...(inSql ? { shape: { kind: 'airtable', byFieldId } } : {}),
      total: false,
    });
    const recordsJson = inSql
      ? listed.recordsJson
      : JSON.stringify(
          (JSON.parse(listed.recordsJson) as TableRecord[]).map((record) =>
            airtableRecordOf(record, table, byFieldId),
          ),
        );
    const shown = served + listed.rowsOnPage;
    const more = listed.nextCursor !== null && (params.maxRecords === undefined || shown < params.maxRecords);
    return more ? { recordsJson, offset: `${shown}/${listed.nextCursor}` } : { recordsJson };
  });
}

/** One record, or the 404 of one the table does not hold (Airtable's ids are opaque: a malformed one is not there either). */
export async function getAirtableRecord(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  recordId: string,
  options: { returnFieldsByFieldId?: boolean } = {},
): Promise<AirtableRecord> {
  return withTable(records.tables, records.db, principal, address, async (table) => {
    const json = await getOneOf(records, principal, table, validRecordId(recordId));
    return airtableRecordOf(JSON.parse(json) as TableRecord, table, options.returnFieldsByFieldId === true);
  });
}

/**
 * An offset this module gave: the records shown so far (for maxRecords), a slash, then our
 * listing's cursor (base64url, which holds no slash). The cursor checks itself against the listing
 * it is used with.
 */
function parseOffset(offset: string | undefined): { served: number; cursor?: string } {
  if (offset === undefined) return { served: 0 };
  const slash = offset.indexOf('/');
  const served = slash > 0 && slash <= 16 ? Number(offset.slice(0, slash)) : Number.NaN;
  if (!Number.isSafeInteger(served) || served < 0 || slash === offset.length - 1) {
    throw invalid(
      ['offset'],
      'is not an offset this service gave; pass back the offset of the previous page unchanged',
    );
  }
  return { served, cursor: offset.slice(slash + 1) };
}

/** A record in Airtable's shape, its values from `data` (by field id), each field's as Airtable renders it. */
export function airtableRecordOf(record: TableRecord, table: TableMeta, byFieldId: boolean): AirtableRecord {
  const fields: Record<string, unknown> = {};
  for (const [id, value] of Object.entries(record.data)) {
    const field = table.fieldsById.get(id);
    if (!field) continue;
    const shown = airtableValue(value);
    if (shown !== undefined) fields[byFieldId ? id : field.name] = shown;
  }
  return { id: record.id, createdTime: record.createdAt, fields };
}

/** Airtable leaves a field out of a record when it is empty: false (an unticked checkbox) is empty too. */
function airtableValue(value: unknown): unknown {
  if (value === null || value === undefined || value === '' || value === false) return undefined;
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map(airtableElement);
  return value;
}

/** An element of an array value: attachments (of an attachments field, or looked up) in Airtable's shape. */
function airtableElement(element: unknown): unknown {
  if (!isAttachment(element)) return element;
  return {
    id: attachmentId(element.url),
    url: element.signedUrl ?? element.url,
    filename: element.fileName,
    size: element.size,
    type: element.mimeType,
  };
}

interface AttachmentValue {
  url: string;
  fileName: string;
  size: number;
  mimeType: string;
  signedUrl?: string;
}

function isAttachment(value: unknown): value is AttachmentValue {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<AttachmentValue>;
  return (
    typeof candidate.url === 'string' &&
    typeof candidate.fileName === 'string' &&
    typeof candidate.mimeType === 'string' &&
    typeof candidate.size === 'number'
  );
}

/** Airtable gives each attachment an id (att…); ours are their urls, so the id is derived from it: the same file, the same id. */
function attachmentId(url: string): string {
  return `att${createHash('sha256').update(url).digest('base64url').replace(/[-_]/g, '').slice(0, 14)}`;
}

// ---------------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------------

/** A write's records as Airtable.js sends them, with the options every write takes. */
interface WriteRequest {
  typecast?: boolean | undefined;
  returnFieldsByFieldId?: boolean | undefined;
  /** PUT: the fields a record leaves out are cleared, not kept. */
  replace?: boolean;
  /** The body held one record as `{fields}` rather than `records`: refusals name `fields.…`. */
  one?: boolean;
}

/** Where a single record's body (`{fields}`) has what a bulk body has at `records[0]`. */
const placedFor = (request: WriteRequest, move: (path: InputPath) => InputPath) => (path: InputPath) => {
  const moved = move(path);
  if (request.one !== true || moved[0] !== 'records' || moved[1] !== 0) return moved;
  // The record is its `fields` there: a problem of the whole record is one of `fields`.
  const within = moved.slice(2);
  return within[0] === 'fields' ? within : ['fields', ...within];
};

/** A refusal of our write body, its places moved to where the Airtable body has them. */
function movedRefusal(error: unknown, move: (path: InputPath) => InputPath): unknown {
  if (!(error instanceof DomainError)) return error;
  const problems: Problem[] = error.problems.map((problem) => ({
    ...problem,
    path: problem.path === null ? null : move(problem.path),
  }));
  return new DomainError(error.kind, problems, { retryAfterSeconds: error.retryAfterSeconds });
}

/** Our bulk body's `records[i].<field>` is the Airtable body's `records[i].fields.<field>`. */
const intoFields = (path: InputPath): InputPath =>
  path[0] === 'records' && typeof path[1] === 'number' && path.length > 2
    ? ['records', path[1], 'fields', ...path.slice(2)]
    : path;

async function moving<T>(move: (path: InputPath) => InputPath, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw movedRefusal(error, move);
  }
}

/**
 * A record's values as our writes take them: an attachment written in Airtable's shape
 * (`{url, filename, size, type}`, or one read from /v0 with its `id`) as ours, `{url, fileName,
 * size, mimeType}`; with `replace`, every writable field the record leaves out as empty.
 */
function valuesOf(table: TableMeta, fields: RecordValuesInput, replace: boolean): RecordValuesInput {
  const values: Record<string, unknown> = {};
  const given = new Set<string>();
  for (const [key, value] of Object.entries(fields)) {
    const field = findField(table, key);
    if (field) given.add(field.id);
    values[key] = field?.type === 'attachments' && Array.isArray(value) ? value.map(ourAttachment) : value;
  }
  if (replace) {
    for (const field of table.fields) {
      if (!given.has(field.id) && unwritable(field) === null) values[field.id] = null;
    }
  }
  return values;
}

const AIRTABLE_ATTACHMENT_KEYS = new Set([
  'id',
  'url',
  'filename',
  'size',
  'type',
  'width',
  'height',
  'thumbnails',
]);

function ourAttachment(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const entries = Object.entries(value as Record<string, unknown>);
  // Ours already, or something else: left for the field's own check to take or refuse.
  if (!entries.every(([key]) => AIRTABLE_ATTACHMENT_KEYS.has(key))) return value;
  const { url, filename, size, type } = value as Record<string, unknown>;
  return {
    url,
    ...(filename !== undefined ? { fileName: filename } : {}),
    ...(size !== undefined ? { size } : {}),
    ...(type !== undefined ? { mimeType: type } : {}),
  };
}

const rendered = (json: string, table: TableMeta, request: WriteRequest): AirtableRecord[] =>
  (JSON.parse(json) as TableRecord[]).map((record) =>
    airtableRecordOf(record, table, request.returnFieldsByFieldId === true),
  );

/** POST: creates the records (up to 10), all or none, answered in input order. */
export async function createAirtableRecords(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  request: WriteRequest & { records: RecordValuesInput[] },
): Promise<AirtableRecord[]> {
  return withTable(records.tables, records.db, principal, address, async (table) => {
    const written = await moving(placedFor(request, intoFields), () =>
      bulkWriteTo(records, principal, table, {
        records: request.records.map((fields) => valuesOf(table, fields, false)),
        typecast: request.typecast,
      }),
    );
    return rendered(written.recordsJson, table, request);
  });
}

/** PATCH or PUT by id: updates (or replaces) the records, all or none, answered in input order. */
export async function updateAirtableRecords(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  request: WriteRequest & { records: { id: string; fields: RecordValuesInput }[] },
): Promise<AirtableRecord[]> {
  return withTable(records.tables, records.db, principal, address, async (table) => {
    const written = await moving(
      placedFor(request, (path) => path),
      () =>
        updateManyOf(records, principal, table, {
          records: request.records.map(({ id, fields }) => ({
            id,
            fields: valuesOf(table, fields, request.replace === true),
          })),
          typecast: request.typecast,
        }),
    );
    return rendered(written.recordsJson, table, request);
  });
}

/**
 * PATCH or PUT with performUpsert: each record matched on `fieldsToMergeOn` (names or ids) is
 * updated, the others created, in one statement.
 */
export async function upsertAirtableRecords(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  request: WriteRequest & { records: RecordValuesInput[]; fieldsToMergeOn: string[] },
): Promise<{ records: AirtableRecord[]; createdRecords: string[]; updatedRecords: string[] }> {
  return withTable(records.tables, records.db, principal, address, async (table) => {
    const matchOn = request.fieldsToMergeOn.map((ref, index) => {
      const field = findField(table, ref);
      if (!field) throw invalid(['performUpsert', 'fieldsToMergeOn', index], unknownField(table, ref));
      return field.id;
    });
    if (new Set(matchOn).size !== matchOn.length) {
      throw invalid(['performUpsert', 'fieldsToMergeOn'], 'names a field twice');
    }
    const written = await moving(
      (path) =>
        path[0] === 'matchOn' ? ['performUpsert', 'fieldsToMergeOn', ...path.slice(1)] : intoFields(path),
      () =>
        bulkWriteTo(records, principal, table, {
          records: request.records.map((fields) => valuesOf(table, fields, request.replace === true)),
          matchOn,
          typecast: request.typecast,
        }),
    );
    return {
      records: rendered(written.recordsJson, table, request),
      createdRecords: written.createdIds,
      updatedRecords: written.updatedIds,
    };
  });
}

/** DELETE: the records (up to 10), all or none; a record that is not there is a 404. */
export async function deleteAirtableRecords(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  ids: string[],
): Promise<{ id: string; deleted: true }[]> {
  await moving(
    (path) => (path[0] === 'ids' ? ['records', ...path.slice(1)] : path),
    () => deleteMany(records, principal, address, { ids }),
  );
  return ids.map((id) => ({ id, deleted: true as const }));
}
