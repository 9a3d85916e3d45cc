import { createDb, type Db } from '../src/client';
import { newDatabaseId, newFieldId, newTableId } from '../src/ids';
import { createDatabaseSchema, createLinkTable, createTable, type PhysicalTable } from '../src/physical';
import { linkTableName, quoteLiteral, schemaNameForDatabase } from '../src/physical/naming';
import { createTestDatabase, type TestDatabase } from '../src/testing';

/**
 * User-given names reach DDL as literals (COMMENT ON takes no parameters),
 * and a literal must read as the same text whatever standard_conforming_strings is. With it off,
 * a backslash in a plain '…' literal escapes the next character: `a\'; DROP …` ended the literal
 * and ran what followed.
 */

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

const names = [
  '\\',
  "'",
  "\\'",
  "a\\'; DROP TABLE public.api_keys; --",
  "it\\'s '' \\\\' x\\",
  '\\n\\t\\x41\\101\\u0041',
  'plain name',
];

/** The statements on one session under the setting, in a transaction; the session is discarded. */
async function runWith(setting: 'on' | 'off', statements: string[]): Promise<void> {
  const client = await db.pool.connect();
  try {
    await client.query(`SET standard_conforming_strings = ${setting}`);
    await client.query('BEGIN');
    for (const statement of statements) await client.query(statement);
    await client.query('COMMIT');
  } finally {
    client.release(true);
  }
}

describe.each(['off', 'on'] as const)('with standard_conforming_strings %s', (setting) => {
  it.each(names)('keeps the name %j as the comment of its table, column and link table', async (name) => {
    const databaseId = newDatabaseId();
    const table: PhysicalTable = { schemaName: schemaNameForDatabase(databaseId), id: newTableId(), name };
    const column = { id: newFieldId(), name, type: 'single_line_text' as const };
    const link = { id: newFieldId(), name, type: 'linked_record' as const, linkedTableId: table.id };
    await runWith(setting, [
      ...createDatabaseSchema(databaseId),
      ...createTable(table, [column]),
      ...createLinkTable(table, link),
    ]);
    const stored = await db.pool.query<{ tableComment: string; columnComment: string; linkComment: string }>(
      `SELECT obj_description(to_regclass($1), 'pg_class') AS "tableComment",
              col_description(to_regclass($1), 5) AS "columnComment",
              obj_description(to_regclass($2), 'pg_class') AS "linkComment"`,
      [`"${table.schemaName}"."${table.id}"`, `"${table.schemaName}"."${linkTableName(link.id)}"`],
    );
    expect(stored.rows[0]).toEqual({
      tableComment: name,
      columnComment: name,
      linkComment: `links of field ${name}`,
    });
    const metadata = await db.pool.query(`SELECT to_regclass('public.api_keys') IS NOT NULL AS present`);
    expect(metadata.rows[0]).toEqual({ present: true });
  });

  it('reads every quoted literal back as its text', async () => {
    const client = await db.pool.connect();
    try {
      await client.query(`SET standard_conforming_strings = ${setting}`);
      for (const name of names) {
        const result = await client.query<{ text: string }>(`SELECT ${quoteLiteral(name)} AS text`);
        expect(result.rows[0]?.text).toBe(name);
      }
    } finally {
      client.release(true);
    }
  });
});
