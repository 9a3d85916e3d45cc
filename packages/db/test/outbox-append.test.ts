import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { appendOutboxEvent, appendSelectedEventsSql } from '../src';
import { createTestDatabase, type TestDatabase } from '../src/testing';

/**
 * An event is for the dispatcher (`heard`, undispatched) only while its database has an active
 * webhook in the appending statement's snapshot; otherwise it is appended dispatched, as the
 * dispatcher would have marked it after matching it against nothing, and costs it no work.
 */

let testDb: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  testDb = await createTestDatabase();
  pool = new pg.Pool({ connectionString: testDb.url, max: 4 });
  pool.on('error', () => {});
});
afterAll(async () => {
  await pool?.end();
  await testDb?.drop();
});

async function newDatabase(): Promise<string> {
  const id = randomUUID();
  await pool.query('INSERT INTO databases (id, name, schema_name) VALUES ($1, $2, $3)', [
    id,
    'Outbox',
    `base_${id.replaceAll('-', '')}`,
  ]);
  return id;
}

const addWebhook = (databaseId: string, active = true) =>
  pool.query<{ id: number }>(
    `INSERT INTO webhooks (database_id, url, events, secret_ciphertext, active)
     VALUES ($1, 'https://example.com/hook', '{record.created}', 'x', $2) RETURNING id`,
    [databaseId, active],
  );

const dispatchedAt = async (id: string) =>
  (
    await pool.query<{ dispatched_at: Date | null }>(
      'SELECT dispatched_at FROM outbox_events WHERE id = $1',
      [id],
    )
  ).rows[0]?.dispatched_at;

const event = (databaseId: string, suppressed = false) => ({
  databaseId,
  tableId: null,
  type: 'table.created' as const,
  source: 'public_api' as const,
  dataJson: '{}',
  suppressed,
});

it('appends dispatched, and not heard, an event of a database without an active webhook', async () => {
  const databaseId = await newDatabase();
  const none = await appendOutboxEvent(pool, event(databaseId));
  expect(none.heard).toBe(false);
  expect(await dispatchedAt(none.id)).toBeInstanceOf(Date);

  await addWebhook(databaseId, false);
  const inactive = await appendOutboxEvent(pool, event(databaseId));
  expect(inactive.heard).toBe(false);
  expect(await dispatchedAt(inactive.id)).toBeInstanceOf(Date);
});

it('appends for the dispatcher an event of a database with an active webhook, unless suppressed', async () => {
  const databaseId = await newDatabase();
  await addWebhook(databaseId);
  const heard = await appendOutboxEvent(pool, event(databaseId));
  expect(heard.heard).toBe(true);
  expect(await dispatchedAt(heard.id)).toBeNull();

  const suppressed = await appendOutboxEvent(pool, event(databaseId, true));
  expect(suppressed.heard).toBe(false);
  expect(await dispatchedAt(suppressed.id)).toBeInstanceOf(Date);

  // Another database's webhook is not this one's.
  const other = await appendOutboxEvent(pool, event(await newDatabase()));
  expect(other.heard).toBe(false);
});

it('decides each event of a statement by its own database', async () => {
  const withHook = await newDatabase();
  const without = await newDatabase();
  await addWebhook(withHook);
  const appended = await pool.query<{ database_id: string; heard: boolean; dispatched: boolean }>(
    appendSelectedEventsSql(
      `SELECT gen_random_uuid(), d, NULL::text, 'table.created', 'public_api', '{}'::json
         FROM unnest($1::uuid[]) d`,
      'database_id::text, dispatched_at IS NOT NULL AS dispatched',
    ),
    [[withHook, without]],
  );
  const byDatabase = Object.fromEntries(appended.rows.map((row) => [row.database_id, row]));
  expect(byDatabase[withHook]).toMatchObject({ heard: true, dispatched: false });
  expect(byDatabase[without]).toMatchObject({ heard: false, dispatched: true });
});
