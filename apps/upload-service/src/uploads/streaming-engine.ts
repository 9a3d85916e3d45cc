import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { identifierSchema, MAX_NAME_LENGTH } from '@recordbase/contracts/common';
import { AppError, badRequest } from '@recordbase/server-kit/errors';
import type { ObjectStorage } from '@recordbase/storage';
import type { Request } from 'express';
import type { StorageEngine } from 'multer';
import type { AttachmentTarget } from '../files/file-records';
import type { Judgement } from '../sniff';
import { type ContentVerdict, createContentInspector, type DeclaredFile } from './content';
import { newStorageKey, type UploadKind } from './storage-keys';

/**
 * A multer storage engine that streams each file straight into object storage, hashing it and
 * sampling its bytes on the way, so that no upload is ever held whole in memory. Once stored, the
 * file's type is judged from those bytes; a refused file is deleted before the answer.
 */

/** What the route decided before the body was read: set on `res.locals.upload`. */
export interface UploadPlan {
  kind: UploadKind;
  /** For attachments: the database, table and field the file is for. */
  databaseId?: string;
  target?: AttachmentTarget;
  /** Bytes left of the database's storage quota when the upload began; undefined without one. */
  quotaRoom?: number;
  /** Judges the file from its declared type and name and what its bytes are. */
  judge: (file: DeclaredFile, content: ContentVerdict) => Judgement;
}

/** What the engine adds to multer's file object. */
export interface StoredUpload {
  key: string;
  size: number;
  sha256: string;
  mimeType: string;
  /** Multer's cleanup after an aborted request only removes files with a path. */
  path: string;
}

export class PayloadTooLargeWhileStreaming extends Error {}

export function planOf(req: Request): UploadPlan {
  const plan = req.res?.locals.upload as UploadPlan | undefined;
  if (!plan) throw new Error('upload route without a plan');
  return plan;
}

/** The original name is kept as data: it must be storable text of a reasonable length. */
function fileNameProblem(name: string): string | null {
  const parsed = fileNameSchema.safeParse(name);
  return parsed.success ? null : (parsed.error.issues[0]?.message ?? 'is not acceptable');
}

const fileNameSchema = identifierSchema(MAX_NAME_LENGTH).min(1, { error: 'must not be empty' });

export function streamingEngine(storage: ObjectStorage): StorageEngine {
  return {
    _handleFile(req, file, callback) {
      const plan = planOf(req);
      const nameProblem = fileNameProblem(file.originalname);
      if (nameProblem) {
        file.stream.resume();
        callback(badRequest(`filepond: the file name ${nameProblem}`));
        return;
      }
      const key = newStorageKey(plan.kind, file.originalname, plan.databaseId);
      const hash = createHash('sha256');
      const inspector = createContentInspector();
      const tap = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          hash.update(chunk);
          inspector.push(chunk);
          done(null, chunk);
        },
      });
      // Past the size limit busboy truncates the stream; the put must fail, not store a part.
      file.stream.on('limit', () => tap.destroy(new PayloadTooLargeWhileStreaming()));
      file.stream.on('error', (error) => tap.destroy(error));
      file.stream.pipe(tap);
      const refuse = async (error: Error) => {
        await storage.delete(key).catch(() => {});
        callback(error);
      };
      storage
        .put(key, tap, 'application/octet-stream')
        .then(async ({ size }) => {
          if (size === 0) return refuse(badRequest('filepond: the file is empty'));
          const verdict = plan.judge(
            { declaredType: file.mimetype, fileName: file.originalname },
            inspector.finish(),
          );
          if (!verdict.ok) return refuse(badRequest(`filepond: ${verdict.reason}`));
          const stored: StoredUpload = {
            key,
            size,
            sha256: hash.digest('hex'),
            mimeType: verdict.mimeType,
            path: key,
          };
          callback(null, stored);
        })
        .catch((error: unknown) => {
          if (error instanceof PayloadTooLargeWhileStreaming) return callback(error);
          // Storage that fails mid-way is not the client's fault; a full disk (or quota) is said
          // so, for the operator reading the client's report.
          const code = (error as { code?: unknown }).code;
          const full = code === 'ENOSPC' || code === 'EDQUOT';
          callback(
            new AppError(
              'SERVICE_UNAVAILABLE',
              full ? 'File storage is full; retry later' : 'File storage is unavailable; retry later',
              { 'Retry-After': full ? '60' : '5' },
            ),
          );
        });
    },
    _removeFile(_req, file, callback) {
      const key = (file as Partial<StoredUpload>).key;
      if (!key) return callback(null);
      storage.delete(key).then(
        () => callback(null),
        (error: Error) => callback(error),
      );
    },
  };
}
