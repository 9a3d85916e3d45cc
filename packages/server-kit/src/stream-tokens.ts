import jwt from 'jsonwebtoken';

/**
 * Tokens that open one database's change stream to a browser's EventSource, which cannot send an
 * Authorization header: JWTs (HS256) signed with FILE_TOKEN_SECRET under their own audience, so a
 * file link never opens a stream nor the reverse. A token names the API key it was issued to and
 * the database, and carries nothing else: each connection made with it reads the key as it stands
 * then (its scopes; a revoked key is 401), reaching that one database only, until it expires.
 */

const AUDIENCE = 'recordbase:changes-stream';
const ALGORITHM = 'HS256';
/** The root key has no id; its tokens name it this way. */
const ROOT_SUBJECT = 'root';

export interface StreamTokenClaims {
  /** The API key the token was issued to; null for the root key. */
  keyId: string | null;
  databaseId: string;
}

export function signStreamToken(secret: string, claims: StreamTokenClaims, ttlSeconds: number): string {
  return jwt.sign({ db: claims.databaseId }, secret, {
    algorithm: ALGORITHM,
    audience: AUDIENCE,
    subject: claims.keyId ?? ROOT_SUBJECT,
    expiresIn: ttlSeconds,
  });
}

export type StreamTokenVerdict =
  | ({ ok: true } & StreamTokenClaims)
  | { ok: false; reason: 'expired' | 'invalid' };

/** Checks signature, algorithm, audience and expiry. Never throws. */
export function verifyStreamToken(secret: string, token: string): StreamTokenVerdict {
  let payload: jwt.JwtPayload | string;
  try {
    payload = jwt.verify(token, secret, { algorithms: [ALGORITHM], audience: AUDIENCE });
  } catch (error) {
    return { ok: false, reason: error instanceof jwt.TokenExpiredError ? 'expired' : 'invalid' };
  }
  if (typeof payload === 'string' || typeof payload.sub !== 'string' || typeof payload.db !== 'string') {
    return { ok: false, reason: 'invalid' };
  }
  return { ok: true, keyId: payload.sub === ROOT_SUBJECT ? null : payload.sub, databaseId: payload.db };
}
