import { attachmentUploadHeaders } from '@recordbase/contracts/uploads';
import cors from 'cors';
import type { RequestHandler } from 'express';
import type { CorsOrigins } from './config';

/**
 * CORS for the upload and file routes, which FilePond widgets on other sites call from the
 * browser. It must run before authentication: a preflight carries no Authorization, and an error
 * answer (401, 400, 413...) without the headers would be hidden from the widget by the browser.
 * No credentials mode: the key travels in the Authorization header, never in a cookie.
 */

/** How long a browser may reuse a preflight's answer. */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

const allowedMethods = ['POST', 'GET', 'HEAD', 'OPTIONS'];
const allowedHeaders = [
  'Authorization',
  'Content-Type',
  ...Object.values(attachmentUploadHeaders),
  // A player or PDF viewer seeking in a download, and a revalidation.
  'Range',
  'If-None-Match',
];
/** What the page's script may read besides the safelisted headers. */
const exposedHeaders = [
  'Content-Disposition',
  'Content-Range',
  'Content-Length',
  'ETag',
  'Accept-Ranges',
  'RateLimit-Policy',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  // The gateway's request id, for a support request about a failed upload.
  'X-Request-Id',
];

export function crossOrigin(origins: CorsOrigins): RequestHandler {
  const anyOrigin = origins === '*';
  const allowed = new Set<string>(anyOrigin ? [] : origins);
  // To cors, a string is the one origin to answer (with Vary: Origin), '*' any, and false means
  // adding no header at all.
  const answerFor = (requestOrigin: string | undefined): string | false => {
    if (anyOrigin) return '*';
    return requestOrigin !== undefined && allowed.has(requestOrigin) ? requestOrigin : false;
  };
  const withHeaders = cors({
    origin: (requestOrigin, decide) => decide(null, answerFor(requestOrigin)),
    methods: allowedMethods,
    allowedHeaders,
    exposedHeaders,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    optionsSuccessStatus: 204,
  });
  return (req, res, next) => {
    // The answer depends on the Origin whenever some origins are allowed and others not, so
    // caches must keep them apart even when this one gets no CORS headers.
    if (allowed.size > 0) res.vary('Origin');
    withHeaders(req, res, (error?: unknown) => {
      if (error) return next(error);
      // Only a disallowed origin gets here with OPTIONS (cors ends an allowed preflight itself).
      // No route serves OPTIONS; answering it here keeps a preflight, which never carries a key,
      // from counting as a failed authentication against the caller's address.
      if (req.method === 'OPTIONS') {
        res.status(204).setHeader('Content-Length', '0');
        res.end();
        return;
      }
      next();
    });
  };
}
