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

/** A record deleted: its record.deleted event, then its delete into the trash; how many rows each kept. */
async function deleteOne(): Promise<{ revisions: number; trashed: number; events: number }> {
  const id = randomUUID();
  await client.query(`INSERT INTO "${table.schemaName}"."${table.id}" VALUES ($1, 1, 'x')`, [id]);
  const eventId = await appendOutboxEvent(client, {
    databaseId: randomUUID(),
    tableId: table.id,
    type: 'record.deleted',
    source: 'public_api',
    dataJson: JSON.stringify({ tableId: table.id, recordIds: [id], records: [{ id, data: { name: 'x' } }] }),
  });
  expect(await deleteIntoTrash(client, table, [id], eventId)).toEqual([id]);
  const counts = await client.query<{ revisions: number; trashed: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM record_revisions WHERE record_id = $1) AS revisions,
            (SELECT count(*)::int FROM record_trash WHERE record_id = $1) AS trashed,
            (SELECT count(*)::int FROM outbox_events WHERE id = $2) AS events`,
    [id, eventId],
  );
  return counts.rows[0]!;
}

it('keeps revisions and the trash unless recordbase.history is off', async () => {
  expect(await deleteOne()).toEqual({ revisions: 1, trashed: 1, events: 1 });
  await client.query(`SET recordbase.history = 'off'`);
  expect(await deleteOne()).toEqual({ revisions: 0, trashed: 0, events: 1 });
  await client.query(`SET recordbase.history = 'on'`);
  expect(await deleteOne()).toEqual({ revisions: 1, trashed: 1, events: 1 });
});
