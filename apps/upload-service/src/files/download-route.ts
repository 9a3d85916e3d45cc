import type { Principal } from '@recordbase/contracts/api-keys';
import type { PrismaClient } from '@recordbase/db';
import { principalByKeyId, principalOf } from '@recordbase/server-kit/auth';
import type { AuthThrottle } from '@recordbase/server-kit/auth-throttle';
import { AppError, notFound } from '@recordbase/server-kit/errors';
import { verifyFileToken } from '@recordbase/server-kit/file-tokens';
import { assertStorageKey, type ObjectStorage, StorageNotFoundError } from '@recordbase/storage';
import { create as contentDisposition } from 'content-disposition';
import type { Request, RequestHandler, Response } from 'express';
import parseRange from 'range-parser';
import { findStoredFile, mayDownload, type StoredFileRow } from './file-records';

/**
 * `GET /files/{key}`: the bytes of a stored file, to a key that may read it or to a signed link
 * (`?token=`) issued for it. Anything that cannot be shown answers the same 404, so that neither
 * keys nor links learn which files exist. Served as a download, never rendered by the browser in
 * our origin, with ETag and byte ranges so that a player or a PDF viewer can seek.
 */

export interface DownloadDeps {
  prisma: PrismaClient;
  storage: ObjectStorage;
  rootApiKey: string | undefined;
  fileTokenSecret: string;
  /** The per-key rate limit, for signed links: counted against the key a link was issued to. */
  rateLimit: RequestHandler;
  /** Failed authentications per client address: a refused link counts as one. */
  throttle: AuthThrottle;
}

const missing = () => notFound('File not found');

/** The key named by the path, or null when it cannot be one (a traversal attempt, say). */
function keyOf(req: Request): string | null {
  const segments = (req.params as { key?: string | string[] }).key;
  const key = Array.isArray(segments) ? segments.join('/') : segments;
  if (!key) return null;
  try {
    assertStorageKey(key);
    return key;
  } catch {
    return null;
  }
}

/**
 * The key a signed link opens `file` for, or null when it opens nothing: a token that is no JWT,
 * signed otherwise, expired, for another file, of a revoked key or of one that may not read the
 * file, or no file at all. Which of them it was is never said, so that guessing tokens or keys
 * learns nothing (not even whether a file exists).
 */
async function linkPrincipal(
  token: unknown,
  file: StoredFileRow | null,
  deps: DownloadDeps,
): Promise<Principal | null> {
  if (typeof token !== 'string' || file === null) return null;
  const verdict = verifyFileToken(deps.fileTokenSecret, token, file.key);
  if (!verdict.ok) return null;
  // The link is as good as its key, now: a revoked key's links stop working too.
  const principal = await principalByKeyId(deps, verdict.keyId);
  return principal && mayDownload(principal, file) ? principal : null;
}

/**
 * A signed link is a credential as a key is: an address whose links keep failing waits as one
 * whose keys do (the same throttle), and every failure is the one 404.
 */
async function checkLink(req: Request, res: Response, deps: DownloadDeps): Promise<void> {
  const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  const waitMs = deps.throttle.retryAfterMs(address);
  if (waitMs > 0) {
    const retryAfter = String(Math.ceil(waitMs / 1000));
    throw new AppError(
      'RATE_LIMITED',
      `Too many failed authentications from this address; retry after ${retryAfter} s`,
      { 'Retry-After': retryAfter },
    );
  }
  const key = keyOf(req);
  const file = key ? await findStoredFile(deps.prisma, key) : null;
  const principal = await linkPrincipal(req.query.token, file, deps);
  if (!principal) {
    deps.throttle.recordFailure(address);
    throw missing();
  }
  res.locals.principal = principal;
  res.locals.download = file;
}

function setFileHeaders(res: Response, file: StoredFileRow): void {
  const textual = file.mimeType.startsWith('text/') || file.mimeType === 'application/json';
  res.setHeader('Content-Type', textual ? `${file.mimeType}; charset=utf-8` : file.mimeType);
  res.setHeader('Content-Disposition', contentDisposition(file.fileName, { type: 'attachment' }));
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
  res.setHeader('Cache-Control', 'private, max-age=0, must-revalidate');
  res.setHeader('ETag', `"${file.sha256}"`);
  res.setHeader('Accept-Ranges', 'bytes');
}

/** One satisfiable range, null for the whole file, 'unsatisfiable' for a 416. */
function requestedRange(req: Request, size: number, etag: string) {
  const header = req.headers.range;
  if (!header) return null;
  // A range of a different version of the file is no good: send it all.
  const ifRange = req.headers['if-range'];
  if (ifRange !== undefined && ifRange !== etag) return null;
  const ranges = parseRange(size, header, { combine: true });
  if (ranges === -1) return 'unsatisfiable' as const;
  // Malformed, or several ranges (multipart/byteranges): the whole file is a valid answer.
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return null;
  return ranges[0]!;
}

/** A row whose bytes are gone (removed by hand, say) is as missing as no row. */
async function openStored(storage: ObjectStorage, key: string, range: { start: number; end: number } | null) {
  try {
    return await storage.get(key, range ?? undefined);
  } catch (error) {
    if (error instanceof StorageNotFoundError) throw missing();
    throw new AppError('SERVICE_UNAVAILABLE', 'File storage is unavailable; retry later', {
      'Retry-After': '5',
    });
  }
}

/**
 * The route's handlers: who asks for which file, then (for a signed link, whose key is known only
 * now) the per-key rate limit, then the file.
 */
export function downloadRoute(deps: DownloadDeps): RequestHandler[] {
  const identify: RequestHandler = async (req, res, next) => {
    if (req.query.token !== undefined) {
      await checkLink(req, res, deps);
    } else {
      // The key was authenticated (and its rate limit counted) before the route.
      const key = keyOf(req);
      res.locals.download = key ? await findStoredFile(deps.prisma, key) : null;
    }
    next();
  };
  const limitLinks: RequestHandler = (req, res, next) =>
    req.query.token === undefined ? next() : deps.rateLimit(req, res, next);
  return [identify, limitLinks, serve(deps)];
}

function serve(deps: DownloadDeps): RequestHandler {
  return async (req, res) => {
    const file = res.locals.download as StoredFileRow | null;
    const principal = principalOf(res);
    if (!file || !mayDownload(principal, file)) throw missing();
    const size = Number(file.size);
    const etag = `"${file.sha256}"`;
    if (req.headers['if-none-match'] === etag) {
      res.setHeader('ETag', etag);
      res.status(304).end();
      return;
    }
    const range = requestedRange(req, size, etag);
    if (range === 'unsatisfiable') {
      throw new AppError(
        'RANGE_NOT_SATISFIABLE',
        `The file has ${size} bytes; the range asked for is outside it`,
        {
          'Content-Range': `bytes */${size}`,
        },
      );
    }
    const body = req.method === 'HEAD' ? null : await openStored(deps.storage, file.key, range);
    // Only now, with the bytes at hand: an error answer must not carry the file's headers.
    setFileHeaders(res, file);
    if (range) {
      res.status(206);
      res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
      res.setHeader('Content-Length', String(range.end - range.start + 1));
    } else {
      res.status(200);
      res.setHeader('Content-Length', String(size));
    }
    if (!body) {
      res.end();
      return;
    }
    body.on('error', () => res.destroy());
    res.on('close', () => body.destroy());
    body.pipe(res);
  };
}
