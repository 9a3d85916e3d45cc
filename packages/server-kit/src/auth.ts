import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiKeyScope } from '@recordbase/contracts/api-keys';
import { hashApiKey, type PrismaClient } from '@recordbase/db';
import type { RequestHandler, Response } from 'express';
import { forbidden, unauthorized } from './errors';

export interface Principal {
  /** null for the operator's ROOT_API_KEY. */
  keyId: string | null;
  scopes: ReadonlySet<ApiKeyScope>;
  /** null: every database, including ones created later. */
  databaseIds: ReadonlySet<string> | null;
}

const allScopes: ApiKeyScope[] = [
  'records:read',
  'records:write',
  'schema:read',
  'schema:write',
  'webhooks:manage',
  'sql:read',
  'files:write',
];

const LAST_USED_RESOLUTION_MS = 60_000;

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

export type Authenticate = (authorization: string | undefined) => Promise<Principal>;

/**
 * Resolves a bearer key to a principal on every request, with no cache, so a revoked key stops
 * working at once. Keys are looked up by their SHA-256; the plain key is never stored.
 */
export function createAuthenticator(deps: {
  prisma: PrismaClient;
  rootApiKey: string | undefined;
}): Authenticate {
  const rootDigest = deps.rootApiKey ? sha256(deps.rootApiKey) : null;
  return async (authorization) => {
    const token = bearerToken(authorization);
    if (!token || token.length > 256) throw unauthorized();
    if (rootDigest && timingSafeEqual(sha256(token), rootDigest)) {
      return { keyId: null, scopes: new Set(allScopes), databaseIds: null };
    }
    const key = await deps.prisma.apiKey.findUnique({ where: { hash: hashApiKey(token) } });
    if (!key) throw unauthorized();
    if (!key.lastUsedAt || Date.now() - key.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      // Bookkeeping only: a failure here must not fail the request.
      deps.prisma.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: new Date() } }).catch(() => {});
    }
    return {
      keyId: key.id,
      scopes: new Set(key.scopes as ApiKeyScope[]),
      databaseIds: key.allDatabases ? null : new Set(key.databaseIds),
    };
  };
}

export function authMiddleware(authenticate: Authenticate): RequestHandler {
  return async (req, res, next) => {
    res.locals.principal = await authenticate(req.headers.authorization);
    next();
  };
}

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw unauthorized();
  return principal;
}

export function requireScope(principal: Principal, scope: ApiKeyScope): void {
  if (!principal.scopes.has(scope)) throw forbidden(`This API key lacks the "${scope}" scope`);
}

export function isRoot(principal: Principal): boolean {
  return principal.keyId === null;
}

export function canAccessDatabase(principal: Principal, databaseId: string): boolean {
  return principal.databaseIds === null || principal.databaseIds.has(databaseId);
}
