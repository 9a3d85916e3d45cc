import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { YIELDED_NICENESS } from './long-statements';
import { MIGRATIONS_DIR, migrate } from './migrate';
import { SQL_ROLE_COMMENT_PREFIX } from './physical/sql-roles';

/**
 * Throwaway databases for tests. Migrations run once into a template database named after a hash
 * of the migration files; each test file then clones it, so files run in parallel and leave
 * nothing behind.
 */

export const TEST_ADMIN_URL =
  process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const TEMPLATE_PREFIX = 'rbtemplate_';
const TEST_PREFIX = 'rbtest_';
/** Any constant shared by all test processes: serialises template builds and clones. */
const TEMPLATE_LOCK = 727_001;

function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(MIGRATIONS_DIR).sort()) {
    hash.update(file).update(readFileSync(join(MIGRATIONS_DIR, file)));
  }
  return hash.digest('hex').slice(0, 16);
}

function urlForDatabase(name: string): string {
  const url = new URL(TEST_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const template = `${TEMPLATE_PREFIX}${migrationsHash()}`;
  const name = `${TEST_PREFIX}${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    const existing = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
    if (existing.rowCount === 0) {
      const stale = await admin.query<{ datname: string }>(
        'SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname <> $2',
        [`${TEMPLATE_PREFIX}%`, template],
      );
      for (const row of stale.rows) await admin.query(`DROP DATABASE IF EXISTS "${row.datname}"`);
      const building = `${template}_building`;
      await admin.query(`DROP DATABASE IF EXISTS "${building}"`);
      await migrate(urlForDatabase(building));
      await admin.query(`ALTER DATABASE "${building}" RENAME TO "${template}"`);
    }
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
    await dropStrayQueryRoles(admin);
  } finally {
    await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]).catch(() => {});
    await admin.end();
  }
  return {
    name,
    url: urlForDatabase(name),
    async drop() {
      const client = new pg.Client({ connectionString: TEST_ADMIN_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        // Roles outlive the database: its read-only SQL roles go with it.
        await dropStrayQueryRoles(client);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Read-only SQL roles (physical/sql-roles.ts) belong to the cluster, not to a database: those whose
 * database no longer exists, dropped with it or by a test process that died, are dropped here.
 */
async function dropStrayQueryRoles(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ role: string }>(
    `SELECT r.rolname AS role
       FROM pg_roles r
       JOIN pg_shdescription d ON d.objoid = r.oid AND d.classoid = 'pg_authid'::regclass
      WHERE starts_with(d.description, $1)
        AND substr(d.description, length($1) + 1) LIKE $2
        AND NOT EXISTS (SELECT 1 FROM pg_database db WHERE db.datname = substr(d.description, length($1) + 1))`,
    [SQL_ROLE_COMMENT_PREFIX, `${TEST_PREFIX}%`],
  );
  for (const { role } of rows) {
    // Another process may sweep the same role at the same moment.
    await admin.query(`DROP ROLE IF EXISTS "${role.replace(/"/g, '""')}"`).catch(() => {});
  }
}

const AUTOGROUPS = readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'latin1').trim() === '1';

/**
 * A local process's CPU priority as the scheduler weighs it, for tests of long statements: its
 * niceness and, where the kernel schedules each session as a group, its group's niceness
 * ("19/19"; "19/-" on a kernel without groups).
 */
export function backendPriority(pid: number): string {
  const group = AUTOGROUPS
    ? (/ nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, 'latin1'))?.[1] ?? 'none')
    : '-';
  return `${getPriority(pid)}/${group}`;
}

/** backendPriority of a process at its usual priority, and of one whose long statement yielded. */
export const NORMAL_PRIORITY = `0/${AUTOGROUPS ? '0' : '-'}`;
export const YIELDED_PRIORITY = `${YIELDED_NICENESS}/${AUTOGROUPS ? YIELDED_NICENESS : '-'}`;
