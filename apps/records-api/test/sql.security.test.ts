import { decryptSecret } from '@recordbase/db';
import { scramVerifier, sqlRoleName, sqlViewSchemaName } from '@recordbase/db/physical';
import { createBase, databaseSnapshot, type Harness, startHarness } from './harness';

/**
 * Read-only SQL is confined by PostgreSQL: each refusal below comes from the database (role
 * privileges, a read-only transaction, the statement timeout, the extended protocol), and each
 * leaves every table as it was.
 */

const TIMEOUT_MS = 1000;

let h: Harness;
let auth: string;
let baseId: string;
let otherBaseId: string;
let otherTableId: string;

const sql = (body: object, database = baseId) =>
  h.api.post(`/api/v1/bases/${database}/sql`).set('Authorization', auth).send(body);

beforeAll(async () => {
  h = await startHarness({ sqlStatementTimeoutMs: TIMEOUT_MS });
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Mine',
    tables: [{ name: 'People', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  baseId = base.body.id;
  await h.api
    .post(`/api/v1/bases/${baseId}/tables/People/records/bulk`)
    .set('Authorization', auth)
    .send({ records: [{ Name: 'Ada' }, { Name: 'Grace' }] })
    .expect(201);
  const other = await createBase(h, {
    name: 'Theirs',
    tables: [{ name: 'Secrets', fields: [{ name: 'Code', type: 'single_line_text' }] }],
  });
  otherBaseId = other.body.id;
  otherTableId = other.body.tables[0].id;
  await h.api
    .post(`/api/v1/bases/${otherBaseId}/tables/Secrets/records/bulk`)
    .set('Authorization', auth)
    .send({ records: [{ Code: 'hunter2' }] })
    .expect(201);
  // Installed, so that refusing it is PostgreSQL's doing rather than its absence.
  await h.db.pool.query('CREATE EXTENSION IF NOT EXISTS dblink');
  // The other database has its query role and views too.
  await sql({ query: 'SELECT count(*) FROM "Secrets"' }, otherBaseId).expect(200);
  await sql({ query: 'SELECT 1' }).expect(200);
});
afterAll(() => h.close());

const otherViews = () => sqlViewSchemaName(otherBaseId);
const otherTable = () => `base_${otherBaseId.replace(/-/g, '')}."${otherTableId}"`;

describe('refused by PostgreSQL, with 400 and the data intact', () => {
  const cases: [string, () => string, RegExp][] = [
    ['INSERT', () => `INSERT INTO "People" ("Name") VALUES ('Eve')`, /permission denied|read-only/],
    ['UPDATE', () => `UPDATE "People" SET "Name" = 'Eve'`, /permission denied|read-only/],
    ['DELETE', () => 'DELETE FROM "People"', /permission denied|read-only/],
    [
      'a data-modifying CTE',
      () => 'WITH d AS (DELETE FROM "People" RETURNING 1) SELECT * FROM d',
      /permission denied|read-only/,
    ],
    ['CREATE TABLE', () => 'CREATE TABLE x (a int)', /read-only|permission denied/],
    ['DROP VIEW', () => 'DROP VIEW "People"', /read-only|must be owner/],
    ['ALTER ROLE', () => 'ALTER ROLE CURRENT_USER SET statement_timeout = 0', /read-only|permission denied/],
    ['two statements', () => 'SELECT 1; DELETE FROM "People"', /multiple commands/],
    [
      'COPY to a file',
      () => `COPY (SELECT * FROM "People") TO '/tmp/recordbase-people'`,
      /read-only|permission denied|must be superuser/,
    ],
    ['COPY to the client', () => 'COPY (SELECT * FROM "People") TO STDOUT', /COPY is not available/],
    ['COPY from the client', () => 'COPY "People" FROM STDIN', /read-only|permission denied|COPY/],
    ['pg_read_file', () => `SELECT pg_read_file('/etc/passwd')`, /permission denied/],
    ['lo_import', () => `SELECT lo_import('/etc/passwd')`, /permission denied|read-only/],
    [
      'dblink',
      () => `SELECT * FROM public.dblink('dbname=postgres', 'SELECT 1') AS t(a int)`,
      /permission denied/,
    ],
    [
      'dblink by its name',
      () => `SELECT dblink_exec('dbname=postgres', 'DROP DATABASE postgres')`,
      /does not exist/,
    ],
    ['SET ROLE', () => 'SET ROLE postgres', /permission denied to set role/],
    [
      'SET SESSION AUTHORIZATION',
      () => 'SET SESSION AUTHORIZATION postgres',
      /permission denied to set session authorization/,
    ],
    [
      "set_config('role') with query_to_xml",
      () =>
        `SELECT set_config('role', 'postgres', true), query_to_xml('SELECT * FROM pg_authid', true, true, '')`,
      /permission denied/,
    ],
    [
      "query_to_xml of another database's table",
      () => `SELECT query_to_xml('SELECT * FROM ${otherTable().replace(/'/g, "''")}', true, true, '')`,
      /permission denied/,
    ],
    [
      "another database's table by its internal name",
      () => `SELECT * FROM ${otherTable()}`,
      /permission denied/,
    ],
    ["another database's view", () => `SELECT * FROM "${otherViews()}"."Secrets"`, /permission denied/],
    ['the metadata tables', () => 'SELECT * FROM public.api_keys', /permission denied/],
    ['pg_authid', () => 'SELECT rolname, rolpassword FROM pg_authid', /permission denied/],
    ['pg_shadow', () => 'SELECT usename, passwd FROM pg_shadow', /permission denied/],
    ['session advisory locks', () => 'SELECT pg_advisory_lock(1)', /permission denied/],
    ['other sessions', () => 'SELECT pid, query FROM pg_stat_activity', /permission denied/],
    ['the server log directory', () => `SELECT pg_ls_dir('.')`, /permission denied/],
  ];

  it.each(cases)('%s', async (_name, query, message) => {
    const before = await databaseSnapshot(h.db);
    const res = await sql({ query: query() });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.error.message).toMatch(message);
    expect(await databaseSnapshot(h.db)).toEqual(before);
  });

  it('terminating or cancelling another backend', async () => {
    const service = await h.db.pool.connect();
    try {
      const { rows } = await service.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const pid = rows[0]!.pid;
      for (const fn of ['pg_terminate_backend', 'pg_cancel_backend']) {
        const res = await sql({ query: `SELECT ${fn}($1)`, params: [pid] }).expect(400);
        expect(res.body.error.message).toMatch(/permission denied/);
      }
      // The service's connection is alive.
      await service.query('SELECT 1');
    } finally {
      service.release();
    }
  });

  it('pg_sleep past the timeout is stopped', async () => {
    // Only the statement timeout words this refusal.
    const res = await sql({ query: 'SELECT pg_sleep(30)' }).expect(400);
    expect(res.body.error.message).toMatch(/time limit/);
  });

  it('a timeout lifted by the query lasts only for its own transaction', async () => {
    await sql({ query: 'SET statement_timeout = 0' }).expect(200);
    await sql({ query: 'COMMIT' }).expect(200);
    const res = await sql({ query: 'SELECT pg_sleep(30)' }).expect(400);
    expect(res.body.error.message).toMatch(/time limit/);
  });

  it('what a query prepares does not outlive it', async () => {
    await sql({ query: 'PREPARE leftover AS SELECT 1' }).expect(200);
    const res = await sql({ query: 'EXECUTE leftover' }).expect(400);
    expect(res.body.error.message).toMatch(/does not exist/);
  });
});

describe('what the query role can see', () => {
  it("information_schema lists this database's tables and none of another's", async () => {
    const res = await sql({
      query: `SELECT table_schema, table_name FROM information_schema.tables
               WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 2`,
    }).expect(200);
    expect(res.body.rows).toEqual([[sqlViewSchemaName(baseId), 'People']]);
    const columns = await sql({
      query: `SELECT count(*) FROM information_schema.columns WHERE table_name = 'Secrets' OR table_schema LIKE 'base%'`,
    }).expect(200);
    expect(columns.body.rows).toEqual([[0]]);
  });

  it('a query of 100 million generated rows is capped at its limit', async () => {
    // Generating all of them takes far past the 1 s timeout here: a 200 means the rows were
    // read no further than the limit, not generated to the end.
    const res = await sql({ query: 'SELECT generate_series(1, 100000000) AS n', limit: 3 }).expect(200);
    expect(res.body).toMatchObject({ rows: [[1], [2], [3]], rowCount: 3, truncated: true });
  });

  it('the role is a login of its own: no superuser, no inheritance, no memberships, read-only', async () => {
    const role = sqlRoleName(baseId);
    const { rows } = await h.db.pool.query(
      `SELECT rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls, rolconnlimit,
              (SELECT count(*)::int FROM pg_auth_members WHERE member = r.oid) AS memberships,
              (SELECT setconfig FROM pg_db_role_setting WHERE setrole = r.oid AND setdatabase = 0) AS settings
         FROM pg_roles r WHERE rolname = $1`,
      [role],
    );
    expect(rows[0]).toMatchObject({
      rolsuper: false,
      rolinherit: false,
      rolcreaterole: false,
      rolcreatedb: false,
      rolreplication: false,
      rolbypassrls: false,
      memberships: 0,
    });
    expect(rows[0].rolconnlimit).toBeGreaterThan(0);
    expect(rows[0].settings).toEqual(
      expect.arrayContaining(['default_transaction_read_only=on', `statement_timeout=${TIMEOUT_MS}ms`]),
    );
  });

  it("takes the limits of each process's configuration, not only of the one that made it", async () => {
    const restarted = await startHarness({
      sameDatabaseAs: h,
      sqlStatementTimeoutMs: 2500,
      sqlConnectionsPerBase: 3,
    });
    try {
      await restarted.api
        .post(`/api/v1/bases/${baseId}/sql`)
        .set('Authorization', restarted.bearer(restarted.rootKey))
        .send({ query: 'SELECT 1' })
        .expect(200);
      const { rows } = await h.db.pool.query(
        `SELECT r.rolconnlimit, s.setconfig FROM pg_roles r
           JOIN pg_db_role_setting s ON s.setrole = r.oid AND s.setdatabase = 0 WHERE r.rolname = $1`,
        [sqlRoleName(baseId)],
      );
      expect(rows[0].rolconnlimit).toBe(3);
      expect(rows[0].setconfig).toContain('statement_timeout=2500ms');
    } finally {
      await restarted.close();
    }
  });

  it('its password is stored encrypted, and PostgreSQL holds only its SCRAM verifier', async () => {
    const { rows } = await h.db.pool.query(
      `SELECT s.password_encrypted, a.rolpassword FROM database_sql_roles s
         JOIN pg_authid a ON a.rolname = s.role_name WHERE s.database_id = $1`,
      [baseId],
    );
    const password = decryptSecret(h.webhookSecretKey, rows[0].password_encrypted);
    expect(rows[0].password_encrypted).not.toContain(password);
    expect(password.length).toBeGreaterThanOrEqual(40);
    const verifier: string = rows[0].rolpassword;
    expect(verifier.startsWith('SCRAM-SHA-256$')).toBe(true);
    const salt = Buffer.from(verifier.split('$')[1]!.split(':')[1]!, 'base64');
    expect(scramVerifier(password, salt)).toBe(verifier);
  });

  it('deleting the database drops its role', async () => {
    const doomed = await createBase(h, {
      name: 'Doomed',
      tables: [{ name: 'T', fields: [{ name: 'A', type: 'number' }] }],
    });
    await sql({ query: 'SELECT * FROM "T"' }, doomed.body.id).expect(200);
    const role = sqlRoleName(doomed.body.id);
    const count = async () =>
      (await h.db.pool.query('SELECT count(*)::int AS n FROM pg_roles WHERE rolname = $1', [role])).rows[0].n;
    expect(await count()).toBe(1);
    await h.api.delete(`/api/v1/bases/${doomed.body.id}`).set('Authorization', auth).expect(200);
    expect(await count()).toBe(0);
  });
});

describe('bounded connections', () => {
  let small: Harness;
  /** A second process on the same PostgreSQL database, sharing the roles' connection limits. */
  let twin: Harness;
  let bases: string[];
  beforeAll(async () => {
    small = await startHarness({ sqlMaxConnections: 2, sqlConnectionsPerBase: 2 });
    twin = await startHarness({ sqlMaxConnections: 8, sqlConnectionsPerBase: 2, sameDatabaseAs: small });
    bases = [];
    for (const name of ['A', 'B', 'C']) {
      const base = await createBase(small, {
        name,
        tables: [{ name: 'T', fields: [{ name: 'N', type: 'number' }] }],
      });
      bases.push(base.body.id);
    }
  });
  afterAll(async () => {
    await twin.close();
    await small.close();
  });

  /** Runs the queries while sampling how many connections the roles of `roles` hold at once. */
  async function mostConnections(roles: string[], queries: () => Promise<{ status: number }[]>) {
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await small.db.pool.query(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = ANY($1)',
          [roles],
        );
        most = Math.max(most, rows[0].n);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const answers = await queries();
    sampling = false;
    await sampler;
    return { most, answers };
  }

  const slowQuery = (harness: Harness, database: string) =>
    harness.api
      .post(`/api/v1/bases/${database}/sql`)
      .set('Authorization', harness.bearer(harness.rootKey))
      .send({ query: 'SELECT pg_sleep(0.2), 1 AS one' });

  it('never holds more than SQL_MAX_CONNECTIONS; queries past it wait their turn', async () => {
    const { most, answers } = await mostConnections(bases.map(sqlRoleName), () =>
      Promise.all(Array.from({ length: 9 }, (_, index) => slowQuery(small, bases[index % bases.length]!))),
    );
    for (const answer of answers) expect(answer.status).toBe(200);
    expect(most).toBeGreaterThanOrEqual(1);
    expect(most).toBeLessThanOrEqual(2);
  });

  it("keeps to a database's connection limit shared by processes: queries past it wait, none fails", async () => {
    const base = bases[0]!;
    const { most, answers } = await mostConnections([sqlRoleName(base)], () =>
      Promise.all(Array.from({ length: 12 }, (_, index) => slowQuery(index % 2 ? small : twin, base))),
    );
    for (const answer of answers) expect(answer.status).toBe(200);
    expect(most).toBeGreaterThanOrEqual(1);
    expect(most).toBeLessThanOrEqual(2);
  });
});
