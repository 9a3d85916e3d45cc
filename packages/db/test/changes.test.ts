import { randomUUID } from 'node:crypto';
import { eventBodyJson } from '@recordbase/contracts/events';
import pg from 'pg';
import {
  appendOutboxEvent,
  type ChangePosition,
  latestChangePosition,
  pruneDispatchedEvents,
  readChanges,
} from '../src';
import { createTestDatabase, type TestDatabase } from '../src/testing';

/**
 * The change feed's read of the outbox: a reader following its position while writers on several
 * connections commit (and roll back) out of the order their events were numbered sees every
 * committed event exactly once, and none rolled back.
 */

let testDb: TestDatabase;
let pool: pg.Pool;
const databaseId = randomUUID();
const otherDatabaseId = randomUUID();

beforeAll(async () => {
  testDb = await createTestDatabase();
  pool = new pg.Pool({ connectionString: testDb.url, max: 12 });
  // The database's drop (WITH FORCE) may reach a connection the pool is still closing.
  pool.on('error', () => {});
  for (const id of [databaseId, otherDatabaseId]) {
    await pool.query('INSERT INTO databases (id, name, schema_name) VALUES ($1, $2, $3)', [
      id,
      'Changes',
      `base_${id.replaceAll('-', '')}`,
    ]);
  }
});
afterAll(async () => {
  await pool?.end();
  await testDb?.drop();
});

/** A page that was read (neither expired nor ahead). */
async function readPage(options: Parameters<typeof readChanges>[1]) {
  const page = await readChanges(pool, options);
  if (page.outcome !== 'read') throw new Error(`the read was ${page.outcome}`);
  return page;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** An event in a transaction of its own, committed or rolled back after `holdMs`. */
async function write(
  database: string,
  tag: string,
  holdMs: number,
  commit: boolean,
  type: 'record.created' | 'table.created' = 'record.created',
): Promise<string> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { id } = await appendOutboxEvent(client, {
      databaseId: database,
      tableId: 'tblChanges0000001',
      type,
      source: 'public_api',
      dataJson: JSON.stringify({ tag }),
    });
    await sleep(holdMs);
    await client.query(commit ? 'COMMIT' : 'ROLLBACK');
    return id;
  } finally {
    client.release();
  }
}

it('hands out every committed event exactly once while writers commit out of order', async () => {
  const committed = new Set<string>();
  const rolledBack = new Set<string>();
  let writing = true;
  // Six writers: each event's transaction stays open 0-30 ms, so later-numbered events often commit
  // first; one in eight rolls back.
  const writers = Array.from({ length: 6 }, async (_, writer) => {
    for (let i = 0; i < 40; i++) {
      const commit = (writer + i) % 8 !== 0;
      const id = await write(databaseId, `${writer}.${i}`, (writer * 7 + i * 13) % 31, commit);
      (commit ? committed : rolledBack).add(id);
      // Another database's events are never this feed's.
      if (i % 10 === 0) await write(otherDatabaseId, 'elsewhere', 0, true);
    }
  });
  const seen: string[] = [];
  let position: ChangePosition | undefined;
  const reader = (async () => {
    for (;;) {
      const done = !writing;
      const page = await readPage({
        databaseId,
        limit: 7,
        ...(position ? { after: position } : {}),
      });
      seen.push(...page.changes.map((change) => change.id));
      position = page.position;
      if (done && !page.hasMore) return;
      if (!page.hasMore) await sleep(3);
    }
  })();
  await Promise.all(writers);
  writing = false;
  await reader;
  expect(new Set(seen).size).toBe(seen.length);
  expect(seen.filter((id) => rolledBack.has(id))).toEqual([]);
  expect(new Set(seen)).toEqual(committed);
  expect(committed.size).toBe(210);
});

it('filters by type, starts from the latest position, and waits for transactions still open', async () => {
  const latest = await latestChangePosition(pool);
  expect((await readPage({ databaseId, after: latest, limit: 10 })).changes).toEqual([]);
  // An open transaction's event holds back those of transactions that began after it.
  const holder = await pool.connect();
  await holder.query('BEGIN');
  const { id: held } = await appendOutboxEvent(holder, {
    databaseId,
    tableId: null,
    type: 'table.created',
    source: 'public_api',
    dataJson: '{}',
  });
  const after = await write(databaseId, 'after', 0, true);
  expect((await readPage({ databaseId, after: latest, limit: 10 })).changes).toEqual([]);
  await holder.query('COMMIT');
  holder.release();
  const page = await readPage({ databaseId, after: latest, limit: 10 });
  expect(page.changes.map((change) => change.id)).toEqual([held, after]);
  const tables = await readPage({ databaseId, after: latest, limit: 10, types: ['table.created'] });
  expect(tables.changes.map((change) => change.id)).toEqual([held]);
  // Read to the end, the position stays put until something new commits.
  const end = await readPage({ databaseId, after: page.position, limit: 10 });
  expect([end.changes, end.hasMore]).toEqual([[], false]);
});

it('answers expired before the cut retention left, reads on after it, and refuses a place never reached', async () => {
  const databaseOfCut = randomUUID();
  await pool.query('INSERT INTO databases (id, name, schema_name) VALUES ($1, $2, $3)', [
    databaseOfCut,
    'Cut',
    `base_${databaseOfCut.replaceAll('-', '')}`,
  ]);
  const before = await latestChangePosition(pool);
  const ids = [];
  for (const tag of ['one', 'two', 'three'])
    ids.push(await write(databaseOfCut, tag, 0, true, 'table.created'));
  const all = await readPage({ databaseId: databaseOfCut, limit: 10 });
  expect(all.changes.map((change) => change.id)).toEqual(ids);
  // The first two delivered and past retention; the third still has a delivery open (not
  // dispatched). The database has no webhook, so all three were appended dispatched already.
  await pool.query('UPDATE outbox_events SET dispatched_at = NULL WHERE id = $1::uuid', [ids[2]]);
  expect(await pruneDispatchedEvents(pool, 0, 1000)).toBeGreaterThanOrEqual(2);

  expect(await readChanges(pool, { databaseId: databaseOfCut, after: before, limit: 10 })).toEqual({
    outcome: 'expired',
  });
  expect(
    await readChanges(pool, { databaseId: databaseOfCut, after: all.changes[0]!.position, limit: 10 }),
  ).toEqual({ outcome: 'expired' });
  // From the start, the feed begins where retention cut it.
  for (const after of [undefined, all.changes[1]!.position]) {
    const rest = await readPage({ databaseId: databaseOfCut, limit: 10, ...(after ? { after } : {}) });
    expect(rest.changes.map((change) => change.id)).toEqual([ids[2]]);
  }
  // Another database's feed is not cut by it.
  expect((await readChanges(pool, { databaseId, after: before, limit: 1 })).outcome).toBe('read');

  const beyond = { xid: (BigInt((await latestChangePosition(pool)).xid) + 1000n).toString(), seq: '1' };
  expect(await readChanges(pool, { databaseId, after: beyond, limit: 1 })).toEqual({ outcome: 'ahead' });
});

it('renders each body exactly as the webhook body without a delivery (contracts/events.ts)', async () => {
  const before = await latestChangePosition(pool);
  const data = {
    tableId: 'tblChanges0000001',
    text: 'quote " backslash \\ é 😀 \u2028 <>&',
    nested: [1, 2.5, null, true],
  };
  const client = await pool.connect();
  try {
    await appendOutboxEvent(client, {
      databaseId,
      tableId: 'tblChanges0000001',
      type: 'record.updated',
      source: 'restore',
      dataJson: JSON.stringify(data),
    });
  } finally {
    client.release();
  }
  const [change] = (await readPage({ databaseId, after: before, limit: 1 })).changes;
  const stored = await pool.query<{ created_at: Date; data: string }>(
    'SELECT created_at, data::text AS data FROM outbox_events WHERE id = $1::uuid',
    [change!.id],
  );
  expect(change!.bodyJson).toBe(
    eventBodyJson({
      eventId: change!.id,
      type: 'record.updated',
      createdAt: stored.rows[0]!.created_at,
      dataJson: stored.rows[0]!.data,
      databaseId,
      source: 'restore',
    }),
  );
  expect(JSON.parse(change!.bodyJson).data).toEqual(data);
});

it('is not held back by a transaction in another database of the server, only by one in its own', async () => {
  const otherUrl = new URL(testDb.url);
  otherUrl.pathname = '/postgres';
  const elsewhere = new pg.Client({ connectionString: otherUrl.toString() });
  await elsewhere.connect();
  try {
    await elsewhere.query('BEGIN');
    // An id of its own, older than the event's below: the snapshot's xmin would wait for it.
    await elsewhere.query('SELECT pg_current_xact_id()');
    const latest = await latestChangePosition(pool);
    const id = await write(databaseId, 'beside another database', 0, true);
    const page = await readPage({ databaseId, after: latest, limit: 10 });
    expect(page.changes.map((change) => change.id)).toEqual([id]);
  } finally {
    await elsewhere.query('ROLLBACK');
    await elsewhere.end();
  }
});
