import { randomUUID } from 'node:crypto';
import {
  createdWebhookSchema,
  retryWebhookDeliveryResponseSchema,
  webhookDeliveryListSchema,
  webhookListSchema,
  webhookSchema,
} from '@recordbase/contracts/webhooks';
import { DELIVERIES_CHANNEL } from '@recordbase/db';
import type { Notification } from 'pg';
import { createBase, type Harness, startHarness } from './harness';

let h: Harness;
let auth: string;
let baseId: string;
let tasksId: string;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Base',
    tables: [{ name: 'Tasks', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  baseId = base.body.id;
  tasksId = base.body.tables[0].id;
});
afterAll(() => h.close());

const url = (path = '') => `/api/v1/bases/${baseId}/webhooks${path}`;

async function createWebhook(body: object = {}) {
  const response = await h.api
    .post(url())
    .set('Authorization', auth)
    .send({ url: 'https://example.com/hook', events: ['record.created'], ...body })
    .expect(201);
  return response.body as { id: number; secret: string; tableId: string | null; active: boolean };
}

describe('creating webhooks', () => {
  it('answers 201 with the webhook and a whsec_ secret of 32 random bytes', async () => {
    const response = await h.api
      .post(url())
      .set('Authorization', auth)
      .send({ url: 'https://example.com/hook', events: ['record.created', 'table.deleted'] })
      .expect(201);
    expect(createdWebhookSchema.parse(response.body)).toEqual(response.body);
    expect(response.body).toEqual({
      id: expect.any(Number),
      secret: expect.stringMatching(/^whsec_/),
      url: 'https://example.com/hook',
      events: ['record.created', 'table.deleted'],
      tableId: null,
      fieldIds: null,
      viewId: null,
      active: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const bytes = Buffer.from(response.body.secret.slice('whsec_'.length), 'base64');
    expect(bytes.length).toBeGreaterThanOrEqual(24);
    expect(bytes.toString('base64')).toBe(response.body.secret.slice('whsec_'.length));
  });

  it('gives every webhook its own secret', async () => {
    const first = await createWebhook();
    const second = await createWebhook();
    expect(first.secret).not.toBe(second.secret);
    expect(second.id).toBeGreaterThan(first.id);
  });

  it('resolves a table filter given by name to the table id', async () => {
    const byName = await createWebhook({ tableId: 'tasks' });
    expect(byName.tableId).toBe(tasksId);
    const byId = await createWebhook({ tableId: tasksId });
    expect(byId.tableId).toBe(tasksId);
    const stored = await h.db.pool.query('SELECT table_id FROM webhooks WHERE id = $1', [byName.id]);
    expect(stored.rows[0].table_id).toBe(tasksId);
  });

  it('accepts a url of exactly 2048 characters', async () => {
    const prefix = 'https://example.com/';
    const long = prefix + 'a'.repeat(2048 - prefix.length);
    const created = await createWebhook({ url: long });
    const fetched = await h.api
      .get(url(`/${created.id}`))
      .set('Authorization', auth)
      .expect(200);
    expect(fetched.body.url).toBe(long);
  });
});

describe('reading webhooks', () => {
  it('lists the webhooks of the database, oldest first, without secrets', async () => {
    const created = await createWebhook({ events: ['field.updated'] });
    const response = await h.api.get(url()).set('Authorization', auth).expect(200);
    expect(webhookListSchema.parse(response.body)).toEqual(response.body);
    const ids = response.body.webhooks.map((w: { id: number }) => w.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(response.body.webhooks.find((w: { id: number }) => w.id === created.id)).toMatchObject({
      events: ['field.updated'],
      tableId: null,
      active: true,
    });
    expect(JSON.stringify(response.body)).not.toContain('whsec_');
  });

  it('reads one webhook by id', async () => {
    const created = await createWebhook({ tableId: 'Tasks' });
    const response = await h.api
      .get(url(`/${created.id}`))
      .set('Authorization', auth)
      .expect(200);
    const { secret: _secret, ...shown } = created;
    expect(response.body).toEqual(shown);
    expect(webhookSchema.strict().parse(response.body)).toEqual(response.body);
  });

  it('lists nothing for a database without webhooks', async () => {
    const other = await createBase(h, { name: 'Empty' });
    const response = await h.api
      .get(`/api/v1/bases/${other.body.id}/webhooks`)
      .set('Authorization', auth)
      .expect(200);
    expect(response.body).toEqual({ webhooks: [] });
  });
});

describe('updating webhooks', () => {
  it('changes url, events and table filter, and clears the filter with null', async () => {
    const created = await createWebhook();
    const changed = await h.api
      .patch(url(`/${created.id}`))
      .set('Authorization', auth)
      .send({
        url: 'http://127.0.0.1:4000/in',
        events: ['record.deleted', 'record.updated'],
        tableId: 'Tasks',
      })
      .expect(200);
    expect(changed.body).toMatchObject({
      id: created.id,
      url: 'http://127.0.0.1:4000/in',
      events: ['record.deleted', 'record.updated'],
      tableId: tasksId,
      active: true,
    });
    expect(changed.body).not.toHaveProperty('secret');
    const cleared = await h.api
      .patch(url(`/${created.id}`))
      .set('Authorization', auth)
      .send({ tableId: null })
      .expect(200);
    expect(cleared.body).toMatchObject({ tableId: null, url: 'http://127.0.0.1:4000/in' });
    expect(Date.parse(cleared.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(changed.body.createdAt));
  });

  it('deactivates a webhook, and reactivating it clears its failure streak', async () => {
    const created = await createWebhook();
    const off = await h.api
      .patch(url(`/${created.id}`))
      .set('Authorization', auth)
      .send({ active: false })
      .expect(200);
    expect(off.body.active).toBe(false);
    await h.db.pool.query("UPDATE webhooks SET failing_since = now() - interval '6 days' WHERE id = $1", [
      created.id,
    ]);
    const stillOff = await h.api
      .get(url(`/${created.id}`))
      .set('Authorization', auth)
      .expect(200);
    expect(stillOff.body.active).toBe(false);
    const on = await h.api
      .patch(url(`/${created.id}`))
      .set('Authorization', auth)
      .send({ active: true })
      .expect(200);
    expect(on.body.active).toBe(true);
    const stored = await h.db.pool.query('SELECT active, failing_since FROM webhooks WHERE id = $1', [
      created.id,
    ]);
    expect(stored.rows[0]).toEqual({ active: true, failing_since: null });
  });

  it('keeps the failure streak when only other keys change', async () => {
    const created = await createWebhook();
    await h.db.pool.query('UPDATE webhooks SET failing_since = now() WHERE id = $1', [created.id]);
    await h.api
      .patch(url(`/${created.id}`))
      .set('Authorization', auth)
      .send({ events: ['table.created'] })
      .expect(200);
    const stored = await h.db.pool.query('SELECT failing_since FROM webhooks WHERE id = $1', [created.id]);
    expect(stored.rows[0].failing_since).not.toBeNull();
  });
});

describe('deleting webhooks', () => {
  it('answers exactly {success: true, message: "Webhook deleted"} and removes it for good', async () => {
    const created = await createWebhook();
    const response = await h.api
      .delete(url(`/${created.id}`))
      .set('Authorization', auth)
      .expect(200);
    expect(response.body).toEqual({ success: true, message: 'Webhook deleted' });
    await h.api
      .get(url(`/${created.id}`))
      .set('Authorization', auth)
      .expect(404);
    const stored = await h.db.pool.query('SELECT count(*)::int AS n FROM webhooks WHERE id = $1', [
      created.id,
    ]);
    expect(stored.rows[0].n).toBe(0);
  });
});

async function insertDelivery(webhookId: number, eventType: string, status = 'failed') {
  const eventId = randomUUID();
  const result = await h.db.pool.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (event_id, webhook_id, event_type, status, attempts, next_attempt_at)
     VALUES ($1, $2, $3, $4, 0, NULL) RETURNING id::text AS id`,
    [eventId, webhookId, eventType, status],
  );
  return { id: result.rows[0]!.id, eventId };
}

async function insertAttempt(
  deliveryId: string,
  attempt: number,
  at: string,
  outcome: { statusCode: number | null; durationMs: number; errorKind?: string; error?: string },
) {
  await h.db.pool.query(
    `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, duration_ms, error_kind, error, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      deliveryId,
      attempt,
      outcome.statusCode,
      outcome.durationMs,
      outcome.errorKind ?? null,
      outcome.error ?? null,
      at,
    ],
  );
}

describe('a webhook filtered on a table', () => {
  it('outlives the table, so the table.deleted event still finds it', async () => {
    const table = await h.api
      .post(`/api/v1/bases/${baseId}/tables`)
      .set('Authorization', auth)
      .send({ name: 'Short-lived', fields: [{ name: 'N', type: 'number' }] });
    const hook = await createWebhook({ events: ['table.deleted'], tableId: table.body.id });
    await h.api
      .delete(`/api/v1/bases/${baseId}/tables/${table.body.id}`)
      .set('Authorization', auth)
      .expect(200);
    const after = await h.api
      .get(url(`/${hook.id}`))
      .set('Authorization', auth)
      .expect(200);
    expect(after.body).toMatchObject({ tableId: table.body.id, active: true });
    const event = await h.db.pool.query(
      `SELECT table_id FROM outbox_events WHERE type = 'table.deleted' AND table_id = $1`,
      [table.body.id],
    );
    expect(event.rowCount).toBe(1);
  });
});

describe('delivery log', () => {
  it('lists one entry per attempt, newest first, in the contract shape', async () => {
    const webhook = await createWebhook();
    const first = await insertDelivery(webhook.id, 'record.created', 'succeeded');
    const second = await insertDelivery(webhook.id, 'record.created', 'pending');
    await insertDelivery(webhook.id, 'record.updated', 'pending'); // no attempt yet: not listed
    await insertAttempt(first.id, 1, '2024-05-01T12:00:00.000Z', {
      statusCode: 500,
      durationMs: 31,
      errorKind: 'http_status',
      error: 'HTTP 500',
    });
    await insertAttempt(first.id, 2, '2024-05-01T12:00:05.000Z', { statusCode: 204, durationMs: 12 });
    await insertAttempt(second.id, 1, '2024-05-01T12:01:00.000Z', {
      statusCode: null,
      durationMs: 10_000,
      errorKind: 'timeout',
      error: 'timed out after 10 s',
    });

    const response = await h.api
      .get(url(`/${webhook.id}/deliveries`))
      .set('Authorization', auth)
      .expect(200);
    expect(webhookDeliveryListSchema.parse(response.body)).toEqual(response.body);
    expect(response.body.deliveries).toEqual([
      {
        deliveryId: second.id,
        eventId: `evt_${second.eventId}`,
        eventType: 'record.created',
        attempt: 1,
        statusCode: null,
        succeeded: false,
        durationMs: 10_000,
        error: { kind: 'timeout', message: 'timed out after 10 s' },
        attemptedAt: '2024-05-01T12:01:00.000Z',
      },
      {
        deliveryId: first.id,
        eventId: `evt_${first.eventId}`,
        eventType: 'record.created',
        attempt: 2,
        statusCode: 204,
        succeeded: true,
        durationMs: 12,
        error: null,
        attemptedAt: '2024-05-01T12:00:05.000Z',
      },
      {
        deliveryId: first.id,
        eventId: `evt_${first.eventId}`,
        eventType: 'record.created',
        attempt: 1,
        statusCode: 500,
        succeeded: false,
        durationMs: 31,
        error: { kind: 'http_status', message: 'HTTP 500' },
        attemptedAt: '2024-05-01T12:00:00.000Z',
      },
    ]);
  });

  it('honours limit and shows only the attempts of that webhook', async () => {
    const webhook = await createWebhook();
    const other = await createWebhook();
    const delivery = await insertDelivery(webhook.id, 'table.created');
    const foreign = await insertDelivery(other.id, 'table.created');
    for (let attempt = 1; attempt <= 4; attempt++) {
      await insertAttempt(delivery.id, attempt, `2024-06-01T00:00:0${attempt}.000Z`, {
        statusCode: 502,
        durationMs: attempt,
      });
    }
    await insertAttempt(foreign.id, 1, '2024-06-02T00:00:00.000Z', { statusCode: 200, durationMs: 1 });
    const response = await h.api
      .get(url(`/${webhook.id}/deliveries?limit=2`))
      .set('Authorization', auth)
      .expect(200);
    expect(response.body.deliveries.map((d: { attempt: number }) => d.attempt)).toEqual([4, 3]);
    expect(response.body.deliveries[0]).toMatchObject({
      deliveryId: delivery.id,
      statusCode: 502,
      succeeded: false,
      error: { kind: 'http_status', message: 'HTTP 502' },
    });
    const all = await h.api
      .get(url(`/${webhook.id}/deliveries`))
      .set('Authorization', auth)
      .expect(200);
    expect(all.body.deliveries).toHaveLength(4);
  });

  it('answers an empty log for a webhook that never delivered', async () => {
    const webhook = await createWebhook();
    const response = await h.api
      .get(url(`/${webhook.id}/deliveries`))
      .set('Authorization', auth)
      .expect(200);
    expect(response.body).toEqual({ deliveries: [] });
  });
});

describe('retrying a delivery', () => {
  it('makes the delivery pending and due now, and notifies the dispatcher on commit', async () => {
    const webhook = await createWebhook();
    const delivery = await insertDelivery(webhook.id, 'record.created', 'failed');
    const listener = await h.db.pool.connect();
    try {
      const notified = new Promise<Notification>((resolve) => {
        listener.on('notification', (message) => {
          if (message.channel === DELIVERIES_CHANNEL) resolve(message);
        });
      });
      await listener.query(`LISTEN ${DELIVERIES_CHANNEL}`);
      const before = await h.db.pool.query<{ now: Date }>('SELECT now() AS now');
      const response = await h.api
        .post(url(`/${webhook.id}/deliveries/${delivery.id}/retry`))
        .set('Authorization', auth)
        .expect(202);
      expect(response.body).toEqual({ id: delivery.id, status: 'pending' });
      expect(retryWebhookDeliveryResponseSchema.parse(response.body)).toEqual(response.body);
      const message = await notified;
      expect(message.payload).toBe(delivery.id);
      const stored = await h.db.pool.query(
        'SELECT status, next_attempt_at, updated_at FROM webhook_deliveries WHERE id = $1',
        [delivery.id],
      );
      expect(stored.rows[0].status).toBe('pending');
      expect(stored.rows[0].next_attempt_at.getTime()).toBeGreaterThanOrEqual(
        before.rows[0]!.now.getTime() - 5,
      );
      expect(stored.rows[0].next_attempt_at.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
      expect(stored.rows[0].updated_at.getTime()).toBe(stored.rows[0].next_attempt_at.getTime());
    } finally {
      await listener.query(`UNLISTEN ${DELIVERIES_CHANNEL}`);
      listener.release();
    }
  });
});
