import type { FieldTemplate } from '@recordbase/contracts/fields';
import type { AttachmentValue, AttachmentWriteValue } from '@recordbase/contracts/records';
import { qualifiedTable } from '@recordbase/db/physical';
import { badRequest } from '@recordbase/server-kit/errors';
import type { Queryable } from './store';
import type { TableMeta } from './table-meta';
import type { PreparedRecord } from './values';

const FILES_PATH = '/files/';

/**
 * The storage key of a url served by the upload service (`…/files/{key}`), if it is one: what
 * follows the first `/files/` of the path. Found with indexOf, as the unanchored
 * `/\/files\/(.+)$/` it replaces backtracked quadratically over a path of repeated `/files/`.
 */
export function uploadKeyOf(url: string): string | null {
  try {
    const pathname = new URL(url).pathname;
    const at = pathname.indexOf(FILES_PATH);
    const key = at < 0 ? '' : pathname.slice(at + FILES_PATH.length);
    return key ? decodeURIComponent(key) : null;
  } catch {
    return null;
  }
}

/** Whether some attachment names a file of the upload service (whose row the write must lock). */
export function needsUploads(records: readonly PreparedRecord[]): boolean {
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
  where: (i: number) => string,
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
        throw badRequest(
          `${where(index)}.${field.name}[${position}].url: not a file uploaded to this database; use a url returned by /fileupload, or give an http(s) url with fileName, size and mimeType`,
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
  where: (i: number) => string,
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
      if (missing)
        throw badRequest(`${where(index)}.${field.name}: no record ${missing} in the linked table`);
    });
  }
}

export async function resolveReferences(
  client: Queryable,
  table: TableMeta,
  records: PreparedRecord[],
  where: (index: number) => string,
): Promise<void> {
  await resolveAttachments(client, table, records, where);
  await verifyLinks(client, table, records, where);
}
