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

it("stores the outbox's event data compressed with lz4 where the server has it", async () => {
  await migrate(url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ has_lz4: boolean; compression: string }>(
      `SELECT EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) AS has_lz4,
              (SELECT attcompression FROM pg_attribute WHERE attrelid = 'outbox_events'::regclass AND attname = 'data') AS compression`,
    );
    expect(rows[0]!.compression).toBe(rows[0]!.has_lz4 ? 'l' : '');
  } finally {
    await client.end();
  }
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
