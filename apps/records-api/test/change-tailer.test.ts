import { randomUUID } from 'node:crypto';
import { appendOutboxEvent, latestChangePosition } from '@recordbase/db';
import { type ChangeSink, type ChangeTailer, createChangeTailer } from '@recordbase/domain/change-tailer';
import { type Harness, startHarness } from './harness';

/**
 * The process's tail of the change feed, under its streams: streams joining at different places
 * while writers commit out of order each get every event after their start exactly once, in
 * feed order, however the catch-up and the tail's polls interleave; a stream whose client does not
 * take what is sent is dropped, the others go on.
 */

let h: Harness;
let tailer: ChangeTailer;
const databaseId = randomUUID();

beforeAll(async () => {
  h = await startHarness();
  await h.db.pool.query('INSERT INTO databases (id, name, schema_name) VALUES ($1, $2, $3)', [
    databaseId,
    'Tail',
    `base_${databaseId.replaceAll('-', '')}`,
  ]);
  tailer = createChangeTailer(h.db.pool, {
    render: (change) => `${change.cursor} ${JSON.parse(change.json).id}\n`,
    pollMs: 5,
    batch: 7,
  });
});
afterAll(async () => {
  tailer.close();
  await h.close();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** One event in a transaction of its own, held open `holdMs` before committing. */
async function write(holdMs: number): Promise<string> {
  const client = await h.db.pool.connect();
  try {
    await client.query('BEGIN');
    const { id } = await appendOutboxEvent(client, {
      databaseId,
      tableId: 'tblTail000000001',
      type: 'record.created',
      source: 'public_api',
      dataJson: '{}',
    });
    await sleep(holdMs);
    await client.query('COMMIT');
    return `evt_${id}`;
  } finally {
    client.release();
  }
}

/** A sink that records what it receives and can be made to refuse (a client that stopped reading). */
function recordingSink(refuseAfter = Number.POSITIVE_INFINITY) {
  const controller = new AbortController();
  const received: string[] = [];
  let ended = false;
  const sink: ChangeSink = {
    send(rendered) {
      for (const line of rendered.split('\n').filter(Boolean)) received.push(line.split(' ')[1]!);
      return received.length < refuseAfter;
    },
    drained: async () => {},
    heartbeat() {},
    end() {
      ended = true;
    },
    signal: controller.signal,
  };
  return { sink, received, close: () => controller.abort(), ended: () => ended };
}

test('streams joining at different places each get every later event once, in order', async () => {
  const start = await latestChangePosition(h.db.pool);
  const committed: string[] = [];
  const streams = [recordingSink(), recordingSink(), recordingSink()];
  const following: Promise<void>[] = [];
  const writers = Array.from({ length: 4 }, async (_, writer) => {
    for (let i = 0; i < 25; i += 1) {
      committed.push(await write((writer * 5 + i * 7) % 13));
      // Streams join from the start at different moments: one before any write, one while the
      // writes go on, one near the end (a long catch-up, then the tail).
      if (writer === 0 && (i === 0 || i === 12 || i === 22)) {
        following.push(tailer.follow({ databaseId }, start, streams[following.length]!.sink));
      }
    }
  });
  await Promise.all(writers);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && streams.some((stream) => stream.received.length < committed.length)) {
    await sleep(20);
  }
  // The reference order is the feed's own, read after every write has committed.
  const { rows } = await h.db.pool.query<{ id: string }>(
    `SELECT 'evt_' || id AS id FROM outbox_events WHERE database_id = $1::uuid
      AND (COALESCE(xid, '0'::xid8), seq) > ($2::xid8, $3::bigint)
      ORDER BY COALESCE(xid, '0'::xid8), seq`,
    [databaseId, start.xid, start.seq],
  );
  expect(rows).toHaveLength(100);
  for (const stream of streams) expect(stream.received).toEqual(rows.map((row) => row.id));
  for (const stream of streams) stream.close();
  await Promise.all(following);
  expect(tailer.streams()).toBe(0);
});

test('drops a stream whose client stops taking events; the others go on', async () => {
  const start = await latestChangePosition(h.db.pool);
  const slow = recordingSink(3);
  const steady = recordingSink();
  const slowEnded = tailer.follow({ databaseId }, start, slow.sink);
  const steadyFollowing = tailer.follow({ databaseId }, start, steady.sink);
  await sleep(50);
  const written: string[] = [];
  for (let i = 0; i < 8; i += 1) written.push(await write(0));
  await slowEnded;
  expect(slow.ended()).toBe(true);
  expect(slow.received.length).toBeGreaterThanOrEqual(3);
  expect(slow.received).toEqual(written.slice(0, slow.received.length));
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline && steady.received.length < written.length) await sleep(20);
  expect(steady.received).toEqual(written);
  expect(tailer.streams()).toBe(1);
  steady.close();
  await steadyFollowing;
});

test('sends every open stream a heartbeat each interval, caught up or not', async () => {
  const beating = createChangeTailer(h.db.pool, {
    render: (change) => `${change.cursor}\n`,
    heartbeatMs: 30,
  });
  try {
    const beats: number[] = [0, 0];
    const streams = beats.map((_, index) => {
      const controller = new AbortController();
      const sink: ChangeSink = {
        send: () => true,
        drained: async () => {},
        heartbeat() {
          beats[index] = beats[index]! + 1;
        },
        end() {},
        signal: controller.signal,
      };
      return {
        following: beating.follow({ databaseId }, { xid: '0', seq: '0' }, sink),
        close: () => controller.abort(),
      };
    });
    // Each stream hears heartbeat after heartbeat; waited for rather than timed, as timers on a
    // busy machine run late.
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && beats.some((count) => count < 3)) await sleep(20);
    for (const count of beats) expect(count).toBeGreaterThanOrEqual(3);
    for (const stream of streams) stream.close();
    await Promise.all(streams.map((stream) => stream.following));
    const after = [...beats];
    await sleep(100);
    expect(beats).toEqual(after);
  } finally {
    beating.close();
  }
});
