import { createBase, type Harness, lastOutboxSeq, startHarness } from './harness';

/**
 * record.updated says what changed: per record, the ids of the fields whose value
 * changed and their previous values, from every path that updates (single, bulk by id, upsert),
 * and the outbox row lists the changed fields for webhooks' field filters. Webhooks may name
 * `fieldIds` (ids or names of their table's fields).
 */

let h: Harness;
let auth: string;
let baseId: string;
let fieldId: Record<string, string>;
const url = (path = '') => `/api/v1/bases/${baseId}/tables/Orders/records${path}`;
const hooks = (path = '') => `/api/v1/bases/${baseId}/webhooks${path}`;

interface EventRow {
  type: string;
  changed_field_ids: string[];
  data: {
    recordIds: string[];
    records: { id: string }[];
    changes?: { recordId: string; changedFieldIds: string[]; previous: Record<string, unknown> }[];
  };
}

async function eventsAfter(seq: string): Promise<EventRow[]> {
  const result = await h.db.pool.query<EventRow>(
    'SELECT type, changed_field_ids, data FROM outbox_events WHERE seq > $1 ORDER BY seq',
    [seq],
  );
  return result.rows;
}

async function create(records: object[]): Promise<string[]> {
  const response = await h.api.post(url('/bulk')).set('Authorization', auth).send({ records }).expect(201);
  return response.body.records.map((record: { id: string }) => record.id);
}

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Changes',
    tables: [
      { name: 'Customers', fields: [{ name: 'Name', type: 'single_line_text' }] },
      {
        name: 'Orders',
        fields: [
          { name: 'Code', type: 'single_line_text' },
          { name: 'Amount', type: 'number' },
          {
            name: 'Status',
            type: 'single_select',
            template: { options: [{ name: 'Open' }, { name: 'Paid' }] },
          },
          { name: 'Notes', type: 'long_text' },
          { name: 'Customer', type: 'linked_record', template: { tableId: 'Customers' } },
        ],
      },
    ],
  });
  baseId = base.body.id;
  const orders = base.body.tables.find((table: { name: string }) => table.name === 'Orders');
  fieldId = Object.fromEntries(
    orders.fields.map((field: { name: string; id: string }) => [field.name, field.id]),
  );
});
afterAll(() => h.close());

describe('record.updated carries what changed', () => {
  it('a single update: the changed fields and their previous values, not the fields given unchanged', async () => {
    const [id] = await create([{ Code: 'A-1', Amount: 10, Status: 'Open' }]);
    const seq = await lastOutboxSeq(h.db);
    await h.api
      .patch(url(`/${id}`))
      .set('Authorization', auth)
      .send({ record: { Amount: 12.5, Status: 'Open', Notes: 'called' } })
      .expect(200);
    const [event] = await eventsAfter(seq);
    expect(event?.type).toBe('record.updated');
    expect(event?.data.changes).toEqual([
      {
        recordId: id,
        changedFieldIds: [fieldId.Amount, fieldId.Notes],
        previous: { [fieldId.Amount!]: 10, [fieldId.Notes!]: null },
      },
    ]);
    expect(event?.changed_field_ids).toEqual([fieldId.Amount, fieldId.Notes]);
  });

  it('a bulk update by id: one change per record in the order of records, links compared too', async () => {
    const customerId = (
      await h.api
        .post(`/api/v1/bases/${baseId}/tables/Customers/records`)
        .set('Authorization', auth)
        .send({ record: { Name: 'Grace' } })
        .expect(201)
    ).body.id;
    const [a, b] = await create([
      { Code: 'B-1', Status: 'Open' },
      { Code: 'B-2', Status: 'Paid' },
    ]);
    const seq = await lastOutboxSeq(h.db);
    await h.api
      .patch(url('/bulk'))
      .set('Authorization', auth)
      .send({
        records: [
          { id: b, fields: { Status: 'Paid', Customer: [customerId] } },
          { id: a, fields: { Status: 'Paid' } },
        ],
      })
      .expect(200);
    const [event] = await eventsAfter(seq);
    expect(event?.data.recordIds).toEqual([b, a]);
    expect(event?.data.changes).toEqual([
      { recordId: b, changedFieldIds: [fieldId.Customer], previous: { [fieldId.Customer!]: [] } },
      { recordId: a, changedFieldIds: [fieldId.Status], previous: { [fieldId.Status!]: 'Open' } },
    ]);
    expect([...(event?.changed_field_ids ?? [])].sort()).toEqual([fieldId.Customer, fieldId.Status].sort());
  });

  it('an upsert: changes for the updated records only, the created ones in record.created', async () => {
    await create([{ Code: 'U-1', Amount: 1, Notes: 'keep' }]);
    const seq = await lastOutboxSeq(h.db);
    const response = await h.api
      .post(url('/bulk'))
      .set('Authorization', auth)
      .send({
        records: [
          { Code: 'U-2', Amount: 2 },
          { Code: 'U-1', Amount: 5, Notes: 'keep' },
        ],
        matchOn: [fieldId.Code],
      })
      .expect(200);
    const [updatedId] = response.body.updatedRecordIds;
    const events = await eventsAfter(seq);
    expect(events.map((event) => event.type)).toEqual(['record.created', 'record.updated']);
    expect(events[0]?.data.changes).toBeUndefined();
    expect(events[0]?.changed_field_ids).toEqual([]);
    expect(events[1]?.data.recordIds).toEqual([updatedId]);
    expect(events[1]?.data.changes).toEqual([
      { recordId: updatedId, changedFieldIds: [fieldId.Amount], previous: { [fieldId.Amount!]: 1 } },
    ]);
    expect(events[1]?.changed_field_ids).toEqual([fieldId.Amount]);
  });

  it('an upsert whose records are unchanged still says so: an empty list of changed fields', async () => {
    await create([{ Code: 'S-1', Amount: 3 }]);
    const seq = await lastOutboxSeq(h.db);
    await h.api
      .post(url('/bulk'))
      .set('Authorization', auth)
      .send({ records: [{ Code: 'S-1', Amount: 3 }], matchOn: [fieldId.Code] })
      .expect(200);
    const [event] = await eventsAfter(seq);
    expect(event?.data.changes).toEqual([
      { recordId: expect.any(String), changedFieldIds: [], previous: {} },
    ]);
    expect(event?.changed_field_ids).toEqual([]);
  });
});

describe('webhooks may watch fields', () => {
  const target = 'http://127.0.0.1:9/hook';

  it('stores field names as ids, answers them, and clears them with null', async () => {
    const created = await h.api
      .post(hooks())
      .set('Authorization', auth)
      .send({
        url: target,
        events: ['record.updated'],
        tableId: 'Orders',
        fieldIds: ['status', fieldId.Amount],
      })
      .expect(201);
    expect(created.body.fieldIds).toEqual([fieldId.Status, fieldId.Amount]);
    const id = created.body.id;
    const stored = await h.db.pool.query('SELECT field_ids FROM webhooks WHERE id = $1', [id]);
    expect(stored.rows[0].field_ids).toEqual([fieldId.Status, fieldId.Amount]);
    const changed = await h.api
      .patch(hooks(`/${id}`))
      .set('Authorization', auth)
      .send({ fieldIds: ['Notes'] })
      .expect(200);
    expect(changed.body.fieldIds).toEqual([fieldId.Notes]);
    const cleared = await h.api
      .patch(hooks(`/${id}`))
      .set('Authorization', auth)
      .send({ fieldIds: null })
      .expect(200);
    expect(cleared.body.fieldIds).toBeNull();
    const plain = await h.api
      .post(hooks())
      .set('Authorization', auth)
      .send({ url: target, events: ['record.updated'] })
      .expect(201);
    expect(plain.body.fieldIds).toBeNull();
  });

  it.each([
    [{ fieldIds: ['Status'] }, /body\.fieldIds: needs a tableId/],
    [
      { tableId: 'Orders', fieldIds: ['Stauts'] },
      /body\.fieldIds\[0\]: unknown field "Stauts" \(did you mean "Status"\?\)/,
    ],
    [{ tableId: 'Orders', fieldIds: [] }, /body\.fieldIds: must name at least one field/],
    [{ tableId: 'Customers', fieldIds: ['Amount'] }, /body\.fieldIds\[0\]: unknown field "Amount"/],
  ])('refuses %j', async (body, message) => {
    const response = await h.api
      .post(hooks())
      .set('Authorization', auth)
      .send({ url: target, events: ['record.updated'], ...body })
      .expect(400);
    expect(response.body.error.message).toMatch(message);
  });

  it('refuses moving a webhook to another table while it keeps fields of the old one', async () => {
    const created = await h.api
      .post(hooks())
      .set('Authorization', auth)
      .send({ url: target, events: ['record.updated'], tableId: 'Orders', fieldIds: ['Status'] })
      .expect(201);
    const response = await h.api
      .patch(hooks(`/${created.body.id}`))
      .set('Authorization', auth)
      .send({ tableId: 'Customers' })
      .expect(400);
    expect(response.body.error.message).toMatch(
      /body\.fieldIds: .*give fieldIds \(or null\) with a new tableId/,
    );
    await h.api
      .patch(hooks(`/${created.body.id}`))
      .set('Authorization', auth)
      .send({ tableId: 'Customers', fieldIds: ['Name'] })
      .expect(200);
  });
});
