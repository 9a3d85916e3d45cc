import type { RecordbaseClient } from '@recordbase/client';
import { clientOf } from './client';
import { withPool } from './private-postgres';
import { type Stack, startStack } from './stack';

/**
 * The trash's retention as `npm start` runs it: with a short TRASH_RETENTION, the dispatcher's
 * sweep purges a deleted record, field and table for good (their restores answer 404) and drops
 * what they kept in PostgreSQL, while the rest of the table reads and writes as before.
 */

let stack: Stack;
let client: RecordbaseClient;

beforeAll(async () => {
  stack = await startStack({ env: { TRASH_RETENTION: '2s', DISPATCH_PRUNE_INTERVAL_MS: '250' } });
  client = clientOf(stack);
});
afterAll(async () => {
  await stack?.stop();
});

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 250));
  }
}

it('purges deleted records, fields and tables once past TRASH_RETENTION', async () => {
  const base = await client.bases.create({
    name: 'E2E trash retention',
    tables: [
      {
        name: 'Kept',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Size', type: 'number' },
        ],
      },
      { name: 'Gone', fields: [{ name: 'Name', type: 'single_line_text' }] },
    ],
  });
  const [kept, gone] = base.tables;
  const size = kept!.fields[1]!;
  const {
    records: [first, second],
  } = await client.records.createMany(base.id, 'Kept', [
    { Name: 'first', Size: 1 },
    { Name: 'second', Size: 2 },
  ]);
  await client.records.delete(base.id, 'Kept', second!.id);
  expect((await client.records.trash(base.id, 'Kept')).records).toHaveLength(1);
  expect((await stack.api('DELETE', `/bases/${base.id}/tables/Kept/fields/${size.id}`)).status).toBe(200);
  expect((await stack.api('DELETE', `/bases/${base.id}/tables/Gone`)).status).toBe(200);

  await until(
    async () => {
      const records = (await client.records.trash(base.id, 'Kept')).records;
      const schema = await client.bases.trash(base.id);
      return records.length === 0 && schema.tables.length === 0 && schema.fields.length === 0;
    },
    30_000,
    'the trash was not purged',
  );
  const restore = async (path: string, body: object) => (await stack.api('POST', path, body)).status;
  expect(await restore(`/bases/${base.id}/tables/Kept/trash/restore`, { ids: [second!.id] })).toBe(404);
  expect(await restore(`/bases/${base.id}/trash/restore`, { fieldIds: [size.id] })).toBe(404);
  expect(await restore(`/bases/${base.id}/trash/restore`, { tableIds: [gone!.id] })).toBe(404);

  // What they kept is gone from PostgreSQL: the column and the table.
  const schemaName = `base_${base.id.replaceAll('-', '')}`;
  const left = await withPool(stack.database.url, async (pool) =>
    (
      await pool.query<{ name: string }>(
        `SELECT table_name || '.' || column_name AS name FROM information_schema.columns
          WHERE table_schema = $1 AND (column_name = $2 OR table_name = $3)`,
        [schemaName, size.id, gone!.id],
      )
    ).rows.map((row) => row.name),
  );
  expect(left).toEqual([]);

  // The table lives on: reads and writes as before.
  await client.records.createMany(base.id, 'Kept', [{ Name: 'third' }]);
  const listed = await client.records.list(base.id, 'Kept');
  expect(listed.records.map((record) => [record.id === first!.id, record.fields])).toEqual([
    [true, { Name: 'first' }],
    [false, { Name: 'third' }],
  ]);
}, 60_000);
