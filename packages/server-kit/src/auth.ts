import { createHash, timingSafeEqual } from 'node:crypto';
import {
  type ApiKeyScope,
  apiKeyScopes as allScopes,
  type Principal,
  ROOT_KEY_NAME,
} from '@recordbase/contracts/api-keys';
import { UUID_PATTERN } from '@recordbase/contracts/common';
import {
  API_KEYS_CHANNEL,
  createNotifiedCache,
  type Db,
  hashApiKey,
  isWellFormedApiKey,
  type NotifiedCache,
  type PrismaClient,
} from '@recordbase/db';
import type { RequestHandler, Response } from 'express';
import type { AuthThrottle } from './auth-throttle';
import { AppError, unauthorized } from './errors';
import type { Logger } from './logger';

const LAST_USED_RESOLUTION_MS = 60_000;

/** The one form a request names its key in: every 401 about the header's form says it. */
const AUTHORIZATION_FORM = 'Authorization: Bearer <API key>';

/** Schemes named back to the caller in our own spelling: the header's own bytes are never echoed. */
const KNOWN_SCHEMES: ReadonlyMap<string, string> = new Map(
  ['Basic', 'Digest', 'Token', 'Negotiate', 'NTLM', 'DPoP'].map((scheme) => [scheme.toLowerCase(), scheme]),
);

/**
 * The key of an `Authorization: Bearer <key>` header, or why the header is not of that form. The
 * reason never quotes the header, whose words may be the key itself.
 */
export function readBearer(header: string | undefined): { token: string } | { problem: string } {
  const expected = `send "${AUTHORIZATION_FORM}"`;
  if (header === undefined || header.trim() === '') {
    return { problem: `Missing Authorization header; ${expected}` };
  }
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  if (match?.[1]) return { token: match[1] };
  const words = header.trim().split(/\s+/);
  const scheme = words[0]!;
  if (scheme.toLowerCase() === 'bearer') {
    if (words.length === 1) {
      return { problem: `The Authorization header has no API key after "Bearer"; ${expected}` };
    }
    return words.length === 2
      ? { problem: `The Authorization header must be "Bearer", one space, then the API key; ${expected}` }
      : { problem: `The Authorization header holds more than one word after "Bearer"; ${expected}` };
  }
  if (words.length === 1) {
    return { problem: `The Authorization header lacks the "Bearer " before the API key; ${expected}` };
  }
  const known = KNOWN_SCHEMES.get(scheme.toLowerCase());
  return {
    problem: `The Authorization header uses ${known ? `the ${known} scheme` : 'a scheme other than Bearer'}; ${expected}`,
  };
}

export function bearerToken(header: string | undefined): string | null {
  const read = readBearer(header);
  return 'token' in read ? read.token : null;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

export type Authenticate = (authorization: string | undefined) => Promise<Principal>;

/** What authentication keeps of a key, by the key's SHA-256. */
export interface KnownApiKey extends ApiKeyRow {
  lastUsedAt: Date | null;
}

/** API keys kept per process, oldest forgotten first; each is a few hundred bytes. */
const MAX_KEPT_API_KEYS = 10_000;

/**
 * A service's authenticator: keys it has looked up are kept until a revocation's NOTIFY (or their
 * age bound), so a request costs no lookup of a key already seen, refusals included. The cache's
 * LISTEN connection closes with the service's database connections. `forgetKeys` is for the
 * process that revokes, whose own notification may arrive after its next request.
 */
export function createServiceAuthenticator(deps: {
  db: Pick<Db, 'prisma' | 'pool' | 'beforeClose'>;
  rootApiKey: string | undefined;
  logger: Logger;
}): { authenticate: Authenticate; forgetKeys: () => void } {
  const keys = createNotifiedCache<KnownApiKey | null>({
    pool: deps.db.pool,
    channels: [API_KEYS_CHANNEL],
    logger: deps.logger,
    maxEntries: MAX_KEPT_API_KEYS,
    keep: (key) => key !== null,
  });
  deps.db.beforeClose(() => keys.close());
  return {
    authenticate: createAuthenticator({ prisma: deps.db.prisma, rootApiKey: deps.rootApiKey, keys }),
    forgetKeys: keys.clear,
  };
}

/** A header of the right form whose key is no key: unknown, revoked, or mistyped. */
const INVALID_KEY = 'Invalid API key: it is unknown or was revoked';

/**
 * Resolves a bearer key to a principal. Keys are looked up by their SHA-256; the plain key is
 * never stored. With `keys` (a cache dropped by every revocation's NOTIFY, see notified-cache.ts)
 * a known key costs no lookup; without it every request reads the key. Either way a revoked key
 * stops working once the revocation commits: at once on the process that revoked it, and on the
 * others as soon as the notification reaches them, or, should a lost connection keep it from them
 * unnoticed, once what they kept is a minute old (MAX_ENTRY_AGE_MS). Unknown keys are never kept.
 */
export function createAuthenticator(deps: {
  prisma: PrismaClient;
  rootApiKey: string | undefined;
  keys?: NotifiedCache<KnownApiKey | null>;
}): Authenticate {
  const rootDigest = deps.rootApiKey ? sha256(deps.rootApiKey) : null;
  const lookup = (hash: string): Promise<KnownApiKey | null> =>
    deps.prisma.apiKey.findUnique({
      where: { hash },
      select: { id: true, name: true, scopes: true, allDatabases: true, databaseIds: true, lastUsedAt: true },
    });
  return async (authorization) => {
    const read = readBearer(authorization);
    if ('problem' in read) throw unauthorized(read.problem);
    const { token } = read;
    if (token.length > 256) throw unauthorized(INVALID_KEY);
    if (rootDigest && timingSafeEqual(sha256(token), rootDigest)) {
      return rootPrincipal();
    }
    if (!isWellFormedApiKey(token)) throw unauthorized(INVALID_KEY);
    const hash = hashApiKey(token);
    const key = deps.keys ? (await deps.keys.get(hash, () => lookup(hash))).value : await lookup(hash);
    if (!key) throw unauthorized(INVALID_KEY);
    if (!key.lastUsedAt || Date.now() - key.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      // Kept keys remember it too, so the bookkeeping stays once a minute per process.
      key.lastUsedAt = new Date();
      // Bookkeeping only: a failure here must not fail the request.
      deps.prisma.apiKey
        .update({ where: { id: key.id }, data: { lastUsedAt: key.lastUsedAt } })
        .catch(() => {});
    }
    return principalOfKey(key);
  };
}

type ApiKeyRow = { id: string; name: string; scopes: string[]; allDatabases: boolean; databaseIds: string[] };

const rootPrincipal = (): Principal => ({
  keyId: null,
  keyName: ROOT_KEY_NAME,
  scopes: new Set(allScopes),
  databaseIds: null,
});

function principalOfKey(key: ApiKeyRow): Principal {
  return {
    keyId: key.id,
    keyName: key.name,
    scopes: new Set(key.scopes as ApiKeyScope[]),
    databaseIds: key.allDatabases ? null : new Set(key.databaseIds),
  };
}

/**
 * The principal of a key known by id (null: the root key), as it stands now: null when the key
 * was revoked, or for the root key when none is configured. For credentials that name a key
 * rather than carry it, such as signed file links.
 */
export async function principalByKeyId(
  deps: { prisma: PrismaClient; rootApiKey: string | undefined },
  keyId: string | null,
): Promise<Principal | null> {
  if (keyId === null) return deps.rootApiKey ? rootPrincipal() : null;
  if (!UUID_PATTERN.test(keyId)) return null;
  const key = await deps.prisma.apiKey.findUnique({ where: { id: keyId } });
  return key ? principalOfKey(key) : null;
}

/**
 * Authenticates every request. With a throttle, an address that keeps failing is answered 429
 * before its next attempt costs a lookup.
 */
export function authMiddleware(authenticate: Authenticate, throttle?: AuthThrottle): RequestHandler {
  return async (req, res, next) => {
    // Already authenticated by a credential a route of its own accepts (a change stream's token).
    if (res.locals.principal !== undefined) {
      next();
      return;
    }
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const waitMs = throttle?.retryAfterMs(address) ?? 0;
    if (waitMs > 0) {
      const retryAfter = String(Math.ceil(waitMs / 1000));
      throw new AppError(
        'RATE_LIMITED',
        `Too many failed authentications from this address; retry after ${retryAfter} s`,
        { 'Retry-After': retryAfter },
      );
    }
    try {
      res.locals.principal = await authenticate(req.headers.authorization);
    } catch (error) {
      if (error instanceof AppError && error.code === 'UNAUTHORIZED') throttle?.recordFailure(address);
      throw error;
    }
    next();
  };
}

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw unauthorized();
  return principal;
}
