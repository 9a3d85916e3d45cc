import { deliveredData, hearsEvent, subscriptionOf, type ViewMembers } from '@recordbase/db';
import { baseClient, type FieldBody } from './base-client';
import { createBase, type Harness, startHarness } from './harness';

/**
 * Webhooks through a saved view (`viewId`): every record write of the table records, in its
 * transaction, which of its records were inside the view before and after, and a webhook with
 * the view hears only those, each with `view: {before, after}`. Checked on what the writes leave
 * in the outbox, through the very functions the dispatcher matches and renders deliveries with
 * (the e2e webhooks test sends them through the stack).
 */

let h: Harness;
let root: string;
let baseId: string;
let orders: { id: string; fields: FieldBody[] };
let webhookId: number;

const { url, newTable } = baseClient(
  () => h,
  () => baseId,
  () => root,
);
const ordersUrl = (path: string) => url(`/tables/${orders.id}${path}`);

interface Delivered {
  recordIds: string[];
  records: { id: string; fields: Record<string, unknown>; view: { before: boolean; after: boolean } }[];
  changes?: { recordId: string }[];
}

/** What the webhook with the view receives of each event written since `since` (undefined: not heard). */
async function deliveredSince(since: bigint, viewId: string): Promise<(Delivered | undefined)[]> {
  const { rows } = await h.db.pool.query<{
    type: string;
    table_id: string;
    changed_field_ids: string[];
    view_members: ViewMembers | null;
    data: string;
  }>(
    `SELECT type, table_id, changed_field_ids, view_members, data::text AS data
       FROM outbox_events WHERE seq > $1 AND type LIKE 'record.%' AND table_id = $2 ORDER BY seq`,
    [since.toString(), orders.id],
  );
  const subscription = subscriptionOf({
    events: ['record.created', 'record.updated', 'record.deleted'],
    tableId: orders.id,
    fieldIds: null,
    viewId,
  });
  return rows.map((row) => {
    const event = {
      type: row.type,
      tableId: row.table_id,
      changedFieldIds: row.changed_field_ids,
      viewMembers: row.view_members,
    };
    return hearsEvent(subscription, event)
      ? (JSON.parse(deliveredData(row.data, event, viewId)) as Delivered)
      : undefined;
  });
}

async function lastSeq(): Promise<bigint> {
  const { rows } = await h.db.pool.query<{ seq: string }>(
    'SELECT coalesce(max(seq), 0)::text AS seq FROM outbox_events',
  );
  return BigInt(rows[0]!.seq);
}

/** Per delivered record: its name and whether it was and is inside. */
const seen = (delivered: Delivered | undefined) =>
  delivered?.records.map((record) => [record.fields.Name, record.view.before, record.view.after]);

let paidViewId: string;

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'View webhooks',
    tables: [{ name: 'Seed', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  expect(base.status).toBe(201);
  baseId = base.body.id;
  orders = await newTable('Orders', [
    { name: 'Name', type: 'single_line_text' },
    {
      name: 'Stage',
      type: 'single_select',
      template: { options: [{ name: 'Open' }, { name: 'Paid' }, { name: 'Void' }] },
    },
    { name: 'Amount', type: 'number' },
    { name: 'Key', type: 'single_line_text' },
  ]);
  // Records read first, so that the table's metadata is kept from before the webhook exists.
  expect((await h.api.post(ordersUrl('/records/list')).set('Authorization', root).send({})).status).toBe(200);
  const view = await h.api
    .post(ordersUrl('/views'))
    .set('Authorization', root)
    .send({ name: 'Paid', filter: { field: 'Stage', equals: 'Paid' } });
  expect(view.status).toBe(201);
  paidViewId = view.body.id;
  const webhook = await h.api
    .post(url('/webhooks'))
    .set('Authorization', root)
    .send({
      url: 'https://hooks.example.com/paid',
      events: ['record.created', 'record.updated', 'record.deleted'],
      tableId: 'Orders',
      viewId: 'paid',
    });
  expect([webhook.status, webhook.body.error?.message]).toEqual([201, undefined]);
  expect(webhook.body.viewId).toBe(paidViewId);
  webhookId = webhook.body.id;
});

afterAll(async () => {
  await h?.close();
});

async function create(records: object[]) {
  const res = await h.api.post(ordersUrl('/records/bulk')).set('Authorization', root).send({ records });
  expect([res.status, res.body.error?.message]).toEqual([201, undefined]);
  return res.body.records as { id: string }[];
}

async function patch(id: string, record: object) {
  const res = await h.api
    .patch(ordersUrl(`/records/${id}`))
    .set('Authorization', root)
    .send({ record });
  expect([res.status, res.body.error?.message]).toEqual([200, undefined]);
}

test('records entering, leaving, staying inside and staying outside the view, one write at a time', async () => {
  const since = await lastSeq();
  const [open, paid] = await create([
    { Name: 'open', Stage: 'Open' },
    { Name: 'paid', Stage: 'Paid' },
  ]);
  await patch(open!.id, { Stage: 'Paid' }); // enters
  await patch(paid!.id, { Amount: 5 }); // stays inside
  await patch(paid!.id, { Stage: 'Void' }); // leaves
  await patch(paid!.id, { Amount: 6 }); // stays outside: not heard
  const deleted = await h.api.delete(ordersUrl(`/records/${open!.id}`)).set('Authorization', root);
  expect(deleted.status).toBe(200);
  const delivered = await deliveredSince(since, paidViewId);
  expect(delivered.map(seen)).toEqual([
    [['paid', false, true]],
    [['open', false, true]],
    [['paid', true, true]],
    [['paid', true, false]],
    undefined,
    [['open', true, false]],
  ]);
  // The records and their changes alike, and recordIds, hold only those inside before or after.
  expect(delivered[0]!.recordIds).toEqual([paid!.id]);
  expect(delivered[3]!.changes?.map((change) => change.recordId)).toEqual([paid!.id]);
});

test('a write touching many records delivers only those inside the view before or after', async () => {
  const records = await create(
    ['a', 'b', 'c', 'd', 'e'].map((Name, i) => ({ Name, Stage: i < 2 ? 'Paid' : 'Open', Key: Name })),
  );
  const since = await lastSeq();
  // a stays inside, b leaves, c enters, d and e stay outside.
  const bulk = await h.api
    .patch(ordersUrl('/records/bulk'))
    .set('Authorization', root)
    .send({
      records: [
        { id: records[0]!.id, fields: { Amount: 1 } },
        { id: records[1]!.id, fields: { Stage: 'Void' } },
        { id: records[2]!.id, fields: { Stage: 'Paid' } },
        { id: records[3]!.id, fields: { Amount: 2 } },
        { id: records[4]!.id, fields: { Stage: 'Void' } },
      ],
    });
  expect(bulk.status).toBe(200);
  // An upsert: c (inside) and d (outside) matched by Key and left where they are, f created inside.
  const keyField = orders.fields.find((field) => field.name === 'Key')!.id;
  const upsert = await h.api
    .post(ordersUrl('/records/bulk'))
    .set('Authorization', root)
    .send({
      matchOn: [keyField],
      records: [
        { Key: 'c', Amount: 3 },
        { Key: 'd', Amount: 4 },
        { Key: 'f', Name: 'f', Stage: 'Paid' },
      ],
    });
  expect([upsert.status, upsert.body.error?.message]).toEqual([200, undefined]);
  const removed = await h.api
    .post(ordersUrl('/records/bulk-delete'))
    .set('Authorization', root)
    .send({ ids: records.map((record) => record.id) });
  expect(removed.status).toBe(200);
  const restored = await h.api
    .post(ordersUrl('/trash/restore'))
    .set('Authorization', root)
    .send({ ids: [records[0]!.id, records[3]!.id] });
  expect([restored.status, restored.body.error?.message]).toEqual([200, undefined]);
  const delivered = await deliveredSince(since, paidViewId);
  expect(delivered.map(seen)).toEqual([
    [
      ['a', true, true],
      ['b', true, false],
      ['c', false, true],
    ],
    [['f', false, true]],
    [['c', true, true]],
    [
      ['a', true, false],
      ['c', true, false],
    ],
    [['a', false, true]],
  ]);
});

test('a quiet write records no members; a webhook without the view hears every record', async () => {
  const since = await lastSeq();
  const res = await h.api
    .post(ordersUrl('/records/bulk'))
    .set('Authorization', root)
    .send({ records: [{ Name: 'quiet', Stage: 'Paid' }], suppressWebhooks: true });
  expect(res.status).toBe(201);
  await create([{ Name: 'loud', Stage: 'Open' }]);
  const { rows } = await h.db.pool.query<{ view_members: ViewMembers | null; suppressed: boolean }>(
    `SELECT view_members, suppressed FROM outbox_events WHERE seq > $1 AND table_id = $2 ORDER BY seq`,
    [since.toString(), orders.id],
  );
  expect(rows).toEqual([
    { view_members: null, suppressed: true },
    { view_members: { [paidViewId]: { before: [], after: [] } }, suppressed: false },
  ]);
});

test('views watched and unwatched: members follow the webhooks that name a view', async () => {
  const open = await h.api
    .post(ordersUrl('/views'))
    .set('Authorization', root)
    .send({ name: 'Open', filter: { field: 'Stage', equals: 'Open' } });
  expect(open.status).toBe(201);
  // Nobody watches Open yet: a write records Paid's members only.
  let since = await lastSeq();
  await create([{ Name: 'o1', Stage: 'Open' }]);
  let { rows } = await h.db.pool.query<{ view_members: ViewMembers }>(
    'SELECT view_members FROM outbox_events WHERE seq > $1 AND table_id = $2',
    [since.toString(), orders.id],
  );
  expect(Object.keys(rows[0]!.view_members)).toEqual([paidViewId]);
  // The webhook moves to Open: the next write records Open's, and the webhook hears it.
  const moved = await h.api
    .patch(url(`/webhooks/${webhookId}`))
    .set('Authorization', root)
    .send({ viewId: 'Open' });
  expect([moved.status, moved.body.viewId]).toEqual([200, open.body.id]);
  since = await lastSeq();
  await create([{ Name: 'o2', Stage: 'Open' }]);
  ({ rows } = await h.db.pool.query<{ view_members: ViewMembers }>(
    'SELECT view_members FROM outbox_events WHERE seq > $1 AND table_id = $2',
    [since.toString(), orders.id],
  ));
  expect(Object.keys(rows[0]!.view_members)).toEqual([open.body.id]);
  expect((await deliveredSince(since, open.body.id)).map(seen)).toEqual([[['o2', false, true]]]);
  const back = await h.api
    .patch(url(`/webhooks/${webhookId}`))
    .set('Authorization', root)
    .send({ viewId: paidViewId });
  expect(back.status).toBe(200);
});

test('a record whose rollup moves it into or out of a view is heard through the dependency event', async () => {
  const customers = await newTable('Customers', [
    { name: 'Name', type: 'single_line_text' },
    { name: 'Orders', type: 'linked_record', template: { tableId: orders.id } },
  ]);
  const total = await h.api
    .post(url(`/tables/${customers.id}/fields`))
    .set('Authorization', root)
    .send({
      name: 'Total',
      type: 'rollup',
      template: { linkFieldId: 'Orders', fieldId: 'Amount', function: 'sum' },
    });
  expect(total.status).toBe(201);
  const view = await h.api
    .post(url(`/tables/${customers.id}/views`))
    .set('Authorization', root)
    .send({ name: 'Big', filter: { field: 'Total', greater_than: 100 } });
  expect(view.status).toBe(201);
  const hook = await h.api
    .post(url('/webhooks'))
    .set('Authorization', root)
    .send({
      url: 'https://hooks.example.com/big',
      events: ['record.updated'],
      tableId: customers.id,
      viewId: 'Big',
    });
  expect(hook.status).toBe(201);
  const [first, second] = await create([
    { Name: 'first order', Stage: 'Open', Amount: 50 },
    { Name: 'second order', Stage: 'Open', Amount: 500 },
  ]);
  const made = await h.api
    .post(url(`/tables/${customers.id}/records/bulk`))
    .set('Authorization', root)
    .send({
      records: [
        { Name: 'ada', Orders: [first!.id] },
        { Name: 'bob', Orders: [second!.id] },
      ],
    });
  expect(made.status).toBe(201);
  const since = await lastSeq();
  await patch(first!.id, { Amount: 150 }); // ada's total 50 -> 150: enters
  await patch(second!.id, { Amount: 5 }); // bob's total 500 -> 5: leaves
  await patch(second!.id, { Amount: 6 }); // bob stays outside: unheard
  const { rows } = await h.db.pool.query<{ source: string; view_members: ViewMembers | null; data: string }>(
    `SELECT source, view_members, data::text AS data FROM outbox_events
      WHERE seq > $1 AND table_id = $2 ORDER BY seq`,
    [since.toString(), customers.id],
  );
  const subscription = subscriptionOf({
    events: ['record.updated'],
    tableId: customers.id,
    fieldIds: null,
    viewId: view.body.id,
  });
  const heard = rows.map((row) => {
    const event = {
      type: 'record.updated',
      tableId: customers.id,
      changedFieldIds: [],
      viewMembers: row.view_members,
    };
    if (!hearsEvent(subscription, event)) return [row.source, undefined];
    const data = JSON.parse(deliveredData(row.data, event, view.body.id)) as Delivered;
    return [row.source, data.records.map((record) => [record.fields.Name, record.fields.Total, record.view])];
  });
  expect(heard).toEqual([
    ['dependency', [['ada', 150, { before: false, after: true }]]],
    ['dependency', [['bob', 5, { before: true, after: false }]]],
    ['dependency', undefined],
  ]);
});

test('refusals: a view needs the webhook’s table; an unknown view; a view a webhook names cannot be deleted', async () => {
  const cases: [object, RegExp][] = [
    [{ viewId: 'Paid' }, /body\.viewId: needs a tableId/],
    [{ tableId: 'Orders', viewId: 'Pad' }, /body\.viewId: unknown view "Pad" \(did you mean "Paid"\?\)/],
    [{ tableId: 'Seed', viewId: 'Paid' }, /body\.viewId: unknown view "Paid"/],
  ];
  for (const [body, message] of cases) {
    const res = await h.api
      .post(url('/webhooks'))
      .set('Authorization', root)
      .send({ url: 'https://hooks.example.com/x', events: ['record.created'], ...body });
    expect([res.status, res.body.error?.message]).toEqual([400, expect.stringMatching(message)]);
  }
  const moved = await h.api
    .patch(url(`/webhooks/${webhookId}`))
    .set('Authorization', root)
    .send({ tableId: 'Seed' });
  expect([moved.status, moved.body.error?.message]).toEqual([
    400,
    expect.stringContaining('give viewId (or null) with a new tableId'),
  ]);
  const gone = await h.api.delete(ordersUrl('/views/Paid')).set('Authorization', root);
  expect([gone.status, gone.body.error?.message]).toEqual([
    400,
    `view "Paid" is the viewId of webhook ${webhookId}: change or delete those webhooks first`,
  ]);
});
