import { randomUUID } from 'node:crypto';
import type { ApiKeyScope, Principal } from '@recordbase/contracts/api-keys';
import { FIELD_ID_PATTERN, TABLE_ID_PATTERN } from '@recordbase/contracts/common';
import type { PrismaClient, Tx } from '@recordbase/db';
import { canAccessDatabase } from '@recordbase/domain/access-policy';
import { AppError } from '@recordbase/server-kit/errors';
import type { UploadKind } from '../uploads/storage-keys';

/** The rows of uploaded_files: what each stored file is, whose, and for which field. */

export interface AttachmentTarget {
  databaseId: string;
  tableId: string;
  fieldId: string;
}

const nameKey = (name: string) => name.trim().toLowerCase();

/**
 * What the attachment headers name: the attachments field (by id or by name, as everywhere in the
 * API) of an existing database, or why there is none, worded for the header at fault.
 */
export type TargetLookup =
  | { kind: 'found'; target: AttachmentTarget }
  | { kind: 'no database' }
  | { kind: 'refused'; message: string };

export async function findAttachmentTarget(
  prisma: PrismaClient,
  databaseId: string,
  tableRef: string,
  fieldRef: string,
): Promise<TargetLookup> {
  const database = await prisma.database.findUnique({ where: { id: databaseId }, select: { id: true } });
  if (!database) return { kind: 'no database' };
  const table = await prisma.table.findFirst({
    where: {
      databaseId,
      OR: [...(TABLE_ID_PATTERN.test(tableRef) ? [{ id: tableRef }] : []), { nameKey: nameKey(tableRef) }],
    },
    select: { id: true },
  });
  if (!table) {
    return { kind: 'refused', message: `table-id: no table ${JSON.stringify(tableRef)} in this database` };
  }
  const field = await prisma.field.findFirst({
    where: {
      tableId: table.id,
      OR: [...(FIELD_ID_PATTERN.test(fieldRef) ? [{ id: fieldRef }] : []), { nameKey: nameKey(fieldRef) }],
    },
    select: { id: true, type: true },
  });
  if (!field) {
    return {
      kind: 'refused',
      message: `field-id: no field ${JSON.stringify(fieldRef)} in table ${tableRef}`,
    };
  }
  if (field.type !== 'attachments') {
    return {
      kind: 'refused',
      message: `field-id: field ${JSON.stringify(fieldRef)} is a ${field.type} field, not an attachments field`,
    };
  }
  return { kind: 'found', target: { databaseId, tableId: table.id, fieldId: field.id } };
}

export interface StoredFile {
  key: string;
  kind: UploadKind;
  target: AttachmentTarget | null;
  fileName: string;
  size: number;
  mimeType: string;
  sha256: string;
  apiKeyId: string | null;
}

/** The operator's bound on the bytes of one database's files (STORAGE_QUOTA_BYTES_PER_DATABASE). */
export const quotaExceeded = (quota: number) =>
  new AppError(
    'PAYLOAD_TOO_LARGE',
    `The file is not kept: this database's files would exceed its storage quota of ${quota} bytes`,
  );

/**
 * The bytes a database's files take now: every attachment row of it, those of deleted records
 * included until the orphan sweeper removes them.
 */
export async function storedBytesOf(prisma: PrismaClient | Tx, databaseId: string): Promise<number> {
  const total = await prisma.uploadedFile.aggregate({ where: { databaseId }, _sum: { size: true } });
  return Number(total._sum.size ?? 0n);
}

/**
 * The file's row, once it is stored. Under a quota, an attachment is counted against its
 * database's other files under a lock per database, held from the count to the insert: of two
 * uploads finishing at once, the second counts the first, so they cannot both slip past it.
 */
export async function recordStoredFile(
  prisma: PrismaClient,
  file: StoredFile,
  quota: number | undefined,
): Promise<void> {
  const databaseId = file.target?.databaseId;
  if (quota === undefined || databaseId === undefined) {
    await insertStoredFile(prisma, file);
    return;
  }
  await prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(
      'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))',
      `uploaded_files:quota:${databaseId}`,
    );
    if ((await storedBytesOf(tx, databaseId)) + file.size > quota) throw quotaExceeded(quota);
    await insertStoredFile(tx, file);
  });
}

/**
 * A file's attachments field was deleted, retyped or moved (its table or database deleted) after
 * the upload was checked against what this process knew: no row was written.
 */
export class AttachmentTargetGone extends Error {
  constructor() {
    super('the attachments field the upload named is gone');
  }
}

/**
 * Inserts the file's row; an attachment's only while its field is still an attachments field of
 * that table and database, checked in the same statement, so a schema change that the checks
 * before the body did not see yet (its notification still on its way) cannot leave a row behind.
 */
async function insertStoredFile(prisma: PrismaClient | Tx, file: StoredFile): Promise<void> {
  const target = file.target;
  const row = [
    randomUUID(),
    file.key,
    file.kind,
    target?.databaseId ?? null,
    target?.tableId ?? null,
    target?.fieldId ?? null,
    file.fileName,
    file.size,
    file.mimeType,
    file.sha256,
    file.apiKeyId,
  ];
  const inserted = await prisma.$executeRawUnsafe(
    `INSERT INTO uploaded_files
            (id, key, kind, database_id, table_id, field_id, file_name, size, mime_type, sha256, api_key_id)
     SELECT $1::uuid, $2, $3, $4::uuid, $5, $6, $7, $8::bigint, $9, $10, $11::uuid
      WHERE $6::text IS NULL
         OR EXISTS (SELECT 1 FROM fields f JOIN tables t ON t.id = f.table_id
                     WHERE f.id = $6 AND f.type = 'attachments' AND t.id = $5 AND t.database_id = $4::uuid)`,
    ...row,
  );
  if (inserted === 0) throw new AttachmentTargetGone();
}

export async function findStoredFile(prisma: PrismaClient, key: string) {
  return prisma.uploadedFile.findUnique({ where: { key } });
}
export type StoredFileRow = NonNullable<Awaited<ReturnType<typeof findStoredFile>>>;

/**
 * Who may download a file: an attachment is a record value, so a key that reads records of its
 * database; a file uploaded for import belongs to the key that uploaded it (and the root key).
 */
export function mayDownload(principal: Principal, file: StoredFileRow): boolean {
  if (file.kind === 'attachment') {
    const database = file.databaseId;
    return (
      database !== null &&
      principal.scopes.has('records:read' satisfies ApiKeyScope) &&
      canAccessDatabase(principal, database)
    );
  }
  return principal.keyId === null || principal.keyId === file.apiKeyId;
}
