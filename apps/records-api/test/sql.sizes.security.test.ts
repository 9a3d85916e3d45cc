import { sqlRoleName } from '@recordbase/db/physical';
import { createBase, type Harness, startHarness } from './harness';

/**
 * A value can be built in PostgreSQL up to 1 GB, past the longest string Node can hold: read whole,
 * it would end the process from inside pg's socket handler. Each is refused at its first bytes.
 */

/**
 * Enough for PostgreSQL to build a 600 MB value on a slow machine, and on one the rest of the test
 * suite keeps busy (20 s was not, in a fresh-clone run): each test here may take this and more.
 */
const TIMEOUT_MS = 50_000;
jest.setTimeout(TIMEOUT_MS + 30_000);
const HUGE = 600_000_000;

let h: Harness;
let auth: string;
let baseId: string;

const sql = (query: string) =>
  h.api
    .post(`/api/v1/bases/${baseId}/sql`)
    .set('Authorization', auth)
    .timeout(TIMEOUT_MS + 10_000)
    .send({ query });

beforeAll(async () => {
  h = await startHarness({ sqlStatementTimeoutMs: TIMEOUT_MS });
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Sizes',
    tables: [{ name: 'People', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  baseId = base.body.id;
});
afterAll(() => h.close());

async function nothingLeftRunning(): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const { rows } = await h.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1 AND state <> 'idle'`,
      [sqlRoleName(baseId)],
    );
    if (rows[0]?.n === 0) return;
    if (Date.now() > deadline) throw new Error(`${rows[0]?.n} backends of the query role still running`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('a value too large to be read', () => {
  it('as a row of the result: 400, and the process serves on', async () => {
    const answer = await sql(`SELECT repeat('x', ${HUGE}) AS huge`);
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toMatch(
      /^A row of the result is 572\.2 MB, more than the whole result may be \(SQL_MAX_RESULT_BYTES\)/,
    );
    await nothingLeftRunning();
    await h.api.get('/healthz').expect(200);
    expect((await sql('SELECT 1 AS one').expect(200)).body.rows).toEqual([[1]]);
  });

  it('quoted whole in an error: 400, and the process serves on', async () => {
    const answer = await sql(`SELECT repeat('x', ${HUGE})::int`);
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toMatch(/^The query failed with an error message of 572\.2 MB/);
    await nothingLeftRunning();
    expect((await sql('SELECT 1 AS one').expect(200)).body.rows).toEqual([[1]]);
  });

  it('a long value quoted in a short error is clipped in the answer', async () => {
    const answer = await sql(`SELECT repeat('x', 50000)::int`);
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toMatch(
      /^The query failed: invalid input syntax for type integer: "x+… \(\d+ more characters\) \(SQLSTATE 22P02/,
    );
    expect(answer.body.error.message.length).toBeLessThan(1200);
  });
});
