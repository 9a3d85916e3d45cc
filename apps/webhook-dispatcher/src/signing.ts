import { createHmac } from 'node:crypto';
import { WEBHOOK_SIGNATURE_VERSION, webhookHeaders } from '@recordbase/contracts/events';
import { WEBHOOK_SECRET_PREFIX } from '@recordbase/contracts/webhooks';

/**
 * Standard Webhooks signatures: `v1,` + base64 HMAC-SHA256 over `{id}.{timestamp}.{body}`, keyed
 * with the base64-decoded part of the secret after `whsec_`.
 */

export function signingKey(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX)
    ? secret.slice(WEBHOOK_SECRET_PREFIX.length)
    : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new Error('the webhook secret is empty');
  return key;
}

/** `secret` is the `whsec_` secret or its decoded key. */
export function sign(
  secret: string | Buffer,
  messageId: string,
  timestampSeconds: number,
  body: string,
): string {
  const key = typeof secret === 'string' ? signingKey(secret) : secret;
  const mac = createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64');
  return `${WEBHOOK_SIGNATURE_VERSION},${mac}`;
}

/** The three Standard Webhooks headers of one attempt, signed at `now`. */
export function signatureHeaders(
  secret: string | Buffer,
  messageId: string,
  body: string,
  now: Date = new Date(),
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    [webhookHeaders.id]: messageId,
    [webhookHeaders.timestamp]: String(timestamp),
    [webhookHeaders.signature]: sign(secret, messageId, timestamp, body),
  };
}
