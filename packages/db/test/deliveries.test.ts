import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { type DeliveryOutcome, recordDeliveries } from '../src/deliveries';
import { createTestDatabase, type TestDatabase } from '../src/testing';

/** The delivery-state statements against a real database. */

let testDb: TestDatabase;
let pool: pg.Pool;
let databaseId: string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  pool = new pg.Pool({ connectionString: testDb.url, max: 3 });
  databaseId = randomUUID();
  await pool.query('INSERT INTO databases (id, name, schema_name) VALUES ($1, $2, $3)', [
    databaseId,
    'D',
    `base_${databaseId.replaceAll('-', '')}`,
  ]);
});
afterAll(async () => {
  await pool.end();
  await testDb.drop();
});

async function newWebhook(): Promise<number> {
  const result = await pool.query<{ id: number }>(
    `INSERT INTO webhooks (database_id, url, events, secret_ciphertext)
     VALUES ($1, 'https://example.com/hook', '{record.created}', 'v1:x') RETURNING id`,
    [databaseId],
  );
  return result.rows[0]!.id;
}

const version = async () =>
  BigInt(
    (await pool.query<{ v: string }>('SELECT version::text AS v FROM webhook_subscriptions_version')).rows[0]!
      .v,
  );

function firstAttempt(webhookId: number, statusCode: number): DeliveryOutcome {
  const ok = statusCode < 300;
  return {
    deliveryId: null,
    eventId: randomUUID(),
    webhookId,
    eventType: 'record.created',
    attempt: 1,
    result: {
      statusCode,
      durationMs: 3,
      errorKind: ok ? null : 'http',
      error: ok ? null : `answered ${statusCode}`,
      responseExcerpt: null,
    },
    status: ok ? 'succeeded' : statusCode === 410 ? 'failed' : 'retrying',
    nextAttemptDelayMs: ok || statusCode === 410 ? null : 5000,
    health: ok ? 'succeeded' : statusCode === 410 ? 'gone' : 'failing',
  };
}

describe('recording deliveries', () => {
  it('writes the delivery, its attempt and the webhook health without touching the subscriptions version', async () => {
    const webhookId = await newWebhook();
    const before = await version();
    const success = firstAttempt(webhookId, 200);
    const failure = firstAttempt(webhookId, 503);
    const recorded = await recordDeliveries(pool, [success, failure], [success.eventId, failure.eventId], {
      disableAfterMs: 86_400_000,
    });
    expect(recorded.deliveries.map((delivery) => [delivery.index, delivery.status])).toEqual(
      expect.arrayContaining([
        [0, 'succeeded'],
        [1, 'retrying'],
      ]),
    );
    expect(recorded.deliveries.find((delivery) => delivery.index === 1)?.next?.delayMs).toBeGreaterThan(4000);
    const attempts = await pool.query('SELECT count(*)::int AS n FROM webhook_delivery_attempts');
    expect(attempts.rows[0].n).toBe(2);
    // The health update ran (last success stamped) and changed nothing a match depends on.
    const health = await pool.query('SELECT active, last_success_at FROM webhooks WHERE id = $1', [
      webhookId,
    ]);
    expect(health.rows[0]).toEqual({ active: true, last_success_at: expect.any(Date) });
    expect(await version()).toBe(before);
  });

  it('deactivates a webhook on 410 Gone, in the same statement, and that bumps the version', async () => {
    const webhookId = await newWebhook();
    const before = await version();
    const gone = firstAttempt(webhookId, 410);
    const recorded = await recordDeliveries(pool, [gone], [gone.eventId], { disableAfterMs: 86_400_000 });
    expect(recorded.deactivated).toEqual([{ webhookId, reason: 'gone' }]);
    expect(recorded.deliveries[0]?.status).toBe('failed');
    expect(await version()).toBe(before + 1n);
  });
});
