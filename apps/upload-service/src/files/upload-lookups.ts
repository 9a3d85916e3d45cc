import { createNotifiedCache, notifyStatement, type PrismaClient, SCHEMA_CHANNEL } from '@recordbase/db';
import { databaseNotFound } from '@recordbase/domain/access-policy';
import { badRequest } from '@recordbase/server-kit/errors';
import type { Logger } from '@recordbase/server-kit/logger';
import type pg from 'pg';
import {
  type AttachmentTarget,
  findAttachmentTarget,
  storedBytesOf,
  type TargetLookup,
} from './file-records';

/**
 * Channel the orphan sweeper NOTIFYs on from the transaction that deletes files' rows: the only
 * way a database's stored bytes go down (a deleted database goes with its schema notification).
 */
export const FILES_FREED_CHANNEL = 'recordbase_files_freed';
export const notifyFilesFreed = notifyStatement(FILES_FREED_CHANNEL);

/** Attachment targets and stored-bytes figures remembered per process, oldest forgotten first. */
const MAX_KEPT = 10_000;

/**
 * What an upload needs to know before its body is read, kept per process so that a client sending
 * the same upload again and again (a full database's, refused each time) costs no query:
 *
 * - the attachments field its headers name, or why they name none, until a schema change;
 * - what its database's files take. Between two notifications of freed files that figure only
 *   grows, so any figure read is a lower bound of the current one: a refusal it gives is exact,
 *   and the room it leaves is checked again, exactly and under a lock, once the file is stored.
 *
 * Kept only while this process LISTENs on both channels (db's notified-cache.ts).
 */
export interface UploadLookups {
  /** `databaseRef` is the database as the request wrote it, for the 404's message. */
  attachmentTarget(
    databaseId: string,
    tableRef: string,
    fieldRef: string,
    databaseRef: string,
  ): Promise<AttachmentTarget>;
  storedBytesAtLeast(databaseId: string): Promise<number>;
  /** After this process stored a file there (or found no room under the lock): read it again. */
  forgetStoredBytes(databaseId: string): void;
  /** After a file's row found its field gone: a schema change is on its way; read targets again. */
  forgetTargets(): void;
  /** Whether anything is kept now (see NotifiedCache.listening). */
  listening(): boolean;
  close(): Promise<void>;
}

type Kept = TargetLookup | { kind: 'stored bytes'; bytes: number };

// Header values cannot hold a NUL: the parts of a key never run into each other.
const targetKey = (databaseId: string, tableRef: string, fieldRef: string) =>
  `target\0${databaseId}\0${tableRef}\0${fieldRef}`;
const bytesKey = (databaseId: string) => `bytes\0${databaseId}`;

export function createUploadLookups(options: {
  prisma: PrismaClient;
  pool: pg.Pool;
  logger: Logger;
}): UploadLookups {
  const { prisma } = options;
  const kept = createNotifiedCache<Kept>({
    pool: options.pool,
    channels: [SCHEMA_CHANNEL, FILES_FREED_CHANNEL],
    logger: options.logger,
    maxEntries: MAX_KEPT,
  });
  return {
    async attachmentTarget(databaseId, tableRef, fieldRef, databaseRef) {
      const { value } = await kept.get(targetKey(databaseId, tableRef, fieldRef), () =>
        findAttachmentTarget(prisma, databaseId, tableRef, fieldRef),
      );
      switch (value.kind) {
        case 'found':
          return value.target;
        case 'no database':
          throw databaseNotFound(databaseRef);
        case 'refused':
          throw badRequest(value.message);
        default:
          throw new Error(`a stored-bytes figure kept under a target's key: ${value.kind}`);
      }
    },
    async storedBytesAtLeast(databaseId) {
      const { value } = await kept.get(bytesKey(databaseId), async () => ({
        kind: 'stored bytes',
        bytes: await storedBytesOf(prisma, databaseId),
      }));
      if (value.kind !== 'stored bytes')
        throw new Error(`a target kept under a stored-bytes key: ${value.kind}`);
      return value.bytes;
    },
    forgetStoredBytes(databaseId) {
      kept.drop(bytesKey(databaseId));
    },
    forgetTargets: () => kept.clear(),
    listening: () => kept.listening(),
    close: () => kept.close(),
  };
}
