import { createDb, type Db } from '../src';
import { classifyDatabaseError } from '../src/errors';
import { createTestDatabase, type TestDatabase } from '../src/testing';

/**
 * An interactive transaction that finds no connection in time, or runs past its own time, is the
 * database being busy (a 503 with Retry-After), not a bug: under load it happened to read-only
 * SQL's first query of a base and answered 500.
 */

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDb(testDb.url, { maxConnections: 1 });
});
afterAll(async () => {
  await db.close();
  await testDb.drop();
});

it('is busy when no connection frees up within maxWait', async () => {
  const held = await db.pool.connect();
  try {
    const failure = await db.prisma
      .$transaction(async (tx) => tx.$queryRaw`SELECT 1`, { maxWait: 200 })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(failure).not.toBeNull();
    expect(classifyDatabaseError(failure)).toEqual({
      kind: 'busy',
      message: 'a transaction found no connection, or ran out of time',
    });
  } finally {
    held.release();
  }
});

it('is busy when the transaction runs past its timeout', async () => {
  const failure = await db.prisma
    .$transaction(
      async (tx) => {
        await new Promise((resolve) => setTimeout(resolve, 400));
        return tx.$queryRaw`SELECT 1`;
      },
      { timeout: 100 },
    )
    .then(
      () => null,
      (error: unknown) => error,
    );
  expect(classifyDatabaseError(failure)?.kind).toBe('busy');
});
