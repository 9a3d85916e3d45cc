import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { appendOutboxEvent, deleteIntoTrash } from '../src';
import { createTestDatabase, type TestDatabase } from '../src/testing';

/**
 * `recordbase.history`: on by default, record events write their revisions and deletes keep
 * their rows in the trash; 'off' (for a database, or a session as here) does neither, and the
 * events are appended as before.
 */

let testDb: TestDatabase;
let client: pg.Client;
const table = { schemaName: 'history_setting', id: 'tblHistorySetting1' };

beforeAll(async () => {
  testDb = await createTestDatabase();
  client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
  await client.query(`CREATE SCHEMA "${table.schemaName}"`);
  await client.query(
    `CREATE TABLE "${table.schemaName}"."${table.id}" (id uuid PRIMARY KEY, seq bigint, name text)`,
  );
});
afterAll(async () => {
  await client?.end();
  await testDb.drop();
});

/**
 * A record created and deleted: its record.created event (whose revision the trigger writes), its
 * record.deleted event, then its delete into the trash (the deletion's revision, with the row).
 */
async function createAndDelete(): Promise<{ revisions: number; trashed: number; events: number }> {
  const id = randomUUID();
  await client.query(`INSERT INTO "${table.schemaName}"."${table.id}" VALUES ($1, 1, 'x')`, [id]);
  const event = async (type: 'record.created' | 'record.deleted') =>
    (
      await appendOutboxEvent(client, {
        databaseId: randomUUID(),
        tableId: table.id,
        type,
        source: 'public_api',
        dataJson: JSON.stringify({
          tableId: table.id,
          recordIds: [id],
          records: [{ id, data: { name: 'x' } }],
        }),
      })
    ).id;
  const created = await event('record.created');
  const deleted = await event('record.deleted');
  expect(await deleteIntoTrash(client, table, [id], deleted)).toEqual([id]);
  const counts = await client.query<{ revisions: number; trashed: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM record_revisions WHERE record_id = $1) AS revisions,
            (SELECT count(*)::int FROM record_trash WHERE record_id = $1 AND stored IS NOT NULL) AS trashed,
            (SELECT count(*)::int FROM outbox_events WHERE id IN ($2, $3)) AS events`,
    [id, created, deleted],
  );
  return counts.rows[0]!;
}

it('keeps revisions and the trash unless recordbase.history is off', async () => {
  expect(await createAndDelete()).toEqual({ revisions: 1, trashed: 1, events: 2 });
  await client.query(`SET recordbase.history = 'off'`);
  expect(await createAndDelete()).toEqual({ revisions: 0, trashed: 0, events: 2 });
  await client.query(`SET recordbase.history = 'on'`);
  expect(await createAndDelete()).toEqual({ revisions: 1, trashed: 1, events: 2 });
});
