import { decryptSecret } from '@recordbase/db';
import { sqlRoleName } from '@recordbase/db/physical';
import { createSqlConnections } from '@recordbase/domain/sql/connections';
import pg from 'pg';
import { createBase, type Harness, startHarness } from './harness';

/**
 * Queries built to outlive every limit of read-only SQL, as a hostile tenant with one key would
 * send them. Each must be answered within the time limit plus a margin, leave no backend running,
 * leave every connection slot of the database usable, and leave the process serving.
 */

const TIMEOUT_MS = 1000;
const SLOTS = 4;
/** The statement timeout, the grace before the cancel and before the backend is terminated, a margin. */
const ANSWERED_WITHIN_MS = TIMEOUT_MS + 2000 + 4000;

/** Catches the cancel PostgreSQL sends at the statement timeout, and the one the service sends. */
const TRAPS_THE_CANCEL = `DO $$BEGIN LOOP BEGIN PERFORM count(*) FROM generate_series(1, 50000000);
  EXCEPTION WHEN query_canceled THEN NULL; END; END LOOP; END$$`;

let h: Harness;
let auth: string;
let baseId: string;
let role: string;

const sql = (body: object) =>
  h.api
    .post(`/api/v1/bases/${baseId}/sql`)
    .set('Authorization', auth)
    .timeout(ANSWERED_WITHIN_MS + 5000)
    .send(body);

async function timed<T>(work: () => PromiseLike<T>): Promise<{ result: T; ms: number }> {
  const started = Date.now();
  const result = await work();
  return { result, ms: Date.now() - started };
}

/** The role's backends still running something, polled until none is or `withinMs` passes. */
async function runningBackends(withinMs: number): Promise<number> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const { rows } = await h.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1 AND state <> 'idle'`,
      [role],
    );
    const n = rows[0]?.n ?? 0;
    if (n === 0 || Date.now() > deadline) return n;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every slot of the database answers at once: nothing is left holding one. */
async function everySlotAnswers(): Promise<void> {
  const answers = await Promise.all(
    Array.from({ length: SLOTS }, () => sql({ query: 'SELECT 1 AS one, pg_sleep(0.2)' })),
  );
  for (const answer of answers) expect([answer.status, answer.body.rows?.[0]?.[0]]).toEqual([200, 1]);
}

async function stillServing(): Promise<void> {
  await h.api.get('/healthz').expect(200);
  await everySlotAnswers();
}

beforeAll(async () => {
  h = await startHarness({ sqlStatementTimeoutMs: TIMEOUT_MS, sqlConnectionsPerBase: SLOTS });
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Sandbox',
    tables: [{ name: 'People', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  baseId = base.body.id;
  role = sqlRoleName(baseId);
  await sql({ query: 'SELECT 1' }).expect(200);
});
afterAll(async () => {
  // Whatever a failed test left spinning must not outlive the file.
  await h.db.pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [role]);
  await h.close();
});

describe('a PL/pgSQL block that traps the cancel', () => {
  it('is refused: procedural languages are out of the role’s reach', async () => {
    const { result, ms } = await timed(() => sql({ query: TRAPS_THE_CANCEL }));
    expect(result.status).toBe(400);
    expect(result.body.error.message).toMatch(/permission denied for language plpgsql/);
    expect(ms).toBeLessThan(ANSWERED_WITHIN_MS);
    await stillServing();
  });

  describe('were a query able to trap the cancel', () => {
    // Given the language back, the query stands for anything that survives a cancel: what must
    // end it is the service terminating its backend and dropping its connection.
    beforeAll(() => h.db.pool.query(`GRANT USAGE ON LANGUAGE plpgsql TO "${role}"`));
    afterAll(() => h.db.pool.query(`REVOKE USAGE ON LANGUAGE plpgsql FROM "${role}"`));

    it('every slot of the database at once: each answered in time, its backend gone, the slots free', async () => {
      const attacks = await Promise.all(
        Array.from({ length: SLOTS }, () => timed(() => sql({ query: TRAPS_THE_CANCEL }))),
      );
      for (const { result, ms } of attacks) {
        expect(result.status).toBe(400);
        expect(result.body.error.message).toMatch(/past its time limit/);
        expect(ms).toBeLessThan(ANSWERED_WITHIN_MS);
      }
      expect(await runningBackends(2000)).toBe(0);
      await stillServing();
    });

    it('its backend ends by itself when the client goes away (a records-api restarted mid-query)', async () => {
      const secret = await h.db.pool.query<{ password_encrypted: string }>(
        'SELECT password_encrypted FROM database_sql_roles WHERE database_id = $1',
        [baseId],
      );
      const url = new URL((h.db.pool.options as { connectionString: string }).connectionString);
      const connect = async (): Promise<pg.Client> => {
        const client = new pg.Client({
          host: url.hostname,
          port: Number(url.port || 5432),
          database: url.pathname.slice(1),
          user: role,
          password: decryptSecret(h.webhookSecretKey, secret.rows[0]!.password_encrypted),
        });
        client.on('error', () => {});
        try {
          await client.connect();
          return client;
        } catch (error) {
          // The service keeps the role's connections a second after use.
          if ((error as { code?: string }).code !== '53300') throw error;
          await new Promise((resolve) => setTimeout(resolve, 200));
          return connect();
        }
      };
      const client = await connect();
      const pid = (client as unknown as { processID: number }).processID;
      client.query(TRAPS_THE_CANCEL).catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS + 500));
      // Gone without a goodbye, as a process killed mid-query is.
      (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      const deadline = Date.now() + 3000;
      let alive = true;
      while (alive && Date.now() < deadline) {
        const { rows } = await h.db.pool.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
        alive = rows.length > 0;
        if (alive) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(alive).toBe(false);
    });
  });
});

describe('what the query role’s sessions are given', () => {
  it('checks for a client gone away, and keeps its statements and errors out of the server log', async () => {
    const settings = [
      'client_connection_check_interval',
      'log_min_messages',
      'log_min_error_statement',
      'log_parameter_max_length_on_error',
      'log_min_duration_statement',
      'log_statement',
    ];
    const answer = await sql({
      query: `SELECT ${settings.map((name) => `current_setting('${name}')`).join(', ')}`,
    }).expect(200);
    expect(answer.body.rows[0]).toEqual(['1s', 'fatal', 'panic', '0', '-1', 'none']);
  });

  it('connects with every setting of DATABASE_URL but its user, such as its TLS mode', async () => {
    const url = new URL((h.db.pool.options as { connectionString: string }).connectionString);
    url.searchParams.set('sslmode', 'require');
    const connections = createSqlConnections({
      databaseUrl: url.toString(),
      maxConnections: 1,
      perDatabase: 1,
      acquireTimeoutMs: 5000,
      maxMessageBytes: 1024 * 1024,
    });
    const secret = await h.db.pool.query<{ password_encrypted: string }>(
      'SELECT password_encrypted FROM database_sql_roles WHERE database_id = $1',
      [baseId],
    );
    const credentials = {
      databaseId: baseId,
      user: role,
      password: decryptSecret(h.webhookSecretKey, secret.rows[0]!.password_encrypted),
    };
    try {
      // This server has no TLS: a connection that asks for it is refused, not made in plain text.
      await expect(connections.acquire(credentials)).rejects.toThrow(/SSL/);
    } finally {
      await connections.close();
    }
  });
});
