import type { Principal } from '@recordbase/contracts/api-keys';
import type { AttachmentValue } from '@recordbase/contracts/records';
import type { UploadKeyOf } from './references';
import type { TableMeta } from './table-meta';

/**
 * Records as a given key may see them. PostgreSQL renders records as JSON text; most answers pass
 * it through untouched, and only two cases reshape it here:
 * - a key without `records:read` (a form's write-only key) sees ids and times, never values;
 * - an attachment of an uploaded file carries a `signedUrl` that opens it without a key for a
 *   while, as Airtable's attachment links do, bound to the key that read it.
 */

/** Which attachment urls are files of our upload service, and the links readers get to them. */
export interface FileLinks {
  /** The storage key of a url of our upload service; null for any other url, which gets no link. */
  keyOf: UploadKeyOf;
  /** Signs the token of a file link for the key reading it. */
  sign: (fileKey: string, principal: Principal) => string;
}

interface RenderedRecord {
  id: string;
  data: Record<string, unknown>;
  fields: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

const withoutValues = ({ id, createdAt, updatedAt }: RenderedRecord) => ({ id, createdAt, updatedAt });

function withLink(value: AttachmentValue, principal: Principal, links: FileLinks): AttachmentValue {
  const fileKey = links.keyOf(value.url);
  if (!fileKey) return value;
  const link = new URL(value.url);
  link.searchParams.set('token', links.sign(fileKey, principal));
  return { ...value, signedUrl: link.toString() };
}

function linkAttachments(
  record: RenderedRecord,
  table: TableMeta,
  principal: Principal,
  links: FileLinks,
): RenderedRecord {
  for (const field of table.fields) {
    if (field.type !== 'attachments') continue;
    const values = record.data[field.id] as AttachmentValue[] | undefined;
    if (!values || values.length === 0) continue;
    const linked = values.map((value) => withLink(value, principal, links));
    record.data[field.id] = linked;
    record.fields[field.name] = linked;
  }
  return record;
}

/**
 * Whether the rendered JSON could hold the url of an uploaded file, whose path has `files` in it
 * (references.ts): else it has no link to sign and passes through without being parsed, as most
 * pages of tables with attachments do. URL parsing drops tabs and newlines, which JSON shows
 * escaped, so a `files` split by them is looked at too.
 */
function mayNameUploadedFile(json: string): boolean {
  return json.includes('files') || json.includes('\\t') || json.includes('\\n') || json.includes('\\r');
}

/** `json` is one record or an array of them, as rendered by record-json.ts. */
export function presentRecords(
  json: string,
  table: TableMeta,
  principal: Principal,
  links: FileLinks,
): string {
  const readable = principal.scopes.has('records:read');
  const hasAttachments = table.fields.some((field) => field.type === 'attachments');
  if (readable && (!hasAttachments || !mayNameUploadedFile(json))) return json;
  const present = (record: RenderedRecord) =>
    readable ? linkAttachments(record, table, principal, links) : withoutValues(record);
  const parsed = JSON.parse(json) as RenderedRecord | RenderedRecord[];
  return JSON.stringify(Array.isArray(parsed) ? parsed.map(present) : present(parsed));
}
