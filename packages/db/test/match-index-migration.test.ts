import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDb, type Db } from '../src/client';
import { newDatabaseId, newFieldId, newTableId } from '../src/ids';
import { MIGRATIONS_DIR } from '../src/migrate';
import {
  createDatabaseSchema,
  createTable,
  matchIndexName,
  type PhysicalField,
  qualifiedTable,
  quoteIdent,
  schemaNameForDatabase,
} from '../src/physical';
import { createTestDatabase, type TestDatabase } from '../src/testing';
import { withTransaction } from '../src/transaction';

/**
 * The test database has every migration applied already, so the old index is made by hand
 * afterwards and the migration's up section is run again on it.
 */

const MIGRATION = '20261124000000_drop_unsafe_match_indexes.sql';

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDb(testDb.url);
});
afterAll(async () => {
  await db.close();
  await testDb.drop();
});

function upSection(file: string): string {
  const text = readFileSync(join(MIGRATIONS_DIR, file), 'utf8');
  return text.split('-- migrate:down')[0]!.replace('-- migrate:up', '');
}

async function indexNames(schemaName: string, tableId: string): Promise<string[]> {
  const result = await db.pool.query<{ indexname: string }>(
    'SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname',
    [schemaName, tableId],
  );
  return result.rows.map((row) => row.indexname);
}

describe(`migration ${MIGRATION}`, () => {
  it('drops the old raw matchOn indexes of user tables and keeps every other index', async () => {
    const databaseId = newDatabaseId();
    const table = { schemaName: schemaNameForDatabase(databaseId), id: newTableId(), name: 'Things' };
    const field: PhysicalField = { id: newFieldId(), name: 'Key', type: 'single_line_text' };
    const ref = qualifiedTable(table.schemaName, table.id);
    const oldIndex = `${table.id}_match_0123456789ab`;
    const newIndex = matchIndexName(table.id, [field.id]);
    await withTransaction(db.pool, async (client) => {
      for (const statement of [...createDatabaseSchema(databaseId), ...createTable(table, [field])]) {
        await client.query(statement);
      }
      await client.query(`CREATE INDEX ${quoteIdent(oldIndex)} ON ${ref} (${quoteIdent(field.id)})`);
      await client.query(
        `CREATE INDEX ${quoteIdent(newIndex)} ON ${ref} ((hashtextextended(${quoteIdent(field.id)}, 0)))`,
      );
    });
    const longText = randomBytes(6_000).toString('base64').slice(0, 6_000);
    const insert = () =>
      db.pool.query(`INSERT INTO ${ref} (${quoteIdent(field.id)}) VALUES ($1)`, [longText]);
    await expect(insert()).rejects.toThrow(/index row size/);

    await db.pool.query(upSection(MIGRATION));

    expect(await indexNames(table.schemaName, table.id)).toEqual(
      [`${table.id}_created`, `${table.id}_pkey`, `${table.id}_seq`, newIndex].sort(),
    );
    await insert();
  });
});
