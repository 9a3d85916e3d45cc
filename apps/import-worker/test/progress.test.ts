import { randomUUID } from 'node:crypto';
import type { Db, ImportRun } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import pg from 'pg';
import { type ImportContext, NotOurs, progressReporter } from '../src/run-context';

/**
 * Progress reports against a real PostgreSQL: a report is written while the read goes on, the
 * next waits for it (so they land in order), and a run that lost its import learns it at the
 * report after.
 */

let testDb: TestDatabase;
let pool: pg.Pool;
let locker: pg.Client;

beforeAll(async () => {
  testDb = await createTestDatabase();
  pool = new pg.Pool({ connectionString: testDb.url, max: 4 });
  locker = new pg.Client({ connectionString: testDb.url });
  await locker.connect();
});
afterAll(async () => {
  await locker?.end();
  await pool?.end();
  await testDb?.drop();
});

async function runningImport() {
  const databaseId = randomUUID();
  const run = { id: randomUUID(), attempt: randomUUID() };
  await pool.query(`INSERT INTO databases (id, name, schema_name) VALUES ($1, 'd', $2)`, [
    databaseId,
    `s_${databaseId.replace(/-/g, '')}`,
  ]);
  await pool.query(
    `INSERT INTO imports (id, database_id, s3_key, status, attempt) VALUES ($1, $2, 'k', 'running', $3)`,
    [run.id, databaseId, run.attempt],
  );
  return run;
}

/** A reporter every 100 rows; only the database of an import's context is used by reports. */
const reporterOf = (run: { id: string; attempt: string }) =>
  progressReporter(
    { db: { pool } as unknown as Db, progressEveryRows: 100 } as ImportContext,
    run as ImportRun,
  );

const rowsImported = async (id: string) =>
  (await pool.query<{ rows_imported: number }>('SELECT rows_imported FROM imports WHERE id = $1', [id]))
    .rows[0]?.rows_imported;

/** Settles within `ms`, or says it is still waiting. */
const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([
    promise.then(() => 'settled'),
    new Promise<string>((resolve) => setTimeout(() => resolve('waiting'), ms)),
  ]);

test('a report is written while the read goes on, and the next one waits for it', async () => {
  const run = await runningImport();
  const reporter = reporterOf(run);
  // Another transaction holds the import's row: an UPDATE of it waits until that one ends.
  await locker.query('BEGIN');
  await locker.query('SELECT 1 FROM imports WHERE id = $1 FOR UPDATE', [run.id]);
  try {
    expect(await within(reporter.every(100, 100), 500)).toBe('settled');
    // The second report waits for the first, still held.
    const second = reporter.every(200, 200);
    expect(await within(second, 500)).toBe('waiting');
    await locker.query('COMMIT');
    await second;
  } finally {
    await locker.query('ROLLBACK').catch(() => {});
  }
  await reporter.flush();
  expect(await rowsImported(run.id)).toBe(200);
  // Between two report points nothing is written.
  await reporter.every(250, 250);
  await reporter.flush();
  expect(await rowsImported(run.id)).toBe(200);
});

test('a run whose import was taken from it stops at the report after', async () => {
  const run = await runningImport();
  const reporter = reporterOf(run);
  await pool.query(`UPDATE imports SET status = 'failed' WHERE id = $1`, [run.id]);
  await reporter.every(100, 100);
  await expect(reporter.every(200, 200)).rejects.toBeInstanceOf(NotOurs);

  const other = await runningImport();
  const flushed = reporterOf(other);
  await pool.query(`UPDATE imports SET attempt = $2 WHERE id = $1`, [other.id, randomUUID()]);
  await flushed.every(100, 100);
  await expect(flushed.flush()).rejects.toBeInstanceOf(NotOurs);
});
