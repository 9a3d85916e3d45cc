import { type PrivatePostgres, startPrivatePostgres, withPool } from './private-postgres';
import { type Stack, serviceNames, startStack } from './stack';
import { expectNoWriteLostOrHalfWritten, newWriteTable, startWriteLoad } from './write-load';

/**
 * PostgreSQL failing under a write load of concurrent bulk creates (10 records each):
 * - restarted (a crash: `pg_ctl -m immediate`) — in a private cluster of this test's own, never
 *   the machine's shared PostgreSQL;
 * - the services' connections killed mid-request (`pg_terminate_backend`, only those to this
 *   test's own database).
 * Each write is answered 2xx or 503 with Retry-After, never 500; afterwards every acknowledged
 * record is there exactly once, and no request's records are there in part.
 * Both are quick (well under a minute) and run in `npm test`.
 */

const WRITERS = 6;

/** Every service is still up (none crashed on the lost connections) and ready again. */
async function expectAllServicesReady(stack: Stack) {
  const deadline = Date.now() + 30_000;
  for (const name of serviceNames) {
    for (;;) {
      const status = await fetch(`http://127.0.0.1:${stack.ports[name]}/readyz`).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) break;
      if (Date.now() > deadline)
        throw new Error(`${name} is not ready (${status}):\n${stack.logs(name).slice(-2000)}`);
      await new Promise((done) => setTimeout(done, 200));
    }
  }
}

describe('PostgreSQL faults under write load', () => {
  let postgres: PrivatePostgres | undefined;
  let stack: Stack | undefined;

  afterEach(async () => {
    await stack?.stop();
    await postgres?.destroy();
    stack = undefined;
    postgres = undefined;
  });

  it('PostgreSQL restarted (crash) mid-load: 2xx or 503 + Retry-After, no acknowledged write lost, none half-written', async () => {
    postgres = await startPrivatePostgres();
    stack = await startStack({ database: postgres.database });
    const baseId = await newWriteTable(stack);
    const load = startWriteLoad(stack, baseId, WRITERS);
    try {
      await load.waitForSuccesses(20, 30_000);
      await postgres.stop('immediate');
      // Long enough for every writer to meet the outage.
      await new Promise((done) => setTimeout(done, 2000));
      await postgres.start();
      await load.waitForSuccesses(20, 60_000);
    } finally {
      await load.stop();
    }
    const summary = await expectNoWriteLostOrHalfWritten(stack, baseId, load.outcomes);
    // The outage was met (refusals), and writes went on after it.
    expect(summary.refused).toBeGreaterThan(0);
    expect(summary.acknowledged).toBeGreaterThanOrEqual(40);
    await expectAllServicesReady(stack);
  });

  it("the services' PostgreSQL connections killed mid-request: 2xx or 503 + Retry-After, nothing lost or half-written", async () => {
    stack = await startStack();
    const current = stack;
    const baseId = await newWriteTable(current);
    const load = startWriteLoad(current, baseId, WRITERS);
    let killed = 0;
    try {
      await load.waitForSuccesses(10, 30_000);
      await withPool(current.database.url.replace(/\/[^/]+$/, '/postgres'), async (pool) => {
        for (let round = 0; round < 10; round++) {
          // Only this test's database, and only the services' connections (not this pool's).
          const { rowCount } = await pool.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE datname = $1 AND pid <> pg_backend_pid()
                AND application_name IN ('records-api', 'upload-service', 'webhook-dispatcher', 'import-worker')`,
            [current.database.name],
          );
          killed += rowCount ?? 0;
          await new Promise((done) => setTimeout(done, 300));
        }
      });
      // Six writers' bulk writes, each sent again after a refusal: on a machine the rest of the
      // suite keeps busy, twenty of them may take more than a minute after the kills.
      await load.waitForSuccesses(20, 120_000);
    } finally {
      await load.stop();
    }
    expect(killed).toBeGreaterThan(0);
    const summary = await expectNoWriteLostOrHalfWritten(current, baseId, load.outcomes);
    expect(summary.acknowledged).toBeGreaterThanOrEqual(30);
    await expectAllServicesReady(current);
  }, 240_000);
});
