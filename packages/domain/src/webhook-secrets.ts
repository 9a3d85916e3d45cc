import { randomBytes } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '@recordbase/contracts/webhooks';
import { encryptSecret } from '@recordbase/db';

/** Random bytes behind a signing secret; the contract allows 24 to 64. */
const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. Shown once, at creation. */
export function newWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/**
 * Secrets are needed in clear to sign deliveries, so they are stored encrypted with
 * WEBHOOK_SECRET_KEY (parsed once at start-up), never hashed and never in plain text.
 */
export const sealWebhookSecret = (key: Buffer, secret: string): string => encryptSecret(key, secret);
