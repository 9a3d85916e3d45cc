import { DomainError } from '@recordbase/contracts/domain-errors';
import {
  attachmentUploadHeaders,
  MAX_ATTACHMENT_BYTES,
  MAX_IMPORT_FILE_BYTES,
  UPLOAD_FORM_FIELD,
  uploadRoutes,
} from '@recordbase/contracts/uploads';
import type { PrismaClient } from '@recordbase/db';
import { accessibleDatabaseId, requireScope } from '@recordbase/domain/access-policy';
import { principalOf } from '@recordbase/server-kit/auth';
import { AppError, badRequest } from '@recordbase/server-kit/errors';
import { noQueryParameters, parseRequestPart } from '@recordbase/server-kit/validate';
import type { ObjectStorage } from '@recordbase/storage';
import { type Request, type RequestHandler, Router } from 'express';
import multer, { MulterError } from 'multer';
import { AttachmentTargetGone, quotaExceeded, recordStoredFile } from '../files/file-records';
import type { UploadLookups } from '../files/upload-lookups';
import { FRAMING_BYTES, type SettleUploadCharge } from './bandwidth';
import { judgeAttachment, judgeCsv, judgeXlsx } from './content';
import {
  PayloadTooLargeWhileStreaming,
  planOf,
  type StoredUpload,
  streamingEngine,
  type UploadPlan,
} from './streaming-engine';

/**
 * The three upload routes: multipart/form-data with the file in the
 * form field `filepond`. Everything that can be checked before the body is read is (the key's
 * scope, the attachment headers, the database, the declared length), then the file streams into
 * storage, is judged by its bytes, and gets its row in uploaded_files.
 */

export interface UploadDeps {
  prisma: PrismaClient;
  /** The attachment targets and stored bytes an upload is checked against before its body. */
  lookups: UploadLookups;
  storage: ObjectStorage;
  /** The public address of this service, for the url answered; from the request when unset. */
  publicUrl: string | undefined;
  /** The most bytes one database's files may take (STORAGE_QUOTA_BYTES_PER_DATABASE); unset: no bound. */
  storageQuota: number | undefined;
  /** Charges an upload against its key's bytes (bandwidth.ts), or refuses it with a 429. */
  chargeUpload: (
    keyId: string | null,
    declaredBytes: number | undefined,
    largestBody: number,
  ) => Promise<SettleUploadCharge | undefined>;
}

const MB = 1024 * 1024;

interface RouteSpec {
  path: string;
  maxBytes: number;
  plan: (req: Request, deps: UploadDeps) => Promise<UploadPlan>;
}

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** The attachment route's headers name an attachments field of a database the key may reach. */
async function attachmentPlan(req: Request, deps: UploadDeps): Promise<UploadPlan> {
  const names = Object.values(attachmentUploadHeaders);
  const absent = names.filter((name) => header(req, name) === undefined);
  if (absent.length > 0)
    throw badRequest(`Missing header${absent.length > 1 ? 's' : ''}: ${absent.join(', ')}`);
  const databaseRef = header(req, attachmentUploadHeaders.databaseId)!;
  const tableRef = header(req, attachmentUploadHeaders.tableId)!;
  const fieldRef = header(req, attachmentUploadHeaders.fieldId)!;
  for (const [name, value] of [
    [attachmentUploadHeaders.tableId, tableRef],
    [attachmentUploadHeaders.fieldId, fieldRef],
  ] as const) {
    if (value.length > 255) throw badRequest(`${name}: must be at most 255 characters`);
  }
  const databaseId = accessibleDatabaseId(principalOf(req.res!), databaseRef);
  const target = await deps.lookups.attachmentTarget(databaseId, tableRef, fieldRef, databaseRef);
  const quotaRoom = await roomUnderQuota(req, deps, databaseId);
  return { kind: 'attachment', databaseId, target, judge: judgeAttachment, quotaRoom };
}

/**
 * What is left of the database's quota at most, or a 413 when the declared upload cannot fit
 * (exact: the figure counted is a lower bound, see upload-lookups.ts); the count that decides is
 * made again, under a lock, once the file is stored (recordStoredFile), since other uploads may
 * finish first. Undefined without a quota.
 */
async function roomUnderQuota(req: Request, deps: UploadDeps, databaseId: string) {
  const quota = deps.storageQuota;
  if (quota === undefined) return undefined;
  const declared = Number(req.headers['content-length']);
  const room = quota - (await deps.lookups.storedBytesAtLeast(databaseId));
  if (room <= 0 || (Number.isFinite(declared) && declared > room + FRAMING_BYTES)) {
    throw quotaExceeded(quota);
  }
  return room;
}

const routes: RouteSpec[] = [
  { path: uploadRoutes.attachment, maxBytes: MAX_ATTACHMENT_BYTES, plan: attachmentPlan },
  {
    path: uploadRoutes.csv,
    maxBytes: MAX_IMPORT_FILE_BYTES,
    plan: async () => ({ kind: 'import', judge: judgeCsv }),
  },
  {
    path: uploadRoutes.xlsx,
    maxBytes: MAX_IMPORT_FILE_BYTES,
    plan: async () => ({ kind: 'import', judge: judgeXlsx }),
  },
];

const tooLarge = (spec: RouteSpec) =>
  new AppError(
    'PAYLOAD_TOO_LARGE',
    `The file is larger than ${spec.maxBytes / MB} MB, the limit of ${spec.path}`,
  );

/** Multer's and busboy's refusals, worded for the client. */
function uploadError(error: unknown, spec: RouteSpec): unknown {
  if (error instanceof AppError || error instanceof DomainError) return error;
  if (error instanceof PayloadTooLargeWhileStreaming) return tooLarge(spec);
  if (error instanceof MulterError) {
    switch (error.code) {
      case 'LIMIT_FILE_SIZE':
        return tooLarge(spec);
      case 'LIMIT_UNEXPECTED_FILE':
      case 'LIMIT_FILE_COUNT':
        return badRequest(
          error.field === UPLOAD_FORM_FIELD
            ? `Send one file only, in the form field ${UPLOAD_FORM_FIELD}`
            : `Unexpected file in the form field ${JSON.stringify(error.field)}; send the file in ${UPLOAD_FORM_FIELD}`,
        );
      default:
        return badRequest(`Malformed upload: ${error.message}`);
    }
  }
  // Anything else multer passes on is busboy failing to read the multipart body.
  return badRequest(`Malformed multipart body: ${error instanceof Error ? error.message : String(error)}`);
}

function beforeTheBody(spec: RouteSpec, deps: UploadDeps): RequestHandler {
  return async (req, res, next) => {
    requireScope(principalOf(res), 'files:write');
    // The upload's settings are headers; a query parameter is a mistake, refused before the body.
    parseRequestPart(noQueryParameters, req.query, 'query');
    if (!req.is('multipart/form-data')) {
      throw new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        `Send multipart/form-data with the file in the form field ${UPLOAD_FORM_FIELD}`,
      );
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > spec.maxBytes + FRAMING_BYTES) throw tooLarge(spec);
    // Before anything is looked up for it: a key past its bytes costs nothing more.
    res.locals.settleUploadCharge = await deps.chargeUpload(
      principalOf(res).keyId,
      Number.isFinite(declared) ? declared : undefined,
      spec.maxBytes + FRAMING_BYTES,
    );
    res.locals.upload = await spec.plan(req, deps);
    next();
  };
}

const isSizeLimit = (error: unknown) =>
  error instanceof PayloadTooLargeWhileStreaming ||
  (error instanceof MulterError && error.code === 'LIMIT_FILE_SIZE');

function receiveFile(spec: RouteSpec, deps: UploadDeps): RequestHandler {
  const storage = streamingEngine(deps.storage);
  const receiver = (fileSize: number) =>
    multer({
      storage,
      // Browsers send file names as UTF-8; busboy would read them as Latin-1.
      defParamCharset: 'utf8',
      limits: {
        fileSize,
        files: 1,
        fields: 8,
        parts: 10,
        fieldSize: 64 * 1024,
        headerPairs: 50,
      },
    }).single(UPLOAD_FORM_FIELD);
  const upload = receiver(spec.maxBytes);
  return (req, res, next) => {
    const room = planOf(req).quotaRoom;
    if (room === undefined || room >= spec.maxBytes) {
      upload(req, res, (error?: unknown) => next(error ? uploadError(error, spec) : undefined));
      return;
    }
    // A file larger than what is left of the quota could never be kept: stopped there, not
    // stored whole first.
    receiver(room)(req, res, (error?: unknown) =>
      next(
        error
          ? isSizeLimit(error)
            ? quotaExceeded(deps.storageQuota!)
            : uploadError(error, spec)
          : undefined,
      ),
    );
  };
}

function publicBase(req: Request, deps: UploadDeps): string {
  let base = deps.publicUrl ?? `${req.protocol}://${req.get('host')}`;
  // A loop, not /\/+$/: that pattern is quadratic over a run of slashes.
  while (base.endsWith('/')) base = base.slice(0, -1);
  return base;
}

/**
 * The refusal for an upload whose field a schema change took away while its file was sent: what
 * the headers name now (no database, no such field, not an attachments field), else a field of
 * that name made anew meanwhile, which the client may send the file to again.
 */
async function targetGoneRefusal(req: Request, deps: UploadDeps): Promise<Error> {
  deps.lookups.forgetTargets();
  try {
    await attachmentPlan(req, deps);
  } catch (error) {
    if (error instanceof AppError || error instanceof DomainError) return error;
    throw error;
  }
  return badRequest('field-id: the field was changed while the file was sent; send the file again');
}

function answer(deps: UploadDeps): RequestHandler {
  return async (req, res) => {
    const file = req.file as (Express.Multer.File & StoredUpload) | undefined;
    if (!file) throw badRequest(`No file in the form field ${UPLOAD_FORM_FIELD}`);
    const plan = res.locals.upload as UploadPlan;
    const fileName = file.originalname;
    try {
      await recordStoredFile(
        deps.prisma,
        {
          key: file.key,
          kind: plan.kind,
          target: plan.target ?? null,
          fileName,
          size: file.size,
          mimeType: file.mimeType,
          sha256: file.sha256,
          apiKeyId: principalOf(res).keyId,
        },
        deps.storageQuota,
      );
    } catch (error) {
      await deps.storage.delete(file.key).catch(() => {});
      if (error instanceof AttachmentTargetGone) throw await targetGoneRefusal(req, deps);
      throw error;
    } finally {
      // Counted under the lock: the next upload there reads the figure that count saw.
      if (plan.target && deps.storageQuota !== undefined)
        deps.lookups.forgetStoredBytes(plan.target.databaseId);
    }
    (res.locals.settleUploadCharge as SettleUploadCharge | undefined)?.(file.size);
    const url = `${publicBase(req, deps)}${uploadRoutes.files}/${file.key}`;
    res
      .status(201)
      .json(
        plan.kind === 'attachment'
          ? { url, fileName, size: file.size, mimeType: file.mimeType }
          : { url, fileName, s3Key: file.key },
      );
  };
}

export function uploadRouter(deps: UploadDeps): Router {
  const router = Router();
  for (const spec of routes) {
    router.post(spec.path, beforeTheBody(spec, deps), receiveFile(spec, deps), answer(deps));
  }
  return router;
}
