import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { sign, signatureHeaders } from '../../../apps/webhook-dispatcher/src/signing';
import { verifyWebhook, WebhookVerificationError, WebhookVerifier } from '../src/webhook-verifier';
import { newWebhookSecret, tableCreatedEvent } from './webhook-event';

/**
 * The verifier against the two signers that matter: the dispatcher's own (what deliveries carry)
 * and the standardwebhooks library (what the README promises any receiver can use).
 */

const secret = newWebhookSecret();
const event = tableCreatedEvent('Deals — Q3');
const body = JSON.stringify(event);

const reasonOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'verified',
    (error: unknown) => (error instanceof WebhookVerificationError ? error.reason : error),
  );

describe('verifying a delivery signed by the dispatcher', () => {
  const headers = signatureHeaders(secret, event.id, body);

  it('returns the event, from text, bytes, Node headers or fetch Headers', async () => {
    const verifier = new WebhookVerifier(secret);
    await expect(verifier.verify(body, headers)).resolves.toEqual(event);
    await expect(verifier.verify(new TextEncoder().encode(body), new Headers(headers))).resolves.toEqual(
      event,
    );
    const shouting = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    await expect(verifyWebhook(secret, body, shouting)).resolves.toEqual(event);
  });

  it('refuses a changed body, another secret, a changed id or a changed timestamp', async () => {
    const verifier = new WebhookVerifier(secret);
    await expect(reasonOf(verifier.verify(body.replace('Q3', 'Q4'), headers))).resolves.toBe(
      'INVALID_SIGNATURE',
    );
    const other = new WebhookVerifier(newWebhookSecret());
    await expect(reasonOf(other.verify(body, headers))).resolves.toBe('INVALID_SIGNATURE');
    await expect(
      reasonOf(verifier.verify(body, { ...headers, 'webhook-id': `evt_${randomUUID()}` })),
    ).resolves.toBe('INVALID_SIGNATURE');
    const later = String(Number(headers['webhook-timestamp']) + 1);
    await expect(reasonOf(verifier.verify(body, { ...headers, 'webhook-timestamp': later }))).resolves.toBe(
      'INVALID_SIGNATURE',
    );
  });

  it('accepts the one right signature among several, and no version but v1', async () => {
    const verifier = new WebhookVerifier(secret);
    const right = headers['webhook-signature']!;
    const wrong = `v1,${randomBytes(32).toString('base64')}`;
    await expect(
      verifier.verify(body, { ...headers, 'webhook-signature': `${wrong} ${right}` }),
    ).resolves.toEqual(event);
    await expect(
      reasonOf(verifier.verify(body, { ...headers, 'webhook-signature': right.replace(/^v1,/, 'v2,') })),
    ).resolves.toBe('INVALID_SIGNATURE');
    await expect(
      reasonOf(verifier.verify(body, { ...headers, 'webhook-signature': 'v1,not base64!' })),
    ).resolves.toBe('INVALID_SIGNATURE');
  });

  it('refuses a timestamp outside the tolerance, either way, and a missing header', async () => {
    const verifier = new WebhookVerifier(secret);
    const old = signatureHeaders(secret, event.id, body, new Date(Date.now() - 301_000));
    await expect(reasonOf(verifier.verify(body, old))).resolves.toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    await expect(verifier.verify(body, old, { toleranceSeconds: 600 })).resolves.toEqual(event);
    const future = signatureHeaders(secret, event.id, body, new Date(Date.now() + 301_000));
    await expect(reasonOf(verifier.verify(body, future))).resolves.toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    await expect(reasonOf(verifier.verify(body, { ...headers, 'webhook-timestamp': '12e3' }))).resolves.toBe(
      'INVALID_TIMESTAMP',
    );
    const { 'webhook-signature': _dropped, ...unsigned } = headers;
    const error = await verifier.verify(body, unsigned).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INVALID_WEBHOOK', reason: 'MISSING_HEADER' });
    expect((error as Error).message).toMatch(/webhook-signature/);
  });

  it('refuses a correctly signed body that is no recordbase event', async () => {
    const odd = JSON.stringify({ hello: 'world' });
    const signed = signatureHeaders(secret, 'msg_1', odd);
    await expect(reasonOf(new WebhookVerifier(secret).verify(odd, signed))).resolves.toBe('INVALID_PAYLOAD');
  });

  it('refuses a secret that is not base64', () => {
    expect(() => new WebhookVerifier('whsec_***')).toThrow(/whsec_ followed by base64/);
  });
});

describe('the standardwebhooks library', () => {
  it('signs what the verifier accepts, and verifies what the dispatcher signs', async () => {
    const library = new Webhook(secret);
    const now = new Date();
    const timestamp = String(Math.floor(now.getTime() / 1000));
    const signature = library.sign(event.id, now, body);
    expect(signature).toBe(sign(secret, event.id, Number(timestamp), body));
    const headers = {
      'webhook-id': event.id,
      'webhook-timestamp': timestamp,
      'webhook-signature': signature,
    };
    await expect(new WebhookVerifier(secret).verify(body, headers)).resolves.toEqual(event);
    expect(library.verify(body, signatureHeaders(secret, event.id, body))).toEqual(event);
  });
});
