import { randomUUID } from 'node:crypto';
import type { DeliveryStatus } from '@recordbase/db';
import { createTestDatabase, type TestDatabase } from '@recordbase/db/testing';
import pg from 'pg';
import { loadConfig } from '../src/config';
import { pruneOnce } from '../src/sweeps/retention';

/**
 * Retention against a real database: rows are written straight into outbox_events,
 * webhook_deliveries and webhook_delivery_attempts, their timestamps set in the past.
 */

const DAY = 86_400_000;
// The events below are record events, which history reads: kept as long as the others here.
const SETTINGS = {
  attemptRetentionMs: 30 * DAY,
  eventRetentionMs: 7 * DAY,
  historyRetentionMs: 7 * DAY,
  trashRetentionMs: 7 * DAY,
};

let testDb: TestDatabase;
let pool: pg.Pool;
let databaseId: string;
const webhookIds: number[] = [];

/** A timestamp `days` ago on PostgreSQL's clock (null stays null). */
const ago = (days: number | null) => (days === null ? null : `${days} days`);

async function insertEvent(options: {
  createdDaysAgo: number;
  dispatchedDaysAgo: number | null;
  type?: string;
  source?: string;
  /** A record event of this table naming these records (record_revisions gets their rows). */
  records?: { tableId: string; ids: string[] };
}): Promise<string> {
  const id = randomUUID();
  await pool.query(
    `INSERT INTO outbox_events (id, database_id, table_id, type, source, data, created_at, dispatched_at)
     VALUES ($1, $2, $5, $6, $7, $8::json, now() - $3::interval, now() - $4::interval)`,
    [
      id,
      databaseId,
      ago(options.createdDaysAgo),
      ago(options.dispatchedDaysAgo),
      options.records?.tableId ?? null,
      options.type ?? 'record.created',
      options.source ?? 'public_api',
      JSON.stringify(
        options.records ? { tableId: options.records.tableId, recordIds: options.records.ids } : {},
      ),
    ],
  );
  return id;
}

/** Record `recordId` deleted by record.deleted event `eventId` and in its table's trash. */
async function trashRecord(tableId: string, recordId: string, eventId: string): Promise<void> {
  await pool.query(
    `INSERT INTO record_trash (table_id, record_id, event_seq, position, stored, links)
     SELECT $1, $2::uuid, seq, 1, '{}', '[]' FROM outbox_events WHERE id = $3`,
    [tableId, recordId, eventId],
  );
}

/** A delivery of `eventId` to the `webhook`-th test webhook, with one attempt per entry of `attemptsDaysAgo`. */
async function insertDelivery(options: {
  eventId: string;
  webhook?: number;
  status: DeliveryStatus;
  updatedDaysAgo: number;
  attemptsDaysAgo?: number[];
}): Promise<string> {
  const attempts = options.attemptsDaysAgo ?? [];
  const created = Math.max(options.updatedDaysAgo, ...attempts);
  const result = await pool.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (event_id, webhook_id, event_type, status, attempts, created_at, updated_at)
     VALUES ($1, $2, 'record.created', $3, $4, now() - $5::interval, now() - $6::interval)
     RETURNING id::text`,
    [
      options.eventId,
      webhookIds[options.webhook ?? 0],
      options.status,
      attempts.length,
      ago(created),
      ago(options.updatedDaysAgo),
    ],
  );
  const deliveryId = result.rows[0]!.id;
  for (const [index, daysAgo] of attempts.entries()) {
    await pool.query(
      `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, duration_ms, created_at)
       VALUES ($1, $2, 500, 12, now() - $3::interval)`,
      [deliveryId, index + 1, ago(daysAgo)],
    );
  }
  return deliveryId;
}

const sorted = (values: string[]) => [...values].sort();

/** The ids left in a table, as sorted text. */
async function ids(
  table: 'outbox_events' | 'webhook_deliveries' | 'webhook_delivery_attempts',
): Promise<string[]> {
  const result = await pool.query<{ id: string }>(`SELECT id::text AS id FROM ${table}`);
  return sorted(result.rows.map((row) => row.id));
}

async function attemptsOf(deliveryId: string): Promise<number> {
  const result = await pool.query('SELECT 1 FROM webhook_delivery_attempts WHERE delivery_id = $1', [
    deliveryId,
  ]);
  return result.rowCount ?? 0;
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  pool = new pg.Pool({ connectionString: testDb.url, max: 3 });
  databaseId = randomUUID();
  await pool.query('INSERT INTO databases (id, name, schema_name) VALUES ($1, $2, $3)', [
    databaseId,
    'Retention base',
    `base_${databaseId.replaceAll('-', '')}`,
  ]);
  for (let i = 0; i < 2; i++) {
    const result = await pool.query<{ id: number }>(
      `INSERT INTO webhooks (database_id, url, events, secret_ciphertext)
       VALUES ($1, 'https://example.com/hook', '{record.created}', 'not-a-secret') RETURNING id`,
      [databaseId],
    );
    webhookIds.push(result.rows[0]!.id);
  }
});
beforeEach(async () => {
  await pool.query(
    'TRUNCATE outbox_events, record_revisions, record_trash, webhook_deliveries, webhook_delivery_attempts',
  );
});
afterAll(async () => {
  await pool?.end();
  await testDb?.drop();
});

describe('pruneOnce', () => {
  it('deletes old attempts, old closed deliveries and old dispatched events, and keeps recent ones', async () => {
    // Old: everything goes.
    const oldEvent = await insertEvent({ createdDaysAgo: 40, dispatchedDaysAgo: 40 });
    await insertDelivery({
      eventId: oldEvent,
      status: 'succeeded',
      updatedDaysAgo: 40,
      attemptsDaysAgo: [40, 40],
    });
    await insertDelivery({
      eventId: oldEvent,
      webhook: 1,
      status: 'failed',
      updatedDaysAgo: 35,
      attemptsDaysAgo: [36],
    });
    // Closed unsent (its webhook was inactive) long ago: no attempt to wait for.
    const unsentEvent = await insertEvent({ createdDaysAgo: 31, dispatchedDaysAgo: 31 });
    await insertDelivery({ eventId: unsentEvent, status: 'failed', updatedDaysAgo: 31 });
    // Recent: everything stays.
    const recentEvent = await insertEvent({ createdDaysAgo: 1, dispatchedDaysAgo: 1 });
    const recentDelivery = await insertDelivery({
      eventId: recentEvent,
      status: 'succeeded',
      updatedDaysAgo: 1,
      attemptsDaysAgo: [1],
    });
    // Past the event span, within the attempt span: the event goes, its delivery and attempt stay.
    const midEvent = await insertEvent({ createdDaysAgo: 10, dispatchedDaysAgo: 10 });
    const midDelivery = await insertDelivery({
      eventId: midEvent,
      status: 'failed',
      updatedDaysAgo: 10,
      attemptsDaysAgo: [10],
    });
    // Just inside both spans.
    const edgeEvent = await insertEvent({ createdDaysAgo: 6.9, dispatchedDaysAgo: 6.9 });
    const edgeDelivery = await insertDelivery({
      eventId: edgeEvent,
      status: 'succeeded',
      updatedDaysAgo: 29.9,
      attemptsDaysAgo: [29.9],
    });

    const result = await pruneOnce(pool, SETTINGS);

    expect(result).toEqual({ attempts: 3, deliveries: 3, events: 3, trash: 0, schemaTrash: 0 });
    expect(await ids('outbox_events')).toEqual(sorted([recentEvent, edgeEvent]));
    expect(await ids('webhook_deliveries')).toEqual(sorted([recentDelivery, midDelivery, edgeDelivery]));
    for (const delivery of [recentDelivery, midDelivery, edgeDelivery])
      expect(await attemptsOf(delivery)).toBe(1);
    // Nothing left to do.
    expect(await pruneOnce(pool, SETTINGS)).toEqual({
      attempts: 0,
      deliveries: 0,
      events: 0,
      trash: 0,
      schemaTrash: 0,
    });
  });

  it('keeps the record events history reads for the history retention, with their revisions', async () => {
    const settings = { ...SETTINGS, historyRetentionMs: 30 * DAY };
    const recordIds = [randomUUID(), randomUUID()];
    const records = { tableId: 'tblHistory0000001', ids: recordIds };
    const kept = await insertEvent({ createdDaysAgo: 10, dispatchedDaysAgo: 10, records });
    const expired = await insertEvent({
      createdDaysAgo: 31,
      dispatchedDaysAgo: 31,
      type: 'record.updated',
      records,
    });
    const dependency = await insertEvent({
      createdDaysAgo: 10,
      dispatchedDaysAgo: 10,
      type: 'record.updated',
      source: 'dependency',
      records,
    });
    const schema = await insertEvent({ createdDaysAgo: 10, dispatchedDaysAgo: 10, type: 'table.created' });
    const revisionsOf = async (eventId: string) =>
      (
        await pool.query<{ record_id: string }>(
          `SELECT v.record_id::text FROM record_revisions v JOIN outbox_events e ON e.seq = v.event_seq
            WHERE e.id = $1 ORDER BY v.position`,
          [eventId],
        )
      ).rows.map((row) => row.record_id);
    expect(await revisionsOf(kept)).toEqual(recordIds);
    expect(await revisionsOf(expired)).toEqual(recordIds);
    expect(await revisionsOf(dependency)).toEqual([]);

    expect(await pruneOnce(pool, settings)).toEqual({
      attempts: 0,
      deliveries: 0,
      events: 3,
      trash: 0,
      schemaTrash: 0,
    });
    expect(await ids('outbox_events')).toEqual([kept]);
    const left = await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM record_revisions WHERE table_id = $1',
      [records.tableId],
    );
    expect(left.rows[0]!.n).toBe(2);
    expect(await revisionsOf(expired)).toEqual([]);
    expect(schema).not.toBe(dependency);
  });

  it('purges records deleted longer ago than the trash retention, keeping their history', async () => {
    const settings = { ...SETTINGS, historyRetentionMs: 30 * DAY };
    const records = { tableId: 'tblTrash000000001', ids: [randomUUID(), randomUUID()] };
    const old = await insertEvent({
      createdDaysAgo: 10,
      dispatchedDaysAgo: 10,
      type: 'record.deleted',
      records,
    });
    const recent = await insertEvent({
      createdDaysAgo: 1,
      dispatchedDaysAgo: 1,
      type: 'record.deleted',
      records,
    });
    for (const [eventId, recordId] of [
      [old, records.ids[0]],
      [recent, records.ids[1]],
    ]) {
      await trashRecord(records.tableId, recordId!, eventId!);
    }
    expect(await pruneOnce(pool, settings)).toEqual({
      attempts: 0,
      deliveries: 0,
      events: 0,
      trash: 1,
      schemaTrash: 0,
    });
    // Out of the trash; its row stays as the deletion's revision, for history, without the record.
    const left = await pool.query<{ record_id: string; kept: boolean }>(
      'SELECT record_id::text, stored IS NOT NULL AS kept FROM record_trash ORDER BY event_seq',
    );
    expect(left.rows).toEqual([
      { record_id: records.ids[0], kept: false },
      { record_id: records.ids[1], kept: true },
    ]);
    expect(await ids('outbox_events')).toEqual(sorted([old, recent]));
  });

  it('takes trashed records with their deletion event when the trash outlives history', async () => {
    const settings = { ...SETTINGS, trashRetentionMs: 60 * DAY };
    const records = { tableId: 'tblTrash000000002', ids: [randomUUID()] };
    const old = await insertEvent({
      createdDaysAgo: 10,
      dispatchedDaysAgo: 10,
      type: 'record.deleted',
      records,
    });
    await trashRecord(records.tableId, records.ids[0]!, old);
    expect(await pruneOnce(pool, settings)).toEqual({
      attempts: 0,
      deliveries: 0,
      events: 1,
      trash: 0,
      schemaTrash: 0,
    });
    const left = await pool.query('SELECT 1 FROM record_trash UNION ALL SELECT 1 FROM record_revisions');
    expect(left.rowCount).toBe(0);
  });

  it('purges tables and fields deleted longer ago than the trash retention, with the data they kept', async () => {
    const schema = `"base_${databaseId.replaceAll('-', '')}"`;
    const live = 'tblLive0000000001';
    const gone = 'tblGone0000000001';
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await pool.query(
      `CREATE TABLE ${schema}."${live}" (id uuid PRIMARY KEY, "fldOld0000000001" numeric, "fldNew0000000001" numeric)`,
    );
    await pool.query(`CREATE TABLE ${schema}."${gone}" (id uuid PRIMARY KEY)`);
    await pool.query(
      `CREATE TABLE ${schema}."fldLink000000001_links" (record_id uuid REFERENCES ${schema}."${gone}", linked_id uuid REFERENCES ${schema}."${live}")`,
    );
    const field = (id: string, tableId: string, type: string) => ({
      id,
      tableId,
      name: id,
      type,
      template: {},
    });
    const entries: [string, string, string, number, object][] = [
      ['fldOld0000000001', 'field', live, 10, { field: field('fldOld0000000001', live, 'number') }],
      ['fldNew0000000001', 'field', live, 1, { field: field('fldNew0000000001', live, 'number') }],
      [
        gone,
        'table',
        gone,
        10,
        { table: { id: gone }, fields: [field('fldLink000000001', gone, 'linked_record')], inboundLinks: [] },
      ],
    ];
    for (const [id, kind, tableId, days, entry] of entries) {
      await pool.query(
        `INSERT INTO schema_trash (id, database_id, kind, table_id, deleted_at, entry)
         VALUES ($1, $2, $3, $4, now() - $5::interval, $6)`,
        [id, databaseId, kind, tableId, ago(days), JSON.stringify(entry)],
      );
    }
    expect(await pruneOnce(pool, SETTINGS)).toEqual({
      attempts: 0,
      deliveries: 0,
      events: 0,
      trash: 0,
      schemaTrash: 2,
    });
    const left = await pool.query<{ id: string }>('SELECT id FROM schema_trash');
    expect(left.rows.map((row) => row.id)).toEqual(['fldNew0000000001']);
    const relations = await pool.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY 1`,
      [schema.replaceAll('"', '')],
    );
    expect(relations.rows.map((row) => row.name)).toEqual([live]);
    const columns = await pool.query<{ name: string }>(
      `SELECT column_name AS name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY 1`,
      [schema.replaceAll('"', ''), live],
    );
    expect(columns.rows.map((row) => row.name)).toEqual(['fldNew0000000001', 'id']);
    await pool.query('DELETE FROM schema_trash');
  });

  it('never deletes an undispatched event, however old', async () => {
    const undispatched = await insertEvent({ createdDaysAgo: 100, dispatchedDaysAgo: null });
    // Sent only lately (its publish was lost, the sweep found it): kept for the span from then.
    const lateDispatched = await insertEvent({ createdDaysAgo: 100, dispatchedDaysAgo: 1 });

    expect(await pruneOnce(pool, SETTINGS)).toEqual({
      attempts: 0,
      deliveries: 0,
      events: 0,
      trash: 0,
      schemaTrash: 0,
    });
    expect(await ids('outbox_events')).toEqual(sorted([undispatched, lateDispatched]));
  });

  it('keeps an old event that has an open delivery, and that delivery', async () => {
    const pendingEvent = await insertEvent({ createdDaysAgo: 60, dispatchedDaysAgo: 60 });
    const pending = await insertDelivery({ eventId: pendingEvent, status: 'pending', updatedDaysAgo: 45 });
    const retryingEvent = await insertEvent({ createdDaysAgo: 60, dispatchedDaysAgo: 60 });
    const retrying = await insertDelivery({
      eventId: retryingEvent,
      status: 'retrying',
      updatedDaysAgo: 40,
      attemptsDaysAgo: [40],
    });
    // A closed delivery of the same event does not make it deletable.
    const closed = await insertDelivery({
      eventId: retryingEvent,
      webhook: 1,
      status: 'succeeded',
      updatedDaysAgo: 40,
    });

    const result = await pruneOnce(pool, SETTINGS);

    // The open delivery's old attempt goes by age; the closed one goes, the open ones stay.
    expect(result).toEqual({ attempts: 1, deliveries: 1, events: 0, trash: 0, schemaTrash: 0 });
    expect(await ids('outbox_events')).toEqual(sorted([pendingEvent, retryingEvent]));
    expect(await ids('webhook_deliveries')).toEqual(sorted([pending, retrying]));
    expect(await ids('webhook_deliveries')).not.toContain(closed);
  });

  it('keeps a closed delivery while it has an attempt left', async () => {
    const event = await insertEvent({ createdDaysAgo: 40, dispatchedDaysAgo: 40 });
    const delivery = await insertDelivery({
      eventId: event,
      status: 'failed',
      updatedDaysAgo: 40,
      attemptsDaysAgo: [1],
    });

    expect(await pruneOnce(pool, SETTINGS)).toEqual({
      attempts: 0,
      deliveries: 0,
      events: 1,
      trash: 0,
      schemaTrash: 0,
    });
    expect(await ids('webhook_deliveries')).toEqual([delivery]);
  });

  it('works in batches of batchSize rows, up to maxBatches per kind', async () => {
    for (let i = 0; i < 5; i++) {
      const event = await insertEvent({ createdDaysAgo: 40, dispatchedDaysAgo: 40 });
      await insertDelivery({
        eventId: event,
        status: 'succeeded',
        updatedDaysAgo: 40,
        attemptsDaysAgo: [40],
      });
    }
    const spy = jest.spyOn(pool, 'query');
    try {
      // Two batches of two per kind, then the limit; the trash is empty and the events are record
      // events, so the batches of the trash and of the other events come back empty at once.
      expect(await pruneOnce(pool, { ...SETTINGS, batchSize: 2, maxBatches: 2 })).toEqual({
        attempts: 4,
        deliveries: 4,
        events: 4,
        trash: 0,
        schemaTrash: 0,
      });
      expect(spy).toHaveBeenCalledTimes(8);
      spy.mockClear();
      // The rest: one short batch per kind ends each.
      expect(await pruneOnce(pool, { ...SETTINGS, batchSize: 2 })).toEqual({
        attempts: 1,
        deliveries: 1,
        events: 1,
        trash: 0,
        schemaTrash: 0,
      });
      expect(spy).toHaveBeenCalledTimes(5);
    } finally {
      spy.mockRestore();
    }
    expect(await ids('outbox_events')).toEqual([]);
    expect(await ids('webhook_deliveries')).toEqual([]);
    expect(await ids('webhook_delivery_attempts')).toEqual([]);
  });

  it('skips the rows a writer holds instead of waiting for it, and takes them on a later pass', async () => {
    const heldEvent = await insertEvent({ createdDaysAgo: 40, dispatchedDaysAgo: 40 });
    const held = await insertDelivery({ eventId: heldEvent, status: 'failed', updatedDaysAgo: 40 });
    const freeEvent = await insertEvent({ createdDaysAgo: 40, dispatchedDaysAgo: 40 });
    await insertDelivery({ eventId: freeEvent, status: 'failed', updatedDaysAgo: 40 });
    // A writer in the middle of a transaction on both rows (a retry being asked for, say).
    const writer = new pg.Client({ connectionString: testDb.url });
    await writer.connect();
    let timer: NodeJS.Timeout | undefined;
    try {
      await writer.query('BEGIN');
      await writer.query('UPDATE webhook_deliveries SET updated_at = updated_at WHERE id = $1', [held]);
      await writer.query('SELECT 1 FROM outbox_events WHERE id = $1 FOR UPDATE', [heldEvent]);
      const pass = pruneOnce(pool, SETTINGS);
      const blocked = new Promise((resolve) => {
        timer = setTimeout(resolve, 5000, 'blocked');
      });
      expect(await Promise.race([pass, blocked])).toEqual({
        attempts: 0,
        deliveries: 1,
        events: 1,
        trash: 0,
        schemaTrash: 0,
      });
      expect(await ids('webhook_deliveries')).toEqual([held]);
      expect(await ids('outbox_events')).toEqual([heldEvent]);
    } finally {
      clearTimeout(timer);
      await writer.query('ROLLBACK');
      await writer.end();
    }
    expect(await pruneOnce(pool, SETTINGS)).toEqual({
      attempts: 0,
      deliveries: 1,
      events: 1,
      trash: 0,
      schemaTrash: 0,
    });
  });

  it('goes on until a batch is short when maxBatches is not set', async () => {
    for (let i = 0; i < 5; i++) {
      const event = await insertEvent({ createdDaysAgo: 40, dispatchedDaysAgo: 40 });
      await insertDelivery({
        eventId: event,
        status: 'failed',
        updatedDaysAgo: 40,
        attemptsDaysAgo: [40, 40],
      });
    }
    const spy = jest.spyOn(pool, 'query');
    try {
      expect(await pruneOnce(pool, { ...SETTINGS, batchSize: 2 })).toEqual({
        attempts: 10,
        deliveries: 5,
        events: 5,
        trash: 0,
        schemaTrash: 0,
      });
      // Attempts 2+2+2+2+2+0, deliveries 2+2+1, trash 0, other events 0, record events 2+2+1.
      expect(spy).toHaveBeenCalledTimes(14);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('retention settings', () => {
  const WEBHOOK_SECRET_KEY = Buffer.alloc(32, 7).toString('base64');

  it('defaults to 30 days for attempts, 7 days for events, a pass a minute', () => {
    expect(loadConfig({ WEBHOOK_SECRET_KEY })).toMatchObject({
      WEBHOOK_ATTEMPT_RETENTION: 30 * DAY,
      CHANGES_RETENTION: 7 * DAY,
      DISPATCH_PRUNE_INTERVAL_MS: 60_000,
    });
    expect(
      loadConfig({ WEBHOOK_SECRET_KEY, WEBHOOK_ATTEMPT_RETENTION: '', CHANGES_RETENTION: '' }),
    ).toMatchObject({
      WEBHOOK_ATTEMPT_RETENTION: 30 * DAY,
      CHANGES_RETENTION: 7 * DAY,
      HISTORY_RETENTION: 30 * DAY,
    });
  });

  it('reads durations of any length, but not zero', () => {
    expect(
      loadConfig({
        WEBHOOK_SECRET_KEY,
        WEBHOOK_ATTEMPT_RETENTION: '90d',
        CHANGES_RETENTION: '36h',
        DISPATCH_PRUNE_INTERVAL_MS: '5000',
      }),
    ).toMatchObject({
      WEBHOOK_ATTEMPT_RETENTION: 90 * DAY,
      CHANGES_RETENTION: 36 * 3_600_000,
      DISPATCH_PRUNE_INTERVAL_MS: 5000,
    });
    expect(() => loadConfig({ WEBHOOK_SECRET_KEY, CHANGES_RETENTION: '0d' })).toThrow(/CHANGES_RETENTION/);
    expect(() => loadConfig({ WEBHOOK_SECRET_KEY, WEBHOOK_ATTEMPT_RETENTION: '30' })).toThrow(
      /WEBHOOK_ATTEMPT_RETENTION/,
    );
  });
});
