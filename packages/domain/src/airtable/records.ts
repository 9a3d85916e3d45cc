import { createHash } from 'node:crypto';
import {
  AIRTABLE_MAX_PAGE_SIZE,
  type AirtableListParams,
  type AirtableListResponse,
  type AirtableRecord,
} from '@recordbase/contracts/airtable';
import type { Principal } from '@recordbase/contracts/api-keys';
import { invalid } from '@recordbase/contracts/domain-errors';
import type { Filter, ListRecordsRequest, TableRecord } from '@recordbase/contracts/records';
import type { FormulaFilter } from '../records/query-compiler';
import type { RecordsDb, TableAddress } from '../records/record-work';
import { withTable } from '../records/record-work';
import { getOneOf, listTable, validRecordId } from '../records/records-service';
import type { TableMeta } from '../records/table-meta';

/**
 * Records through the Airtable-compatible API (api-contract "The Airtable-compatible API"): its
 * parameters turned into a listing of ours (the same compiler, cursors, views and limits, with
 * filterByFormula as a formula condition), and our records rendered as Airtable renders its own:
 * `{id, createdTime, fields}` with empty values left out (null, "", [], false), attachments as
 * `{id, url, filename, size, type}`, keyed by field name or, when asked, by field id.
 */

/** What a listing of the table answers: the page, and where the next one starts. */
export async function listAirtableRecords(
  records: RecordsDb,
  principal: Principal,
  address: TableAddress,
  params: AirtableListParams,
): Promise<AirtableListResponse> {
  return withTable(records.tables, records.db, principal, address, async (table) => {
    const { served, cursor } = parseOffset(params.offset);
    const pageSize = params.pageSize ?? AIRTABLE_MAX_PAGE_SIZE;
    const left = params.maxRecords === undefined ? pageSize : params.maxRecords - served;
    // An offset past maxRecords is never given out; one made by hand lists nothing more.
    if (left <= 0) return { records: [] };
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
    const listed = await listTable(records, principal, table, request);
    const page = (JSON.parse(listed.recordsJson) as TableRecord[]).map((record) =>
      airtableRecordOf(record, table, params.returnFieldsByFieldId === true),
    );
    const shown = served + page.length;
    const more = listed.nextCursor !== null && (params.maxRecords === undefined || shown < params.maxRecords);
    return more ? { records: page, offset: `${shown}/${listed.nextCursor}` } : { records: page };
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
