import jwt from 'jsonwebtoken';

/**
 * Short-lived links to stored files, as JWTs (HS256) signed with FILE_TOKEN_SECRET, which
 * records-api (that hands them out with attachments) and upload-service (that honours them)
 * share. A token names one file and the API key it was issued to: it opens that file only, only
 * until it expires, and only while that key still exists and may read the file's database.
 */

const AUDIENCE = 'recordbase:file';
const ALGORITHM = 'HS256';
/** The root key has no id; its tokens name it this way. */
const ROOT_SUBJECT = 'root';

export interface FileTokenClaims {
  /** The storage key of the file. */
  fileKey: string;
  /** The API key the link was issued to; null for the root key. */
  keyId: string | null;
}

export function signFileToken(secret: string, claims: FileTokenClaims, ttlSeconds: number): string {
  return jwt.sign({ fk: claims.fileKey }, secret, {
    algorithm: ALGORITHM,
    audience: AUDIENCE,
    subject: claims.keyId ?? ROOT_SUBJECT,
    expiresIn: ttlSeconds,
  });
}

export type FileTokenVerdict =
  | { ok: true; keyId: string | null }
  | { ok: false; reason: 'expired' | 'invalid' | 'other_file' };

/** Checks signature, algorithm, audience, expiry and that the token is for `fileKey`. Never throws. */
export function verifyFileToken(secret: string, token: string, fileKey: string): FileTokenVerdict {
  let payload: jwt.JwtPayload | string;
  try {
    payload = jwt.verify(token, secret, { algorithms: [ALGORITHM], audience: AUDIENCE });
  } catch (error) {
    return { ok: false, reason: error instanceof jwt.TokenExpiredError ? 'expired' : 'invalid' };
  }
  if (typeof payload === 'string' || typeof payload.sub !== 'string') return { ok: false, reason: 'invalid' };
  if (payload.fk !== fileKey) return { ok: false, reason: 'other_file' };
  return { ok: true, keyId: payload.sub === ROOT_SUBJECT ? null : payload.sub };
}
