import { Webhook } from 'standardwebhooks';
import { buildBody } from '../src/attempt';
import { sign, signatureHeaders } from '../src/signing';
import { newSecret } from './helpers';

describe('Standard Webhooks signatures', () => {
  const secret = newSecret();
  const body = buildBody({
    eventId: '0190f2a4-5b6c-7d8e-9f00-112233445566',
    type: 'record.created',
    createdAt: new Date('2026-11-22T10:00:00.000Z'),
    dataJson: '{"tableId":"tbl1","recordIds":[],"records":[]}',
    webhookId: 7,
    databaseId: '0190f2a4-0000-7000-8000-000000000001',
    attempt: 1,
    source: 'public_api',
  });

  it('are verified by the reference library', () => {
    const headers = signatureHeaders(secret, 'evt_0190f2a4-5b6c-7d8e-9f00-112233445566', body);
    expect(Object.keys(headers).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('match the reference library byte for byte', () => {
    const at = new Date('2026-11-22T10:00:00.000Z');
    const reference = new Webhook(secret).sign('evt_x', at, body);
    expect(sign(secret, 'evt_x', Math.floor(at.getTime() / 1000), body)).toBe(reference);
  });

  it('use the signing time as webhook-timestamp, in Unix seconds', () => {
    const now = new Date();
    const headers = signatureHeaders(secret, 'evt_x', body, now);
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
  });

  it('fail verification for another body, another secret, or another id', () => {
    const headers = signatureHeaders(secret, 'evt_x', body);
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'evt_y' })).toThrow();
  });

  it('build the documented envelope', () => {
    expect(JSON.parse(body)).toEqual({
      id: 'evt_0190f2a4-5b6c-7d8e-9f00-112233445566',
      type: 'record.created',
      timestamp: '2026-11-22T10:00:00.000Z',
      data: { tableId: 'tbl1', recordIds: [], records: [] },
      metadata: {
        webhookId: 7,
        baseId: '0190f2a4-0000-7000-8000-000000000001',
        attempt: 1,
        source: 'public_api',
      },
    });
  });
});
