import type { z } from 'zod';
import {
  createdWebhookSchema,
  createWebhookRequestSchema,
  createWebhookResponseSchema,
  listWebhookDeliveriesQuerySchema,
  retryWebhookDeliveryResponseSchema,
  updateWebhookRequestSchema,
  webhookDeliveryListSchema,
  webhookEventTypes,
  webhookListSchema,
  webhookSecretSchema,
} from '../src/webhooks';

function problems(result: z.ZodSafeParseResult<unknown>): string[] {
  if (result.success) return [];
  return result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe('webhook event types', () => {
  it('lists the 9 event types of the specification', () => {
    expect([...webhookEventTypes].sort()).toEqual(
      [
        'record.created',
        'record.updated',
        'record.deleted',
        'table.created',
        'table.updated',
        'table.deleted',
        'field.created',
        'field.updated',
        'field.deleted',
      ].sort(),
    );
  });
});

describe('create webhook request', () => {
  const valid = { url: 'https://example.com/hook', events: ['record.created'] };

  it('accepts a url and events, with or without tableId', () => {
    expect(createWebhookRequestSchema.parse(valid)).toEqual(valid);
    expect(createWebhookRequestSchema.parse({ ...valid, tableId: 'Tasks' })).toEqual({
      ...valid,
      tableId: 'Tasks',
    });
  });

  it('accepts loopback and IP hosts (refusing them is a delivery-time decision)', () => {
    expect(
      createWebhookRequestSchema.safeParse({ ...valid, url: 'http://127.0.0.1:4000/hook' }).success,
    ).toBe(true);
    expect(createWebhookRequestSchema.safeParse({ ...valid, url: 'http://localhost/hook' }).success).toBe(
      true,
    );
  });

  it('accepts a url of 2048 characters and rejects one of 2049', () => {
    const prefix = 'https://example.com/';
    const url2048 = prefix + 'a'.repeat(2048 - prefix.length);
    expect(createWebhookRequestSchema.safeParse({ ...valid, url: url2048 }).success).toBe(true);
    expect(problems(createWebhookRequestSchema.safeParse({ ...valid, url: `${url2048}a` }))).toEqual([
      'url: must be at most 2048 characters',
    ]);
  });

  it.each([
    'ftp://example.com/hook',
    'javascript:alert(1)',
    'example.com/hook',
    'http:example.com',
    'notaurl',
    '',
  ])('rejects the url %j', (url) => {
    expect(problems(createWebhookRequestSchema.safeParse({ ...valid, url }))).toEqual([
      'url: must be an http or https URL',
    ]);
  });

  it.each([
    ['not a url', 'must not contain whitespace or control characters'],
    ['https://example.com/a b', 'must not contain whitespace or control characters'],
    ['https://example.com/\thook', 'must not contain whitespace or control characters'],
    ['https://exam\nple.com/', 'must not contain whitespace or control characters'],
    [' https://example.com/', 'must not contain whitespace or control characters'],
    ['https://example.com/\u0085', 'must not contain whitespace or control characters'],
    ['https://example.com/\u00a0', 'must not contain whitespace or control characters'],
    ['https://example.com/\u0000', 'must not contain NUL characters'],
  ])('rejects the url %j: %s', (url, message) => {
    expect(problems(createWebhookRequestSchema.safeParse({ ...valid, url }))).toEqual([`url: ${message}`]);
    expect(problems(updateWebhookRequestSchema.safeParse({ url }))).toEqual([`url: ${message}`]);
  });

  it('rejects NUL and control characters in tableId', () => {
    expect(problems(createWebhookRequestSchema.safeParse({ ...valid, tableId: 'T\u0000' }))).toEqual([
      'tableId: must not contain NUL characters',
    ]);
    expect(problems(updateWebhookRequestSchema.safeParse({ tableId: 'T\u0000' }))).toEqual([
      'tableId: must not contain NUL characters',
    ]);
    expect(problems(createWebhookRequestSchema.safeParse({ ...valid, tableId: 'T\n' }))).toEqual([
      'tableId: must not contain control characters',
    ]);
  });

  it('rejects empty events, unknown events and repeated events', () => {
    expect(problems(createWebhookRequestSchema.safeParse({ ...valid, events: [] }))).toEqual([
      'events: must list at least one event type',
    ]);
    expect(
      problems(createWebhookRequestSchema.safeParse({ ...valid, events: ['record.exploded'] }))[0],
    ).toMatch(/^events\.0: must be one of record\.created/);
    expect(
      problems(
        createWebhookRequestSchema.safeParse({ ...valid, events: ['record.created', 'record.created'] }),
      ),
    ).toEqual(['events: must not repeat an event type']);
  });

  it('rejects a missing url, unknown keys and an empty tableId', () => {
    expect(createWebhookRequestSchema.safeParse({ events: ['record.created'] }).success).toBe(false);
    expect(problems(createWebhookRequestSchema.safeParse({ ...valid, secret: 'mine' }))[0]).toContain(
      'secret',
    );
    expect(createWebhookRequestSchema.safeParse({ ...valid, tableId: '' }).success).toBe(false);
  });
});

describe('create webhook response', () => {
  it('carries an integer id and a whsec_ secret, and lets more fields through', () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect(createWebhookResponseSchema.parse({ id: 1, secret, active: true })).toEqual({
      id: 1,
      secret,
      active: true,
    });
    expect(createWebhookResponseSchema.safeParse({ id: '1', secret }).success).toBe(false);
  });

  it('accepts secrets of 24 to 64 random bytes only', () => {
    for (const bytes of [24, 32, 64]) {
      expect(
        webhookSecretSchema.safeParse(`whsec_${Buffer.alloc(bytes, 1).toString('base64')}`).success,
      ).toBe(true);
    }
    expect(webhookSecretSchema.safeParse(`whsec_${Buffer.alloc(8, 1).toString('base64')}`).success).toBe(
      false,
    );
    expect(webhookSecretSchema.safeParse(Buffer.alloc(32, 1).toString('base64')).success).toBe(false);
  });
});

describe('webhook objects', () => {
  const webhook = {
    id: 3,
    url: 'https://example.com/hook',
    events: ['table.deleted'],
    tableId: null,
    fieldIds: null,
    viewId: null,
    active: true,
    createdAt: '2024-05-01T12:00:00.000Z',
    updatedAt: '2024-05-01T12:00:00.000Z',
  };

  it('lists webhooks without their secret', () => {
    const parsed = webhookListSchema.parse({ webhooks: [{ ...webhook, secret: 'whsec_leaked' }] });
    expect(parsed.webhooks[0]).toEqual(webhook);
    expect(parsed.webhooks[0]).not.toHaveProperty('secret');
  });

  it('shows the secret only in the creation answer', () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect(createdWebhookSchema.parse({ ...webhook, secret })).toEqual({ ...webhook, secret });
    expect(createdWebhookSchema.safeParse(webhook).success).toBe(false);
  });
});

describe('update webhook request', () => {
  it('accepts each key alone and null to clear tableId', () => {
    expect(updateWebhookRequestSchema.safeParse({ active: false }).success).toBe(true);
    expect(updateWebhookRequestSchema.safeParse({ url: 'https://example.com/b' }).success).toBe(true);
    expect(updateWebhookRequestSchema.safeParse({ events: ['field.updated'] }).success).toBe(true);
    expect(updateWebhookRequestSchema.parse({ tableId: null })).toEqual({ tableId: null });
  });

  it('rejects an empty body, unknown keys and bad values', () => {
    expect(problems(updateWebhookRequestSchema.safeParse({}))[0]).toContain(
      'at least one of url, events, tableId, fieldIds, viewId or active',
    );
    expect(problems(updateWebhookRequestSchema.safeParse({ secret: 'x' }))[0]).toContain('secret');
    expect(updateWebhookRequestSchema.safeParse({ active: 'no' }).success).toBe(false);
    expect(updateWebhookRequestSchema.safeParse({ url: 'ftp://example.com' }).success).toBe(false);
    expect(updateWebhookRequestSchema.safeParse({ events: [] }).success).toBe(false);
  });
});

describe('delivery log', () => {
  it('accepts attempts with and without a response', () => {
    const attempt = {
      deliveryId: '17',
      eventId: 'evt_0190f2a4-5b6c-7d8e-9f00-112233445566',
      eventType: 'record.created',
      attempt: 1,
      statusCode: 500,
      succeeded: false,
      durationMs: 120,
      error: { kind: 'http_status', message: 'HTTP 500' },
      attemptedAt: '2024-05-01T12:00:00.000Z',
    };
    const timedOut = {
      ...attempt,
      attempt: 2,
      statusCode: null,
      error: { kind: 'timeout', message: 'timed out after 10 s' },
    };
    const succeeded = { ...attempt, attempt: 3, statusCode: 204, succeeded: true, error: null };
    expect(
      webhookDeliveryListSchema.parse({ deliveries: [attempt, timedOut, succeeded] }).deliveries,
    ).toHaveLength(3);
    expect(webhookDeliveryListSchema.safeParse({ deliveries: [{ ...attempt, attempt: 0 }] }).success).toBe(
      false,
    );
    expect(
      webhookDeliveryListSchema.safeParse({ deliveries: [{ ...attempt, error: 'HTTP 500' }] }).success,
    ).toBe(false);
  });

  it('takes a limit from 1 to 200 from the query string, 50 when omitted', () => {
    expect(listWebhookDeliveriesQuerySchema.parse({})).toEqual({ limit: 50 });
    expect(listWebhookDeliveriesQuerySchema.parse({ limit: '200' })).toEqual({ limit: 200 });
    for (const limit of ['0', '201', '1.5', 'ten', '']) {
      expect(problems(listWebhookDeliveriesQuerySchema.safeParse({ limit }))).toEqual([
        'limit: must be an integer from 1 to 200',
      ]);
    }
    expect(problems(listWebhookDeliveriesQuerySchema.safeParse({ offset: '1' }))[0]).toContain('offset');
  });

  it('answers a retry with the delivery id and pending', () => {
    expect(retryWebhookDeliveryResponseSchema.parse({ id: '17', status: 'pending' })).toEqual({
      id: '17',
      status: 'pending',
    });
    expect(retryWebhookDeliveryResponseSchema.safeParse({ id: '17', status: 'failed' }).success).toBe(false);
  });
});
