import {
  type EventEnvelope,
  eventEnvelopeSchema,
  WEBHOOK_SIGNATURE_VERSION,
  webhookHeaders,
} from '@recordbase/contracts/events';
import { WEBHOOK_SECRET_PREFIX } from '@recordbase/contracts/webhooks';
import { RecordbaseError } from './errors';

/**
 * Standard Webhooks verification with Web Crypto, so it runs the same in Node 20 and browsers:
 * `webhook-signature` holds one or more `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`,
 * keyed with the base64-decoded part of the `whsec_` secret.
 */

export type WebhookVerificationReason =
  | 'MISSING_HEADER'
  | 'INVALID_TIMESTAMP'
  | 'TIMESTAMP_OUT_OF_TOLERANCE'
  | 'INVALID_SIGNATURE'
  | 'INVALID_PAYLOAD';

export class WebhookVerificationError extends RecordbaseError {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super('INVALID_WEBHOOK', message);
  }
}

/** Node's `req.headers` (any case, arrays for repeats) or a fetch `Headers`. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far the signing time may be from now, either way; 5 minutes, as Standard Webhooks says. */
  toleranceSeconds?: number;
  /** The current time in ms; for replaying an old delivery on purpose. */
  now?: number;
}

export const DEFAULT_TOLERANCE_SECONDS = 300;

const encoder = new TextEncoder();

function base64ToBytes(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) return undefined;
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

/** Verifies deliveries of one webhook; keep one per secret (the key is imported once). */
export class WebhookVerifier {
  readonly #key: ReturnType<typeof crypto.subtle.importKey>;

  /** `secret` as the webhook's creation answered it (`whsec_…`). */
  constructor(secret: string) {
    const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX)
      ? secret.slice(WEBHOOK_SECRET_PREFIX.length)
      : secret;
    const raw = base64ToBytes(encoded);
    if (!raw || raw.length === 0) throw new TypeError('the webhook secret must be whsec_ followed by base64');
    this.#key = crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  }

  /**
   * Checks the headers and signature of a delivery and returns its event. `body` must be the raw
   * body as received (bytes or text): parsed and re-serialised JSON would not match the signature.
   */
  async verify(
    body: string | Uint8Array,
    headers: WebhookHeaders,
    options: VerifyOptions = {},
  ): Promise<EventEnvelope> {
    const id = header(headers, webhookHeaders.id);
    const timestamp = header(headers, webhookHeaders.timestamp);
    const signatures = header(headers, webhookHeaders.signature);
    for (const [name, value] of [
      [webhookHeaders.id, id],
      [webhookHeaders.timestamp, timestamp],
      [webhookHeaders.signature, signatures],
    ] as const) {
      if (!value) throw new WebhookVerificationError('MISSING_HEADER', `The delivery has no ${name} header`);
    }
    if (!/^\d{1,15}$/.test(timestamp!)) {
      throw new WebhookVerificationError(
        'INVALID_TIMESTAMP',
        `${webhookHeaders.timestamp} must be Unix seconds`,
      );
    }
    const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
    if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) {
      // Too old is a replay; too new a wrong clock or a forged time. Either way not accepted.
      throw new WebhookVerificationError(
        'TIMESTAMP_OUT_OF_TOLERANCE',
        `The delivery was signed at ${timestamp}, more than ${tolerance} s from now (${nowSeconds})`,
      );
    }
    const bodyBytes = typeof body === 'string' ? encoder.encode(body) : body;
    const prefix = encoder.encode(`${id}.${timestamp}.`);
    const signed = new Uint8Array(prefix.length + bodyBytes.length);
    signed.set(prefix);
    signed.set(bodyBytes, prefix.length);
    if (!(await this.#matchesAny(signatures!, signed))) {
      throw new WebhookVerificationError(
        'INVALID_SIGNATURE',
        'No signature of the delivery matches the secret',
      );
    }
    return parseEvent(bodyBytes);
  }

  /** subtle.verify compares in constant time, so the check leaks nothing about the expected MAC. */
  async #matchesAny(signatures: string, signed: Uint8Array<ArrayBuffer>): Promise<boolean> {
    const key = await this.#key;
    for (const entry of signatures.split(' ')) {
      const comma = entry.indexOf(',');
      if (comma < 0 || entry.slice(0, comma) !== WEBHOOK_SIGNATURE_VERSION) continue;
      const mac = base64ToBytes(entry.slice(comma + 1));
      if (mac && (await crypto.subtle.verify('HMAC', key, mac, signed))) return true;
    }
    return false;
  }
}

function parseEvent(bodyBytes: Uint8Array): EventEnvelope {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bodyBytes));
  } catch {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'The signed body is not JSON');
  }
  const parsed = eventEnvelopeSchema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new WebhookVerificationError(
      'INVALID_PAYLOAD',
      `The signed body is no recordbase event: ${first?.path.join('.') || '(body)'}: ${first?.message}`,
    );
  }
  return parsed.data;
}

/** One-off verification; prefer a WebhookVerifier kept per webhook. */
export function verifyWebhook(
  secret: string,
  body: string | Uint8Array,
  headers: WebhookHeaders,
  options?: VerifyOptions,
): Promise<EventEnvelope> {
  return new WebhookVerifier(secret).verify(body, headers, options);
}
