import pg from 'pg';
import { MAX_VARYING_NAMED_PER_CONNECTION, queryNamed } from '../src';
import { createTestDatabase, type TestDatabase } from '../src/testing';

/**
 * queryNamed: a statement text run again on a connection reuses the statement PostgreSQL
 * prepared for it, and a connection keeps a bounded number of them.
 */

let testDb: TestDatabase;
let client: pg.Client;

const prepared = async () =>
  (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements')).rows[0]!.n;

beforeAll(async () => {
  testDb = await createTestDatabase();
  client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await testDb.drop();
});

it('prepares a text once per connection and runs it with the values of each call', async () => {
  const text = 'SELECT $1::int * 2 AS doubled';
  const answers = [];
  for (const value of [1, 2, 3]) {
    answers.push((await queryNamed<{ doubled: number }>(client, text, [value])).rows[0]!.doubled);
  }
  expect(answers).toEqual([2, 4, 6]);
  const statements = await client.query<{ statement: string }>(
    'SELECT statement FROM pg_prepared_statements',
  );
  expect(statements.rows.map((row) => row.statement)).toEqual([text]);
});

it('runs texts unnamed once the connection holds 32 of them', async () => {
  // The connection holds the one above already.
  for (let n = 0; n < 40; n += 1) {
    const result = await queryNamed<{ n: number }>(client, `SELECT ${n} + $1::int AS n`, [1]);
    expect(result.rows[0]!.n).toBe(n + 1);
  }
  expect(await prepared()).toBe(32);
});

it('names at most 8 varying texts on a connection, and those it named again when they repeat', async () => {
  const fresh = new pg.Client({ connectionString: testDb.url });
  await fresh.connect();
  try {
    const count = async (like: string) =>
      (
        await fresh.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE $1',
          [like],
        )
      ).rows[0]!.n;
    for (let n = 0; n < 12; n += 1) {
      const result = await queryNamed<{ n: number }>(fresh, `SELECT ${n} + $1::int AS n /* varying */`, [1], {
        varying: true,
      });
      expect(result.rows[0]!.n).toBe(n + 1);
    }
    expect(await count('%varying%')).toBe(MAX_VARYING_NAMED_PER_CONNECTION);
    // The first one repeats: named already, it runs as the statement kept.
    await queryNamed(fresh, 'SELECT 0 + $1::int AS n /* varying */', [1], { varying: true });
    // Texts that are not varying still get names of their own.
    await queryNamed(fresh, 'SELECT $1::int AS n /* shape */', [1]);
    expect([await count('%varying%'), await count('%shape%')]).toEqual([MAX_VARYING_NAMED_PER_CONNECTION, 1]);
  } finally {
    await fresh.end();
  }
});

it('a text that fails to parse is not kept, and the next call runs again', async () => {
  const fresh = new pg.Client({ connectionString: testDb.url });
  await fresh.connect();
  try {
    const text = 'SELECT $1::int FROM no_such_table';
    await expect(queryNamed(fresh, text, [1])).rejects.toThrow('no_such_table');
    await fresh.query('CREATE TABLE no_such_table (n int)');
    await fresh.query('INSERT INTO no_such_table VALUES (7)');
    expect((await queryNamed<{ int4: number }>(fresh, text, [5])).rows).toEqual([{ int4: 5 }]);
  } finally {
    await fresh.end();
  }
});

it("counts the statements of a pool, or of a request's part of one, on the connection they run on", async () => {
  const pool = new pg.Pool({ connectionString: testDb.url, max: 1 });
  // A request's pool (cancellablePool) is an object of its own each time over the same connections.
  const requestPool = () => ({ query: pool.query.bind(pool), connect: pool.connect.bind(pool) });
  try {
    for (let n = 0; n < 40; n += 1) {
      const result = await queryNamed<{ n: number }>(requestPool(), `SELECT ${n} * $1::int AS n`, [2]);
      expect(result.rows[0]!.n).toBe(n * 2);
    }
    const again = await queryNamed<{ n: number }>(pool, 'SELECT 3 * $1::int AS n', [2]);
    expect(again.rows[0]!.n).toBe(6);
    const held = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements');
    expect(held.rows[0]!.n).toBe(32);
  } finally {
    await pool.end();
  }
});
