import { createDb, type Db } from '../src/client';
import { newDatabaseId, newFieldId, newTableId } from '../src/ids';
import {
  addField,
  changeFieldType,
  createDatabaseSchema,
  createTable,
  dropField,
  type PhysicalField,
  type PhysicalTable,
} from '../src/physical';
import { schemaNameForDatabase } from '../src/physical/naming';
import { createTestDatabase, type TestDatabase } from '../src/testing';
import { withTransaction } from '../src/transaction';

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

async function run(statements: string[]) {
  await withTransaction(db.pool, async (client) => {
    for (const statement of statements) await client.query(statement);
  });
}

async function columnTypes(table: PhysicalTable): Promise<Record<string, string>> {
  const result = await db.pool.query<{ column_name: string; data_type: string }>(
    'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
    [table.schemaName, table.id],
  );
  return Object.fromEntries(result.rows.map((row) => [row.column_name, row.data_type]));
}

async function newTable(fields: PhysicalField[]): Promise<PhysicalTable> {
  const databaseId = newDatabaseId();
  const table = { schemaName: schemaNameForDatabase(databaseId), id: newTableId(), name: 'Things' };
  await run([...createDatabaseSchema(databaseId), ...createTable(table, fields)]);
  return table;
}

describe('physical tables', () => {
  it('creates a typed column per field beside the system columns', async () => {
    const fields: PhysicalField[] = [
      { id: newFieldId(), name: 'Name', type: 'single_line_text' },
      { id: newFieldId(), name: 'Amount', type: 'currency' },
      { id: newFieldId(), name: 'Stars', type: 'rating' },
      { id: newFieldId(), name: 'Due', type: 'date' },
      { id: newFieldId(), name: 'At', type: 'datetime' },
      { id: newFieldId(), name: 'Tags', type: 'multiple_select' },
      { id: newFieldId(), name: 'Done', type: 'checkbox' },
      { id: newFieldId(), name: 'Files', type: 'attachments' },
    ];
    const table = await newTable(fields);
    const types = await columnTypes(table);
    expect(types).toEqual({
      id: 'uuid',
      seq: 'bigint',
      created_at: 'timestamp with time zone',
      updated_at: 'timestamp with time zone',
      [fields[0]!.id]: 'text',
      [fields[1]!.id]: 'double precision',
      [fields[2]!.id]: 'smallint',
      [fields[3]!.id]: 'date',
      [fields[4]!.id]: 'timestamp with time zone',
      [fields[5]!.id]: 'ARRAY',
      [fields[6]!.id]: 'boolean',
      [fields[7]!.id]: 'jsonb',
    });
  });

  it('keeps a user-supplied name out of identifiers, even one full of quotes', async () => {
    const hostile = `x"; DROP TABLE databases; --'`;
    const field = { id: newFieldId(), name: hostile, type: 'single_line_text' as const };
    const table = await newTable([field]);
    const comment = await db.pool.query<{ comment: string }>(
      `SELECT col_description(($1 || '.' || quote_ident($2))::regclass, 5) AS comment`,
      [table.schemaName, table.id],
    );
    expect(comment.rows[0]?.comment).toBe(hostile);
    const metadata = await db.pool.query(`SELECT to_regclass('public.databases') IS NOT NULL AS present`);
    expect(metadata.rows[0]).toEqual({ present: true });
  });

  it('adds and drops columns', async () => {
    const table = await newTable([{ id: newFieldId(), name: 'Name', type: 'single_line_text' }]);
    const added: PhysicalField = { id: newFieldId(), name: 'Count', type: 'number' };
    await run(addField(table, added));
    expect((await columnTypes(table))[added.id]).toBe('double precision');
    await run(dropField(table, added));
    expect((await columnTypes(table))[added.id]).toBeUndefined();
  });

  it('converts text holding numbers to a number column', async () => {
    const field: PhysicalField = { id: newFieldId(), name: 'Qty', type: 'single_line_text' };
    const table = await newTable([field]);
    await db.pool.query(
      `INSERT INTO "${table.schemaName}"."${table.id}" ("${field.id}") VALUES ('12.5'), (' 3 '), (NULL), ('')`,
    );
    await run(changeFieldType(table, field, 'number')!);
    const rows = await db.pool.query(
      `SELECT "${field.id}" AS v FROM "${table.schemaName}"."${table.id}" ORDER BY seq`,
    );
    expect(rows.rows.map((row) => row.v)).toEqual([12.5, 3, null, null]);
  });

  it('refuses a conversion that would lose a value, leaving the column as it was', async () => {
    const field: PhysicalField = { id: newFieldId(), name: 'Qty', type: 'single_line_text' };
    const table = await newTable([field]);
    await db.pool.query(
      `INSERT INTO "${table.schemaName}"."${table.id}" ("${field.id}") VALUES ('12'), ('twelve')`,
    );
    await expect(run(changeFieldType(table, field, 'number')!)).rejects.toThrow(/twelve/);
    expect((await columnTypes(table))[field.id]).toBe('text');
  });

  it('refuses text that PostgreSQL would read as NaN or Infinity, which JSON cannot carry', async () => {
    const field: PhysicalField = { id: newFieldId(), name: 'Qty', type: 'single_line_text' };
    const table = await newTable([field]);
    await db.pool.query(
      `INSERT INTO "${table.schemaName}"."${table.id}" ("${field.id}") VALUES ('1'), ('NaN')`,
    );
    await expect(run(changeFieldType(table, field, 'number')!)).rejects.toThrow(/finite/);
    await db.pool.query(`UPDATE "${table.schemaName}"."${table.id}" SET "${field.id}" = '-infinity'`);
    await expect(run(changeFieldType(table, field, 'number')!)).rejects.toThrow(/finite/);
  });

  it('refuses text that PostgreSQL would read as an infinite date', async () => {
    const field: PhysicalField = { id: newFieldId(), name: 'When', type: 'single_line_text' };
    const table = await newTable([field]);
    await db.pool.query(
      `INSERT INTO "${table.schemaName}"."${table.id}" ("${field.id}") VALUES ('2024-01-02'), ('infinity')`,
    );
    await expect(run(changeFieldType(table, field, 'date')!)).rejects.toThrow(/real date/);
    await expect(run(changeFieldType(table, field, 'datetime')!)).rejects.toThrow(/real date/);
    await db.pool.query(`DELETE FROM "${table.schemaName}"."${table.id}" WHERE "${field.id}" = 'infinity'`);
    await run(changeFieldType(table, field, 'date')!);
  });

  it('refuses a rating outside 0..max and accepts whole numbers inside it', async () => {
    const field: PhysicalField = { id: newFieldId(), name: 'Score', type: 'number' };
    const table = await newTable([field]);
    await db.pool.query(`INSERT INTO "${table.schemaName}"."${table.id}" ("${field.id}") VALUES (3), (7)`);
    await expect(run(changeFieldType(table, field, 'rating', { template: { max: 5 } })!)).rejects.toThrow(
      /rating/,
    );
    await run(changeFieldType(table, field, 'rating', { template: { max: 10 } })!);
    expect((await columnTypes(table))[field.id]).toBe('smallint');
  });

  it('splits comma-separated text into multiple_select options and makes the column not null', async () => {
    const field: PhysicalField = { id: newFieldId(), name: 'Tags', type: 'single_line_text' };
    const table = await newTable([field]);
    await db.pool.query(
      `INSERT INTO "${table.schemaName}"."${table.id}" ("${field.id}") VALUES ('a, b'), (NULL)`,
    );
    await run(changeFieldType(table, field, 'multiple_select')!);
    const rows = await db.pool.query(
      `SELECT "${field.id}" AS v FROM "${table.schemaName}"."${table.id}" ORDER BY seq`,
    );
    expect(rows.rows.map((row) => row.v)).toEqual([['a', 'b'], []]);
  });

  it('validates emails when text becomes email', async () => {
    const field: PhysicalField = { id: newFieldId(), name: 'Contact', type: 'single_line_text' };
    const table = await newTable([field]);
    await db.pool.query(
      `INSERT INTO "${table.schemaName}"."${table.id}" ("${field.id}") VALUES ('a@example.com'), ('not an email')`,
    );
    await expect(run(changeFieldType(table, field, 'email')!)).rejects.toThrow(/not an email/);
  });

  it('has no conversion into or out of attachments and linked records', () => {
    const table = { schemaName: 'base_x', id: newTableId(), name: 'T' };
    expect(
      changeFieldType(table, { id: newFieldId(), name: 'F', type: 'attachments' }, 'single_line_text'),
    ).toBeNull();
    expect(
      changeFieldType(table, { id: newFieldId(), name: 'F', type: 'number' }, 'linked_record'),
    ).toBeNull();
  });
});
