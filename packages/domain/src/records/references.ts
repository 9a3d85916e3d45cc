import { type InputPath, invalid } from '@recordbase/contracts/domain-errors';
import type { FieldTemplate } from '@recordbase/contracts/fields';
import type { AttachmentValue, AttachmentWriteValue } from '@recordbase/contracts/records';
import { qualifiedTable } from '@recordbase/db/physical';
import type { Queryable } from './store';
import type { TableMeta } from './table-meta';
import type { PreparedRecord } from './values';

/** The storage key of a url that is a file of our upload service, or null for any other url. */
export type UploadKeyOf = (url: string) => string | null;

const FILES_PATH = '/files/';

/**
 * Which urls are files of our upload service: `{its public address}/files/{key}`, the urls its
 * uploads answer. With `publicUrl` (UPLOAD_PUBLIC_URL, upload-service's PUBLIC_URL) exactly that
 * origin and path; without it, an http(s) url of the host the request reached, on any port (the
 * gateway serves both services, and without it they answer on ports of one host). A url of any
 * other host is another site's however its path looks: it gets neither an upload's metadata nor a
 * signed link, whose token would be sent to that host.
 */
export function uploadKeyMatcher(publicUrl: string | undefined, requestHostname: string): UploadKeyOf {
  const ours = publicUrl ? new URL(publicUrl) : null;
  let prefix = ours ? ours.pathname : '/';
  // A loop, not /\/+$/: that pattern is quadratic over a run of slashes.
  while (prefix.endsWith('/')) prefix = prefix.slice(0, -1);
  prefix += FILES_PATH;
  const hostname = requestHostname.toLowerCase();
  return (url) => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return null;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
    if (parsed.username !== '' || parsed.password !== '') return null;
    if (ours ? parsed.origin !== ours.origin : parsed.hostname !== hostname) return null;
    if (!parsed.pathname.startsWith(prefix)) return null;
    try {
      return decodeURIComponent(parsed.pathname.slice(prefix.length)) || null;
    } catch {
      return null;
    }
  };
}

/** Whether some attachment names a file of the upload service (whose row the write must lock). */
export function needsUploads(records: readonly PreparedRecord[], uploadKeyOf: UploadKeyOf): boolean {
  return records.some((record) =>
    [...record.attachments.values()].some((values) =>
      values.some((value) => uploadKeyOf(value.url) !== null),
    ),
  );
}

/**
 * Completes attachment values: `{url}` of a file uploaded to this database gets its name, size
 * and type from the upload record; any other url must bring all three itself.
 */
export async function resolveAttachments(
  client: Queryable,
  table: TableMeta,
  records: PreparedRecord[],
  where: (i: number) => InputPath,
  uploadKeyOf: UploadKeyOf,
) {
  const keys = new Set<string>();
  for (const record of records) {
    for (const values of record.attachments.values()) {
      for (const value of values) {
        const key = uploadKeyOf(value.url);
        if (key) keys.add(key);
      }
    }
  }
  const uploads = new Map<string, { file_name: string; size: string; mime_type: string }>();
  if (keys.size > 0) {
    const result = await client.query<{ key: string; file_name: string; size: string; mime_type: string }>(
      `SELECT key, file_name, size, mime_type FROM uploaded_files
        WHERE key = ANY($1::text[]) AND kind = 'attachment' AND database_id = $2
        -- Held until commit: the orphan sweeper cannot delete a file this write is attaching.
          FOR SHARE`,
      [[...keys], table.databaseId],
    );
    for (const row of result.rows) uploads.set(row.key, row);
  }
  records.forEach((record, index) => {
    for (const [fieldId, values] of record.attachments) {
      const field = table.fieldsById.get(fieldId)!;
      const complete = values.map((value: AttachmentWriteValue, position): AttachmentValue => {
        const key = uploadKeyOf(value.url);
        const upload = key ? uploads.get(key) : undefined;
        if (upload) {
          return {
            url: value.url,
            fileName: upload.file_name,
            size: Number(upload.size),
            mimeType: upload.mime_type,
          };
        }
        if (
          value.fileName !== undefined &&
          value.size !== undefined &&
          value.mimeType !== undefined &&
          /^https?:\/\//i.test(value.url)
        ) {
          return { url: value.url, fileName: value.fileName, size: value.size, mimeType: value.mimeType };
        }
        throw invalid(
          [...where(index), field.name, position, 'url'],
          'not a file uploaded to this database; use a url returned by /fileupload, or give an http(s) url with fileName, size and mimeType',
        );
      });
      record.columns.set(fieldId, JSON.stringify(complete));
    }
  });
}

/** Every linked id must name a record of the linked table. */
async function verifyLinks(
  client: Queryable,
  table: TableMeta,
  records: PreparedRecord[],
  where: (i: number) => InputPath,
) {
  for (const field of table.fields.filter((f) => f.type === 'linked_record')) {
    const ids = new Set<string>();
    for (const record of records) for (const id of record.links.get(field.id) ?? []) ids.add(id);
    if (ids.size === 0) continue;
    const linkedTableId = (field.template as FieldTemplate<'linked_record'>).tableId;
    const found = await client.query<{ id: string }>(
      `SELECT id::text FROM ${qualifiedTable(table.schemaName, linkedTableId)} WHERE id = ANY($1::uuid[])`,
      [[...ids]],
    );
    const existing = new Set(found.rows.map((row) => row.id));
    records.forEach((record, index) => {
      const missing = (record.links.get(field.id) ?? []).find((id) => !existing.has(id));
      if (missing) throw invalid([...where(index), field.name], `no record ${missing} in the linked table`);
    });
  }
}

export async function resolveReferences(
  client: Queryable,
  table: TableMeta,
  records: PreparedRecord[],
  where: (index: number) => InputPath,
  uploadKeyOf: UploadKeyOf,
): Promise<void> {
  await resolveAttachments(client, table, records, where, uploadKeyOf);
  await verifyLinks(client, table, records, where);
}
