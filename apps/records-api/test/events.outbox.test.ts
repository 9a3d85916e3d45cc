import { jobQueues } from '@recordbase/contracts/jobs';
import { Redis } from 'ioredis';
import { createBase, type Harness, startHarness } from './harness';

let h: Harness;
let auth: string;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
});
afterAll(() => h.close());

interface OutboxRow {
  type: string;
  table_id: string | null;
  source: string;
  data: Record<string, unknown>;
}

async function eventsSince(seq: number): Promise<OutboxRow[]> {
  const result = await h.db.pool.query<OutboxRow>(
    'SELECT type, table_id, source, data FROM outbox_events WHERE seq > $1 ORDER BY seq',
    [seq],
  );
  return result.rows;
}

async function lastSeq(): Promise<number> {
  const result = await h.db.pool.query<{ seq: string | null }>(
    'SELECT max(seq)::text AS seq FROM outbox_events',
  );
  return Number(result.rows[0]?.seq ?? 0);
}

describe('the outbox', () => {
  it('records table, field and record events with the contract data, one per request', async () => {
    let mark = await lastSeq();
    const base = await createBase(h, {
      name: 'E',
      tables: [
        {
          name: 'Items',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'Email', type: 'email' },
          ],
        },
      ],
    });
    const table = base.body.tables[0];
    let events = await eventsSince(mark);
    expect(events).toEqual([
      { type: 'table.created', table_id: table.id, source: 'public_api', data: { table } },
    ]);

    const root = `/api/v1/bases/${base.body.id}/tables/${table.id}`;
    mark = await lastSeq();
    const field = await h.api
      .post(`${root}/fields`)
      .set('Authorization', auth)
      .send({ name: 'Count', type: 'number' })
      .expect(201);
    const renamed = await h.api
      .patch(`${root}/fields/${field.body.id}`)
      .set('Authorization', auth)
      .send({ name: 'Total' })
      .expect(200);
    await h.api.delete(`${root}/fields/${field.body.id}`).set('Authorization', auth).expect(200);
    events = await eventsSince(mark);
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['field.created', { tableId: table.id, field: field.body }],
      ['field.updated', { tableId: table.id, field: renamed.body }],
      ['field.deleted', { tableId: table.id, field: renamed.body }],
    ]);

    mark = await lastSeq();
    const created = await h.api
      .post(`${root}/records/bulk`)
      .set('Authorization', auth)
      .send({
        records: [
          { Name: 'a', Email: 'a@example.com' },
          { Name: 'b', Email: 'b@example.com' },
        ],
      })
      .expect(201);
    const emailId = table.fields[1].id;
    const upserted = await h.api
      .post(`${root}/records/bulk`)
      .set('Authorization', auth)
      .send({
        matchOn: [emailId],
        records: [
          { Email: 'a@example.com', Name: 'A' },
          { Email: 'c@example.com', Name: 'c' },
        ],
      })
      .expect(200);
    const [updatedA, createdC] = upserted.body.records;
    await h.api.delete(`${root}/records/${createdC.id}`).set('Authorization', auth).expect(200);
    events = await eventsSince(mark);
    expect(events.map((e) => [e.type, e.data])).toEqual([
      [
        'record.created',
        {
          tableId: table.id,
          recordIds: created.body.records.map((r: { id: string }) => r.id),
          records: created.body.records,
        },
      ],
      ['record.created', { tableId: table.id, recordIds: [createdC.id], records: [createdC] }],
      [
        'record.updated',
        {
          tableId: table.id,
          recordIds: [updatedA.id],
          records: [updatedA],
          changes: [
            {
              recordId: updatedA.id,
              changedFieldIds: [table.fields[0].id],
              previous: { [table.fields[0].id]: 'a' },
            },
          ],
        },
      ],
      ['record.deleted', { tableId: table.id, recordIds: [createdC.id], records: [createdC] }],
    ]);

    mark = await lastSeq();
    await h.api.delete(root).set('Authorization', auth).expect(200);
    events = await eventsSince(mark);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'table.deleted', table_id: table.id });
    expect((events[0]!.data.table as { name: string }).name).toBe('Items');
  });

  it('records nothing when the change fails', async () => {
    const base = await createBase(h, {
      name: 'F',
      tables: [
        {
          name: 'Items',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'Qty', type: 'long_text' },
          ],
        },
      ],
    });
    const root = `/api/v1/bases/${base.body.id}/tables/Items`;
    await h.api
      .post(`${root}/records`)
      .set('Authorization', auth)
      .send({ record: { Qty: 'many' } })
      .expect(201);
    const mark = await lastSeq();
    await h.api
      .post(`${root}/records/bulk`)
      .set('Authorization', auth)
      .send({ records: [{ Name: 'ok' }, { Nope: 1 }] })
      .expect(400);
    await h.api.patch(`${root}/fields/Qty`).set('Authorization', auth).send({ type: 'number' }).expect(400);
    await h.api
      .post(`${root}/records/bulk-delete`)
      .set('Authorization', auth)
      .send({ ids: ['00000000-0000-4000-8000-000000000000'] })
      .expect(404);
    expect(await eventsSince(mark)).toEqual([]);
  });

  it('appends dispatched and publishes nothing while the base has no active webhook', async () => {
    const base = await createBase(h, {
      name: 'Unheard',
      tables: [{ name: 'Items', fields: [{ name: 'Name', type: 'single_line_text' }] }],
    });
    const root = `/api/v1/bases/${base.body.id}/tables/Items`;
    const mark = await lastSeq();
    await h.api
      .post(`${root}/records/bulk`)
      .set('Authorization', auth)
      .send({ records: [{ Name: 'a' }, { Name: 'b' }] })
      .expect(201);
    await h.api.patch(`${root}/fields/Name`).set('Authorization', auth).send({ name: 'Title' }).expect(200);
    const committed = await h.db.pool.query<{ id: string; type: string; dispatched: boolean }>(
      'SELECT id, type, dispatched_at IS NOT NULL AS dispatched FROM outbox_events WHERE seq > $1 ORDER BY seq',
      [mark],
    );
    expect(committed.rows.map(({ type, dispatched }) => ({ type, dispatched }))).toEqual([
      { type: 'record.created', dispatched: true },
      { type: 'field.updated', dispatched: true },
    ]);
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
    try {
      // Given time to arrive, had they been published.
      await new Promise((resolve) => setTimeout(resolve, 300));
      for (const { id } of committed.rows) {
        expect(await redis.exists(`${h.queuePrefix}:${jobQueues.events.queueName}:${id}`)).toBe(0);
      }
    } finally {
      redis.disconnect();
    }
  });

  it('publishes each committed event to the events queue, and nothing for a failed change', async () => {
    const base = await createBase(h, {
      name: 'P',
      tables: [{ name: 'Items', fields: [{ name: 'Name', type: 'single_line_text' }] }],
    });
    await h.api
      .post(`/api/v1/bases/${base.body.id}/webhooks`)
      .set('Authorization', auth)
      .send({ url: 'https://example.com/hook', events: ['record.created'] })
      .expect(201);
    const root = `/api/v1/bases/${base.body.id}/tables/Items`;
    const mark = await lastSeq();
    await h.api
      .post(`${root}/records`)
      .set('Authorization', auth)
      .send({ record: { Name: 'a' } })
      .expect(201);
    await h.api.patch(`${root}/fields/Name`).set('Authorization', auth).send({ name: 'Title' }).expect(200);
    await h.api
      .post(`${root}/records/bulk`)
      .set('Authorization', auth)
      .send({ records: [{ Title: 'ok' }, { Nope: 1 }] })
      .expect(400);
    const committed = await h.db.pool.query<{ id: string; type: string }>(
      'SELECT id, type FROM outbox_events WHERE seq > $1 ORDER BY seq',
      [mark],
    );
    expect(committed.rows.map((row) => row.type)).toEqual(['record.created', 'field.updated']);
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
    try {
      // BullMQ keeps a job as the hash <prefix>:<queue>:<job id>; the job id is the event id.
      const jobKey = (id: string) => `${h.queuePrefix}:${jobQueues.events.queueName}:${id}`;
      for (const { id } of committed.rows) {
        await waitFor(async () => (await redis.hget(jobKey(id), 'data')) !== null, `the job of event ${id}`);
        expect(JSON.parse((await redis.hget(jobKey(id), 'data'))!)).toEqual({ eventId: id });
      }
      // One job per event of the whole file appended for the dispatcher (its base has a webhook),
      // none for the refused request nor for events of bases without one.
      const all = await h.db.pool.query<{ id: string }>(
        // No dispatcher runs here: those are the ones left undispatched.
        'SELECT id FROM outbox_events WHERE dispatched_at IS NULL',
      );
      const queued = await redis.keys(`${h.queuePrefix}:${jobQueues.events.queueName}:*-*-*-*-*`);
      expect(queued.sort()).toEqual(all.rows.map((row) => jobKey(row.id)).sort());
    } finally {
      redis.disconnect();
    }
  });
});

async function waitFor(probe: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
