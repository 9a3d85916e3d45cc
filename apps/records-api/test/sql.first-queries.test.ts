import { sqlViewSchemaName } from '@recordbase/db/physical';
import { createBase, type Harness, startHarness } from './harness';

/**
 * A database's first SQL queries make its query role and its views. Arriving together (a client's
 * burst, or every tenant of a soak at once), they must make them once: each rebuild drops the
 * views under queries already running on them, and each waiting transaction holds a pooled
 * connection that every other request of the process needs.
 */

let h: Harness;
let auth: string;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  // Every creation of a schema in this database, as PostgreSQL runs it: rebuilds of views included.
  await h.db.pool.query(`
    CREATE TABLE test_created_schemas (name text NOT NULL);
    CREATE FUNCTION test_note_created_schemas() RETURNS event_trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO test_created_schemas
        SELECT object_identity FROM pg_event_trigger_ddl_commands() WHERE command_tag = 'CREATE SCHEMA';
    END $$;
    CREATE EVENT TRIGGER test_note_created_schemas ON ddl_command_end
      WHEN TAG IN ('CREATE SCHEMA') EXECUTE FUNCTION test_note_created_schemas();
  `);
});
afterAll(async () => {
  await h.db.pool.query('DROP EVENT TRIGGER IF EXISTS test_note_created_schemas');
  await h.close();
});

async function timesBuilt(schema: string): Promise<number> {
  const { rows } = await h.db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM test_created_schemas WHERE name = $1',
    [schema],
  );
  return rows[0]!.n;
}

/** A new base of one table, Deals, and its views' schema. */
async function dealsBase(name: string): Promise<{ baseId: string; views: string }> {
  const base = await createBase(h, {
    name,
    tables: [{ name: 'Deals', fields: [{ name: 'Amount', type: 'number' }] }],
  });
  return { baseId: base.body.id, views: sqlViewSchemaName(base.body.id) };
}

describe("a database's first SQL queries", () => {
  it('make its role and rebuild its views once, however many arrive together', async () => {
    const { baseId, views } = await dealsBase('Burst');
    const builtWithTheBase = await timesBuilt(views);
    expect(builtWithTheBase).toBeGreaterThan(0);

    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        h.api
          .post(`/api/v1/bases/${baseId}/sql`)
          .set('Authorization', auth)
          .send({ query: 'SELECT count(*) AS n FROM "Deals"' }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    // Once to grant the new role the views, not once per query.
    expect((await timesBuilt(views)) - builtWithTheBase).toBe(1);

    // Later queries, and the schema route's check, build nothing.
    await h.api
      .post(`/api/v1/bases/${baseId}/sql`)
      .set('Authorization', auth)
      .send({ query: 'SELECT 1 AS one' })
      .expect(200);
    expect((await timesBuilt(views)) - builtWithTheBase).toBe(1);
  });

  it('of a database without views (one made before they existed) build them once', async () => {
    const { baseId, views } = await dealsBase('Older');
    await h.db.pool.query(`DROP SCHEMA "${views}" CASCADE`);
    const before = await timesBuilt(views);
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        h.api.get(`/api/v1/bases/${baseId}/sql/schema`).set('Authorization', auth),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    expect(answers[0]!.body).toEqual(answers[3]!.body);
    expect((await timesBuilt(views)) - before).toBe(1);
  });
});
