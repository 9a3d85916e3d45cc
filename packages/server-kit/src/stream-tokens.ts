import { signKeyToken, verifyKeyToken } from './key-tokens';

/**
 * Tokens that open one database's change stream to a browser's EventSource, which cannot send an
 * Authorization header (key-tokens.ts, under an audience of their own). A token names the API key
 * it was issued to and the database, and carries nothing else: each connection made with it reads
 * the key as it stands then (its scopes; a revoked key is 401), reaching that one database only,
 * until it expires.
 */

const AUDIENCE = 'recordbase:changes-stream';

export interface StreamTokenClaims {
  /** The API key the token was issued to; null for the root key. */
  keyId: string | null;
  databaseId: string;
}

export function signStreamToken(secret: string, claims: StreamTokenClaims, ttlSeconds: number): string {
  return signKeyToken(secret, AUDIENCE, claims.keyId, { db: claims.databaseId }, ttlSeconds);
}

export type StreamTokenVerdict =
  | ({ ok: true } & StreamTokenClaims)
  | { ok: false; reason: 'expired' | 'invalid' };

/** Checks signature, algorithm, audience and expiry. Never throws. */
export function verifyStreamToken(secret: string, token: string): StreamTokenVerdict {
  const verdict = verifyKeyToken(secret, AUDIENCE, token);
  if (!verdict.ok) return verdict;
  if (typeof verdict.claims.db !== 'string') return { ok: false, reason: 'invalid' };
  return { ok: true, keyId: verdict.keyId, databaseId: verdict.claims.db };
}
