import { randomUUID } from 'node:crypto';
import type { ApiKeyScope } from '@recordbase/contracts/api-keys';
import { FIELD_ID_PATTERN, TABLE_ID_PATTERN } from '@recordbase/contracts/common';
import type { PrismaClient, Tx } from '@recordbase/db';
import { canAccessDatabase, type Principal } from '@recordbase/server-kit/auth';
import { AppError, badRequest } from '@recordbase/server-kit/errors';
import type { UploadKind } from '../uploads/storage-keys';

/** The rows of uploaded_files: what each stored file is, whose, and for which field. */

export interface AttachmentTarget {
  databaseId: string;
  tableId: string;
  fieldId: string;
}

const nameKey = (name: string) => name.trim().toLowerCase();

/**
 * The attachments field the `table-id` and `field-id` headers name (by id or by name, as everywhere
 * in the API), or a 400 saying which header names nothing suitable.
 */
export async function findAttachmentTarget(
  prisma: PrismaClient,
  databaseId: string,
  tableRef: string,
  fieldRef: string,
): Promise<AttachmentTarget> {
  const table = await prisma.table.findFirst({
    where: {
      databaseId,
      OR: [...(TABLE_ID_PATTERN.test(tableRef) ? [{ id: tableRef }] : []), { nameKey: nameKey(tableRef) }],
    },
    select: { id: true },
  });
  if (!table) throw badRequest(`table-id: no table ${JSON.stringify(tableRef)} in this database`);
  const field = await prisma.field.findFirst({
    where: {
      tableId: table.id,
      OR: [...(FIELD_ID_PATTERN.test(fieldRef) ? [{ id: fieldRef }] : []), { nameKey: nameKey(fieldRef) }],
    },
    select: { id: true, type: true },
  });
  if (!field) throw badRequest(`field-id: no field ${JSON.stringify(fieldRef)} in table ${tableRef}`);
  if (field.type !== 'attachments') {
    throw badRequest(
      `field-id: field ${JSON.stringify(fieldRef)} is a ${field.type} field, not an attachments field`,
    );
  }
  return { databaseId, tableId: table.id, fieldId: field.id };
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

async function insertStoredFile(prisma: PrismaClient | Tx, file: StoredFile): Promise<void> {
  await prisma.uploadedFile.create({
    data: {
      id: randomUUID(),
      key: file.key,
      kind: file.kind,
      databaseId: file.target?.databaseId ?? null,
      tableId: file.target?.tableId ?? null,
      fieldId: file.target?.fieldId ?? null,
      fileName: file.fileName,
      size: BigInt(file.size),
      mimeType: file.mimeType,
      sha256: file.sha256,
      apiKeyId: file.apiKeyId,
    },
  });
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
