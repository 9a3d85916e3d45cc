import { freePort, type RunningService, startService } from '@recordbase/launcher';
import { withPool } from './private-postgres';
import { type SseFrame, sseFrames } from './sse';
import { type Stack, startStack } from './stack';

/**
 * The change feed under concurrent writes, as the contract promises it: writers on two records-api
 * processes and several connections each, a reader following the cursor and two readers following
 * the stream (one per process), and one records-api SIGKILLed and started again in the middle.
 * Every committed event is seen by every reader exactly once, all in one order, in which each
 * writer's events come in the order it wrote them (a write that committed before the next began
 * must come first). Readers and writers move to the other process while one is down; the stream
 * readers resume from the last id they received.
 */

jest.setTimeout(180_000);

let stack: Stack;
let replica: RunningService;
let baseId: string;
let origins: string[];

beforeAll(async () => {
  stack = await startStack();
  replica = await startService({
    name: 'records-api',
    port: await freePort(),
    env: stack.env,
    output: 'pipe',
  });
  origins = [`http://127.0.0.1:${stack.ports['records-api']}`, `http://127.0.0.1:${replica.port}`];
  const base = await stack.api('POST', '/bases', {
    name: 'Feed under load',
    tables: [{ name: 'Items', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  expect(base.status).toBe(201);
  baseId = base.body.id;
});
afterAll(async () => {
  await replica?.stop();
  await stack?.stop();
});

const headers = () => ({ authorization: `Bearer ${stack.rootKey}`, 'content-type': 'application/json' });
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const feedPath = (suffix = '') => `/api/v1/bases/${baseId}/changes${suffix}`;

/** A request to one process, and to the other when the first cannot be reached (it is down). */
async function toEither(first: number, path: string, init: RequestInit = {}): Promise<Response> {
  for (let attempt = 0; ; attempt += 1) {
    const origin = origins[(first + attempt) % 2]!;
    try {
      return await fetch(`${origin}${path}`, { ...init, headers: { ...headers(), ...init.headers } });
    } catch (error) {
      if (attempt >= 40) throw error;
      await sleep(50);
    }
  }
}

interface Change {
  id: string;
  data: { recordIds?: string[] };
}

/** Follows the feed's cursor, 7 at a time, alternating processes, until `done()` and caught up. */
async function followCursor(start: string, done: () => boolean): Promise<string[]> {
  const seen: string[] = [];
  let cursor = start;
  for (let round = 0; ; round += 1) {
    const finished = done();
    const response = await toEither(round, feedPath(`?limit=7&cursor=${cursor}`));
    if (response.status !== 200) {
      // A process going down mid-answer; the cursor is unchanged, so the read is simply repeated.
      await sleep(20);
      continue;
    }
    const page = (await response.json()) as { changes: Change[]; cursor: string; hasMore: boolean };
    seen.push(...page.changes.map((change) => change.id));
    cursor = page.cursor;
    if (finished && !page.hasMore) return seen;
    if (!page.hasMore) await sleep(10);
  }
}

/**
 * Follows the stream from process `first`, resuming from the last id received on whichever
 * process answers when the connection breaks, until `enough()` says it has all it needs.
 */
async function followStream(first: number, start: string, enough: (seen: string[]) => boolean) {
  const seen: string[] = [];
  let lastId = start;
  let reconnects = 0;
  let abort = new AbortController();
  // The stream only ends when the reader closes it: checked here, not only when an event comes.
  const watch = setInterval(() => {
    if (enough(seen)) abort.abort();
  }, 50);
  try {
    for (let attempt = first; !enough(seen); attempt += 1) {
      abort = new AbortController();
      try {
        const response = await toEither(attempt, feedPath('/stream'), {
          headers: { 'last-event-id': lastId, accept: 'text/event-stream' },
          signal: abort.signal,
        });
        if (response.status !== 200) {
          await sleep(50);
          continue;
        }
        for await (const frame of sseFrames(response) as AsyncGenerator<SseFrame>) {
          seen.push((JSON.parse(frame.data) as Change).id);
          lastId = frame.id!;
        }
      } catch {
        // The process was killed under the stream, or the reader has all it needs.
      } finally {
        abort.abort();
      }
      if (!enough(seen)) reconnects += 1;
    }
  } finally {
    clearInterval(watch);
  }
  return { seen, reconnects };
}

test('every committed event reaches every reader once, in one order, across a SIGKILL', async () => {
  const latest = await toEither(0, feedPath('?cursor=latest'));
  const start = ((await latest.json()) as { cursor: string }).cursor;
  let writing = true;
  // Each writer's record ids in the order its writes were answered.
  const written: string[][] = [];
  const writers = Array.from({ length: 4 }, async (_, writer) => {
    const mine: string[] = [];
    written.push(mine);
    for (let i = 0; i < 40; i += 1) {
      const response = await toEither(writer + i, `/api/v1/bases/${baseId}/tables/Items/records/bulk`, {
        method: 'POST',
        body: JSON.stringify({ records: [{ Name: `w${writer}.${i}` }, { Name: `w${writer}.${i}b` }] }),
      }).catch(() => null);
      if (response?.status === 201) {
        const body = (await response.json()) as { records: { id: string }[] };
        mine.push(body.records[0]!.id);
      }
      await sleep(5);
    }
  });
  const cursorReader = followCursor(start, () => !writing);
  let expectedCount = Number.POSITIVE_INFINITY;
  const streamReaders = [0, 1].map((first) =>
    followStream(first, start, (seen) => seen.length >= expectedCount),
  );

  // records-api of the stack killed while everything runs, and started again.
  await sleep(1500);
  await stack.kill('records-api', 'SIGKILL');
  await sleep(1000);
  await stack.start('records-api');

  await Promise.all(writers);
  writing = false;
  const followed = await cursorReader;

  // The reference: what the outbox holds for the database, every committed event there is.
  const committed = await withPool(stack.database.url, (pool) =>
    pool.query<{ id: string }>(
      `SELECT 'evt_' || id AS id FROM outbox_events WHERE database_id = $1::uuid AND NOT suppressed
      AND (COALESCE(xid, '0'::xid8), seq) > ($2::xid8, $3::bigint)`,
      [baseId, ...start.split('-')],
    ),
  );
  expectedCount = committed.rows.length;
  expect(new Set(followed)).toEqual(new Set(committed.rows.map((row) => row.id)));
  expect(followed).toHaveLength(expectedCount);

  const streamed = await Promise.race([
    Promise.all(streamReaders),
    sleep(60_000).then(() => {
      throw new Error('the stream readers did not receive every event within 60 s');
    }),
  ]);
  for (const { seen } of streamed) expect(seen).toEqual(followed);
  // The stack's own process was killed under its stream: that reader resumed at least once.
  expect(streamed[0]!.reconnects).toBeGreaterThanOrEqual(1);

  // Each writer's records come in the order the writer got its answers.
  const order = new Map(followed.map((id, index) => [id, index]));
  const bodies = await withPool(stack.database.url, (pool) =>
    pool.query<{ id: string; first: string }>(
      `SELECT 'evt_' || id AS id, data -> 'recordIds' ->> 0 AS first FROM outbox_events
      WHERE database_id = $1::uuid AND type = 'record.created'`,
      [baseId],
    ),
  );
  const eventOfRecord = new Map(bodies.rows.map((row) => [row.first, row.id]));
  for (const mine of written) {
    const positions = mine.map((recordId) => order.get(eventOfRecord.get(recordId)!)!);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  }
  expect(written.flat().length).toBeGreaterThan(100);
});
