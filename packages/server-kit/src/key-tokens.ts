import jwt from 'jsonwebtoken';

/**
 * Credentials that name an API key rather than carry it (file links, change stream tokens): JWTs
 * (HS256) signed with FILE_TOKEN_SECRET, each kind under an audience of its own, so that one kind
 * never opens what another does. Whoever honours one reads the key it names as it stands then.
 */

const ALGORITHM = 'HS256';
/** The root key has no id; its tokens name it this way. */
const ROOT_SUBJECT = 'root';

/** A token of `audience` for key `keyId` (null: the root key) carrying `claims`, for `ttlSeconds`. */
export function signKeyToken(
  secret: string,
  audience: string,
  keyId: string | null,
  claims: Record<string, string>,
  ttlSeconds: number,
): string {
  return jwt.sign(claims, secret, {
    algorithm: ALGORITHM,
    audience,
    subject: keyId ?? ROOT_SUBJECT,
    expiresIn: ttlSeconds,
  });
}

export type KeyTokenVerdict =
  | { ok: true; keyId: string | null; claims: jwt.JwtPayload }
  | { ok: false; reason: 'expired' | 'invalid' };

/** Checks signature, algorithm, audience and expiry, and that a key is named. Never throws. */
export function verifyKeyToken(secret: string, audience: string, token: string): KeyTokenVerdict {
  let payload: jwt.JwtPayload | string;
  try {
    payload = jwt.verify(token, secret, { algorithms: [ALGORITHM], audience });
  } catch (error) {
    return { ok: false, reason: error instanceof jwt.TokenExpiredError ? 'expired' : 'invalid' };
  }
  if (typeof payload === 'string' || typeof payload.sub !== 'string') return { ok: false, reason: 'invalid' };
  return { ok: true, keyId: payload.sub === ROOT_SUBJECT ? null : payload.sub, claims: payload };
}
