import { backendPriority, YIELDED_PRIORITY } from '@recordbase/db/testing';
import { createBase, type Harness, startHarness } from './harness';

/**
 * A tenant's long statements yield the CPU to everyone's quick ones, read-only SQL on its query
 * role's own connections included (PostgreSQL is on this machine and the tests run as root, as
 * `npm start` does here).
 */

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ longStatementYieldMs: 150 });
});
afterAll(async () => {
  await h.close();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function backendRunning(query: string): Promise<number> {
  for (const giveUpAt = Date.now() + 3000; Date.now() < giveUpAt; await sleep(20)) {
    const { rows } = await h.db.pool.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE query = $1 AND state = 'active'",
      [query],
    );
    if (rows[0]) return rows[0].pid;
  }
  throw new Error(`no backend ran ${query}`);
}

it("a read-only SQL query that runs long yields its backend's CPU until it ends", async () => {
  const base = await createBase(h, {
    name: 'Long',
    tables: [{ name: 'Deals', fields: [{ name: 'Amount', type: 'number' }] }],
  });
  const query = 'SELECT pg_sleep(1.5)';
  const answer = h.api
    .post(`/api/v1/bases/${base.body.id}/sql`)
    .set('Authorization', h.bearer(h.rootKey))
    .send({ query })
    .then((response) => response);
  const pid = await backendRunning(query);
  await sleep(400);
  expect(backendPriority(pid)).toBe(YIELDED_PRIORITY);
  expect((await answer).status).toBe(200);
});
