import { readdirSync } from 'node:fs';
import pg from 'pg';
import { describeMigration, MIGRATIONS_DIR, migrate } from '../src/migrate';
import { TEST_ADMIN_URL } from '../src/testing';

/** What `npm start` and `npm run migrate` tell an operator comes from what dbmate did. */

const name = `rbtest_migrate_${process.pid}`;
const url = (() => {
  const parsed = new URL(TEST_ADMIN_URL);
  parsed.pathname = `/${name}`;
  return parsed.toString();
})();

async function dropDatabase() {
  const admin = new pg.Client({ connectionString: TEST_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

beforeAll(dropDatabase);
afterAll(dropDatabase);

it('reports a database it created and every migration it applied, then that nothing was left to do', async () => {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((file) => file.endsWith('.sql'))
    .sort();
  const first = await migrate(url);
  expect(first).toEqual({ createdDatabase: true, applied: files });
  expect(await migrate(url)).toEqual({ createdDatabase: false, applied: [] });
});

it('describes the run without the password of the database URL', () => {
  const withPassword = 'postgresql://app:s3cret-pw@db.internal:5433/recordbase?sslmode=require';
  const line = describeMigration(withPassword, { createdDatabase: true, applied: ['a.sql', 'b.sql'] });
  expect(line).toBe('database postgresql://app@db.internal:5433/recordbase: created, 2 migrations applied');
  expect(describeMigration(withPassword, { createdDatabase: false, applied: [] })).toBe(
    'database postgresql://app@db.internal:5433/recordbase: migrations up to date',
  );
  expect(describeMigration(withPassword, { createdDatabase: false, applied: ['c.sql'] })).toContain(
    ': 1 migration applied',
  );
});
