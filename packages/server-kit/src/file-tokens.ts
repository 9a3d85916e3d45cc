import { signKeyToken, verifyKeyToken } from './key-tokens';

/**
 * Short-lived links to stored files (key-tokens.ts), which records-api (that hands them out with
 * attachments) and upload-service (that honours them) share. A token names one file and the API
 * key it was issued to: it opens that file only, only until it expires, and only while that key
 * still exists and may read the file's database.
 */

const AUDIENCE = 'recordbase:file';

export interface FileTokenClaims {
  /** The storage key of the file. */
  fileKey: string;
  /** The API key the link was issued to; null for the root key. */
  keyId: string | null;
}

export function signFileToken(secret: string, claims: FileTokenClaims, ttlSeconds: number): string {
  return signKeyToken(secret, AUDIENCE, claims.keyId, { fk: claims.fileKey }, ttlSeconds);
}

export type FileTokenVerdict =
  | { ok: true; keyId: string | null }
  | { ok: false; reason: 'expired' | 'invalid' | 'other_file' };

/** Checks signature, algorithm, audience, expiry and that the token is for `fileKey`. Never throws. */
export function verifyFileToken(secret: string, token: string, fileKey: string): FileTokenVerdict {
  const verdict = verifyKeyToken(secret, AUDIENCE, token);
  if (!verdict.ok) return verdict;
  if (verdict.claims.fk !== fileKey) return { ok: false, reason: 'other_file' };
  return { ok: true, keyId: verdict.keyId };
}
