import { randomUUID } from 'node:crypto';
import { createBase, databaseSnapshot, type Harness, lastOutboxSeq, startHarness } from './harness';

/**
 * `PATCH .../records/bulk`: records by id, each changing only the fields it gives,
 * 1 to 100, all or nothing, one record.updated event.
 */

let h: Harness;
let auth: string;
let baseId: string;
let ids: string[];
const url = (path = '') => `/api/v1/bases/${baseId}/tables/Tasks/records${path}`;

const patch = (body: unknown) =>
  h.api
    .patch(url('/bulk'))
    .set('Authorization', auth)
    .set('content-type', 'application/json')
    .send(JSON.stringify(body));

async function updatedEvents(after: string) {
  const { rows } = await h.db.pool.query<{ data: { recordIds: string[]; records: { fields: object }[] } }>(
    `SELECT data FROM outbox_events WHERE seq > $1 AND type = 'record.updated' ORDER BY seq`,
    [after],
  );
  return rows.map((row) => row.data);
}

const lastSeq = () => lastOutboxSeq(h.db);

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Bulk update',
    tables: [
      {
        name: 'Tasks',
        fields: [
          { name: 'Title', type: 'single_line_text' },
          { name: 'Points', type: 'number' },
          { name: 'Done', type: 'checkbox' },
          {
            name: 'Stage',
            type: 'single_select',
            template: { options: [{ name: 'Todo' }, { name: 'Doing' }] },
          },
        ],
      },
    ],
  });
  baseId = base.body.id;
  const created = await h.api
    .post(url('/bulk'))
    .set('Authorization', auth)
    .send({
      records: [
        { Title: 'one', Points: 1, Stage: 'Todo' },
        { Title: 'two', Points: 2, Stage: 'Todo' },
        { Title: 'three', Points: 3 },
      ],
    })
    .expect(201);
  ids = created.body.records.map((record: { id: string }) => record.id);
});
afterAll(() => h.close());

describe('PATCH records/bulk', () => {
  it('changes only the fields each record gives, answers in input order, and sends one event', async () => {
    const after = await lastSeq();
    const response = await patch({
      records: [
        { id: ids[2], fields: { Done: true } },
        { id: ids[0], fields: { Points: 10, Stage: 'Doing' } },
        { id: ids[1], fields: {} },
      ],
    }).expect(200);
    expect(response.body.records.map((record: { fields: object }) => record.fields)).toEqual([
      { Title: 'three', Points: 3, Done: true, Stage: null },
      { Title: 'one', Points: 10, Done: false, Stage: 'Doing' },
      { Title: 'two', Points: 2, Done: false, Stage: 'Todo' },
    ]);
    expect(response.body).toMatchObject({
      success: true,
      createdRecordIds: [],
      updatedRecordIds: [ids[2], ids[0], ids[1]],
    });
    // The record that gave no field did not change: it is not in the event.
    const events = await updatedEvents(after);
    expect(events).toHaveLength(1);
    expect(events[0]!.recordIds).toEqual([ids[2], ids[0]]);
    expect(events[0]!.records.map((record) => record.fields)).toEqual([
      { Title: 'three', Points: 3, Done: true, Stage: null },
      { Title: 'one', Points: 10, Done: false, Stage: 'Doing' },
    ]);
  });

  it('writes nothing when one id does not exist, naming it with a 404', async () => {
    const before = await databaseSnapshot(h.db);
    const missing = randomUUID();
    const response = await patch({
      records: [
        { id: ids[0], fields: { Points: 99 } },
        { id: missing, fields: { Points: 1 } },
      ],
    }).expect(404);
    expect(response.body.error.message).toBe(`Record ${missing} not found; nothing was updated`);
    expect(await databaseSnapshot(h.db)).toEqual(before);
  });

  it.each([
    [
      'a malformed id',
      { records: [{ id: 'nope', fields: {} }] },
      'INVALID_RECORD_ID',
      /"nope" is not a valid UUID/,
    ],
    [
      'the same id twice',
      () => ({
        records: [
          { id: ids[0], fields: {} },
          { id: ids[0], fields: {} },
        ],
      }),
      'BAD_REQUEST',
      /body\.records\[1\]\.id: the same record as body\.records\[0\]/,
    ],
    ['no records', { records: [] }, 'BAD_REQUEST', /body\.records: must hold at least one record/],
    [
      '101 records',
      () => ({ records: Array.from({ length: 101 }, () => ({ id: ids[0], fields: {} })) }),
      'BAD_REQUEST',
      /at most 100/,
    ],
    [
      'a record without fields',
      () => ({ records: [{ id: ids[0] }] }),
      'BAD_REQUEST',
      /body\.records\[0\]\.fields/,
    ],
    ['an unknown key', () => ({ records: [{ id: ids[0], fields: {}, extra: 1 }] }), 'BAD_REQUEST', /extra/],
    [
      'bad values in two records',
      () => ({
        records: [
          { id: ids[0], fields: { Points: 'x' } },
          { id: ids[1], fields: { Stage: 'Done' } },
        ],
      }),
      'BAD_REQUEST',
      /body\.records\[0\]\.fields\.Points: .*; body\.records\[1\]\.fields\.Stage: unknown option "Done"/,
    ],
  ])('refuses %s, writing nothing', async (_name, body, code, message) => {
    const before = await databaseSnapshot(h.db);
    const response = await patch(typeof body === 'function' ? body() : body).expect(400);
    expect(response.body.error.code).toBe(code);
    expect(response.body.error.message).toMatch(message);
    expect(await databaseSnapshot(h.db)).toEqual(before);
  });

  it('needs records:write', async () => {
    const key = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', auth)
      .send({ name: 'reader', scopes: ['records:read'] })
      .expect(201);
    await h.api
      .patch(url('/bulk'))
      .set('Authorization', h.bearer(key.body.key))
      .send({ records: [{ id: ids[0], fields: { Points: 5 } }] })
      .expect(403);
  });
});
