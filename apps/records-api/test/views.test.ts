import type { View } from '@recordbase/contracts/views';
import { baseClient, type FieldBody } from './base-client';
import { createBase, type Harness, startHarness } from './harness';

/**
 * Saved views through the API: created with fields by name and kept by id, read, renamed and
 * changed part by part, following their fields' renames; every refusal the contract names (an
 * unknown field, an operator the field's type does not take, a name taken, a field a view uses
 * deleted, retyped under its filter, or taken with a table's deletion), and the scopes.
 */

let h: Harness;
let root: string;
let baseId: string;
let deals: { id: string; fields: FieldBody[] };
let contacts: { id: string; fields: FieldBody[] };

const { url, newTable } = baseClient(
  () => h,
  () => baseId,
  () => root,
);

const idOf = (table: { fields: FieldBody[] }, name: string) => table.fields.find((f) => f.name === name)!.id;
const viewsUrl = (path = '') => url(`/tables/${deals.id}/views${path}`);

async function save(body: object, auth = root) {
  return h.api.post(viewsUrl()).set('Authorization', auth).send(body);
}

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Views',
    tables: [{ name: 'Seed', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  expect(base.status).toBe(201);
  baseId = base.body.id;
  contacts = await newTable('Contacts', [{ name: 'Name', type: 'single_line_text' }]);
  deals = await newTable('Deals', [
    { name: 'Name', type: 'single_line_text' },
    {
      name: 'Status',
      type: 'single_select',
      template: { options: [{ name: 'Open' }, { name: 'Won' }, { name: 'Lost' }] },
    },
    { name: 'Amount', type: 'number', template: { decimalPlaces: 2 } },
    { name: 'Notes', type: 'long_text' },
    { name: 'Contact', type: 'linked_record', template: { tableId: contacts.id } },
  ]);
});

afterAll(async () => {
  await h?.close();
});

describe('views', () => {
  test('are saved with their fields by id, read by id or name, and listed oldest first', async () => {
    const res = await save({
      name: 'Open deals',
      filter: {
        and: [
          { field: 'Status', equals: 'Open' },
          {
            or: [
              { field: 'amount', greater_than: 1000 },
              { field: 'createdAt', is_not_empty: true },
            ],
          },
        ],
      },
      sort: [{ field: 'Amount', direction: 'desc' }, { field: 'createdAt' }],
      fields: ['Amount', 'Name'],
      search: 'acme',
    });
    expect([res.status, res.body.error?.message]).toEqual([201, undefined]);
    const view = res.body as View;
    expect(view.id).toMatch(/^viw[0-9A-Za-z]{14}$/);
    expect(view).toEqual({
      id: view.id,
      name: 'Open deals',
      filter: {
        and: [
          { field: idOf(deals, 'Status'), equals: 'Open' },
          {
            or: [
              { field: idOf(deals, 'Amount'), greater_than: 1000 },
              { field: 'createdAt', is_not_empty: true },
            ],
          },
        ],
      },
      sort: [
        { field: idOf(deals, 'Amount'), direction: 'desc' },
        { field: 'createdAt', direction: 'asc' },
      ],
      fields: [idOf(deals, 'Amount'), idOf(deals, 'Name')],
      search: 'acme',
      createdAt: view.createdAt,
      updatedAt: view.updatedAt,
    });
    for (const ref of [view.id, 'open deals', encodeURIComponent('OPEN DEALS')]) {
      const read = await h.api.get(viewsUrl(`/${ref}`)).set('Authorization', root);
      expect([read.status, read.body]).toEqual([200, view]);
    }
    const second = await save({ name: 'Everything' });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ filter: null, sort: [], fields: null, search: null });
    const listed = await h.api.get(viewsUrl()).set('Authorization', root);
    expect(listed.status).toBe(200);
    expect((listed.body.views as View[]).map((v) => v.name)).toEqual(['Open deals', 'Everything']);
  });

  test('change part by part: null takes a part away, a rename keeps the rest, fields renamed follow', async () => {
    const created = (
      await save({ name: 'Big', filter: { field: 'Amount', greater_than: 5000 }, search: 'x' })
    ).body as View;
    const renamed = await h.api
      .patch(viewsUrl(`/${created.id}`))
      .set('Authorization', root)
      .send({ name: 'Huge', sort: [{ field: 'Name' }] });
    expect([renamed.status, renamed.body.error?.message]).toEqual([200, undefined]);
    expect(renamed.body).toMatchObject({
      name: 'Huge',
      filter: created.filter,
      sort: [{ field: idOf(deals, 'Name'), direction: 'asc' }],
      search: 'x',
    });
    const cleared = await h.api
      .patch(viewsUrl('/huge'))
      .set('Authorization', root)
      .send({ filter: null, search: null, fields: ['Notes', 'notes'] });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ filter: null, search: null, fields: [idOf(deals, 'Notes')] });
    // A field renamed: the view keeps its id, and the new name finds the same field.
    const field = await h.api
      .patch(url(`/tables/${deals.id}/fields/Notes`))
      .set('Authorization', root)
      .send({ name: 'Remarks' });
    expect(field.status).toBe(200);
    const read = await h.api.get(viewsUrl('/Huge')).set('Authorization', root);
    expect(read.body.fields).toEqual([idOf(deals, 'Notes')]);
    const byNewName = await h.api
      .patch(viewsUrl('/Huge'))
      .set('Authorization', root)
      .send({ fields: ['Remarks'] });
    expect(byNewName.body.fields).toEqual([idOf(deals, 'Notes')]);
    const gone = await h.api.delete(viewsUrl('/Huge')).set('Authorization', root);
    expect([gone.status, gone.body]).toEqual([200, { success: true, message: 'View deleted' }]);
    expect((await h.api.get(viewsUrl(`/${created.id}`)).set('Authorization', root)).status).toBe(404);
  });

  test('refuse what a list body would refuse, at the same place, and leave nothing saved', async () => {
    const cases: [object, string, RegExp][] = [
      [{ name: 'a', filter: { field: 'Nope', equals: 1 } }, 'filter.field', /Nope/],
      [{ name: 'b', filter: { field: 'Name', greater_than: 3 } }, 'filter', /greater_than.*not supported/],
      [{ name: 'c', filter: { and: [{ field: 'Amount', equals: 'many' }] } }, 'filter.and[0]', /needs/],
      [{ name: 'd', sort: [{ field: 'Nope' }] }, 'sort[0].field', /Nope/],
      [{ name: 'e', fields: ['Name', 'Nope'] }, 'fields[1]', /Nope/],
      [{ name: '' }, 'name', /empty/],
      [{ name: 'f', search: '' }, 'search', /empty/],
      [{ name: 'g', colour: 'red' }, '', /colour/],
    ];
    const before = (await h.api.get(viewsUrl()).set('Authorization', root)).body.views.length;
    for (const [body, where, message] of cases) {
      const res = await save(body);
      expect([res.status, res.body.error?.code]).toEqual([400, 'BAD_REQUEST']);
      expect(res.body.error.message).toMatch(message);
      if (where) expect(res.body.error.message).toContain(where);
    }
    expect((await h.api.get(viewsUrl()).set('Authorization', root)).body.views.length).toBe(before);
  });

  test('a name is taken within a table, case aside; another table may use it', async () => {
    expect((await save({ name: 'Pipeline' })).status).toBe(201);
    const again = await save({ name: '  PIPELINE ' });
    expect([again.status, again.body.error?.message]).toEqual([
      400,
      expect.stringContaining('already exists'),
    ]);
    const elsewhere = await h.api
      .post(url(`/tables/${contacts.id}/views`))
      .set('Authorization', root)
      .send({ name: 'Pipeline' });
    expect(elsewhere.status).toBe(201);
    const other = (await save({ name: 'Other' })).body as View;
    const clash = await h.api
      .patch(viewsUrl(`/${other.id}`))
      .set('Authorization', root)
      .send({ name: 'pipeline' });
    expect(clash.status).toBe(400);
    const empty = await h.api
      .patch(viewsUrl(`/${other.id}`))
      .set('Authorization', root)
      .send({});
    expect([empty.status, empty.body.error?.message]).toEqual([400, expect.stringContaining('at least one')]);
  });

  test('keep their fields: deleting one, retyping it under the filter, or deleting its linked table is refused', async () => {
    const table = await newTable('Guarded', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Score', type: 'number' },
      { name: 'Tag', type: 'single_line_text' },
      { name: 'Owner', type: 'linked_record', template: { tableId: contacts.id } },
    ]);
    const guardedUrl = (path: string) => url(`/tables/${table.id}${path}`);
    const saved = await h.api
      .post(guardedUrl('/views'))
      .set('Authorization', root)
      .send({
        name: 'Scored',
        filter: { field: 'Score', greater_than: 3 },
        fields: ['Tag'],
        sort: [{ field: 'Owner' }],
      });
    expect(saved.status).toBe(201);
    for (const name of ['Score', 'Tag']) {
      const res = await h.api.delete(guardedUrl(`/fields/${name}`)).set('Authorization', root);
      expect([res.status, res.body.error?.message]).toEqual([
        400,
        `field "${name}" is used by the view "Scored": change or delete those views first`,
      ]);
    }
    // A number under greater_than cannot become text; a text field only shown can.
    const retyped = await h.api
      .patch(guardedUrl('/fields/Score'))
      .set('Authorization', root)
      .send({ type: 'single_line_text' });
    expect([retyped.status, retyped.body.error?.message]).toEqual([400, expect.stringContaining('"Scored"')]);
    const tag = await h.api
      .patch(guardedUrl('/fields/Tag'))
      .set('Authorization', root)
      .send({ type: 'long_text' });
    expect(tag.status).toBe(200);
    // Contacts' deletion would take Owner, which the view sorts by.
    const dropped = await h.api.delete(url(`/tables/${contacts.id}`)).set('Authorization', root);
    expect([dropped.status, dropped.body.error?.message]).toEqual([400, expect.stringContaining('"Scored"')]);
    // Once the view lets go of them, all three go.
    const freed = await h.api
      .patch(guardedUrl('/views/Scored'))
      .set('Authorization', root)
      .send({ filter: null, sort: null, fields: ['Name'] });
    expect(freed.status).toBe(200);
    expect((await h.api.delete(guardedUrl('/fields/Score')).set('Authorization', root)).status).toBe(200);
    expect((await h.api.delete(guardedUrl('/fields/Tag')).set('Authorization', root)).status).toBe(200);
    expect((await h.api.delete(guardedUrl('/fields/Owner')).set('Authorization', root)).status).toBe(200);
  });

  test("keep their computed fields' types: a formula or rollup changed to give another type is refused", async () => {
    const table = await newTable('Computed', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Price', type: 'number' },
      { name: 'Owners', type: 'linked_record', template: { tableId: contacts.id } },
      { name: 'Double', type: 'formula', template: { expression: '{Price} * 2' } },
    ]);
    const computedUrl = (path: string) => url(`/tables/${table.id}${path}`);
    const rollup = await h.api
      .post(computedUrl('/fields'))
      .set('Authorization', root)
      .send({
        name: 'Owner count',
        type: 'rollup',
        template: { linkFieldId: 'Owners', fieldId: 'Name', function: 'count_non_empty' },
      });
    expect(rollup.status).toBe(201);
    const saved = await h.api
      .post(computedUrl('/views'))
      .set('Authorization', root)
      .send({
        name: 'Dear',
        filter: {
          and: [
            { field: 'Double', greater_than: 10 },
            { field: 'Owner count', less_than: 3 },
          ],
        },
      });
    expect(saved.status).toBe(201);
    const textFormula = await h.api
      .patch(computedUrl('/fields/Double'))
      .set('Authorization', root)
      .send({ template: { expression: "{Name} & '!'" } });
    expect([textFormula.status, textFormula.body.error?.message]).toEqual([
      400,
      expect.stringMatching(/^body\.template\.expression: field "Double" is used by the view "Dear"/),
    ]);
    const textRollup = await h.api
      .patch(computedUrl('/fields/Owner count'))
      .set('Authorization', root)
      .send({ template: { linkFieldId: 'Owners', fieldId: 'Name', function: 'array_join' } });
    expect([textRollup.status, textRollup.body.error?.message]).toEqual([
      400,
      expect.stringMatching(/^body\.template: field "Owner count" is used by the view "Dear"/),
    ]);
    // Nothing changed; a change that keeps the type goes through.
    const fields = (await h.api.get(url(`/tables/${table.id}`)).set('Authorization', root)).body.fields;
    expect(fields.map((f: FieldBody) => [f.name, f.resultType])).toEqual([
      ['Name', undefined],
      ['Price', undefined],
      ['Owners', undefined],
      ['Double', 'number'],
      ['Owner count', 'number'],
    ]);
    const sameType = await h.api
      .patch(computedUrl('/fields/Double'))
      .set('Authorization', root)
      .send({ template: { expression: '{Price} * 3' } });
    expect([sameType.status, sameType.body.error?.message]).toEqual([200, undefined]);
  });

  test('go to the trash with their table and come back with it, as they were', async () => {
    const table = await newTable('Binned', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Size', type: 'number' },
    ]);
    const binnedViews = url(`/tables/${table.id}/views`);
    const saved = await h.api
      .post(binnedViews)
      .set('Authorization', root)
      .send({ name: 'Large', filter: { field: 'Size', greater_than: 10 }, sort: [{ field: 'Name' }] });
    expect(saved.status).toBe(201);
    expect((await h.api.delete(url(`/tables/${table.id}`)).set('Authorization', root)).status).toBe(200);
    expect((await h.api.get(binnedViews).set('Authorization', root)).status).toBe(404);
    const restored = await h.api
      .post(url('/trash/restore'))
      .set('Authorization', root)
      .send({ tableIds: [table.id] });
    expect([restored.status, restored.body.error?.message]).toEqual([200, undefined]);
    const views = await h.api.get(binnedViews).set('Authorization', root);
    expect([views.status, views.body]).toEqual([200, { views: [saved.body] }]);
    // And it still guards its fields.
    expect(
      (await h.api.delete(url(`/tables/${table.id}/fields/Size`)).set('Authorization', root)).status,
    ).toBe(400);
  });

  test('need schema:read to read and schema:write to change; another database is not found', async () => {
    const view = (await save({ name: 'Scoped' })).body as View;
    const keyWith = async (scopes: string[], databaseIds?: string[]) => {
      const res = await h.api
        .post('/api/v1/api-keys')
        .set('Authorization', root)
        .send({ name: scopes.join(' '), scopes, ...(databaseIds ? { databaseIds } : {}) });
      expect(res.status).toBe(201);
      return h.bearer(res.body.key);
    };
    const reader = await keyWith(['schema:read']);
    const records = await keyWith(['records:read', 'records:write']);
    expect((await h.api.get(viewsUrl(`/${view.id}`)).set('Authorization', reader)).status).toBe(200);
    expect((await h.api.get(viewsUrl()).set('Authorization', records)).status).toBe(403);
    expect((await save({ name: 'Nope' }, reader)).status).toBe(403);
    expect((await h.api.delete(viewsUrl(`/${view.id}`)).set('Authorization', reader)).status).toBe(403);
    const other = await createBase(h, {
      name: 'Other',
      tables: [{ name: 'T', fields: [{ name: 'N', type: 'single_line_text' }] }],
    });
    const outsider = await keyWith(['schema:read', 'schema:write'], [other.body.id]);
    expect((await h.api.get(viewsUrl(`/${view.id}`)).set('Authorization', outsider)).status).toBe(404);
    expect((await save({ name: 'Intruder' }, outsider)).status).toBe(404);
  });
});

describe('reads through a view', () => {
  let orders: { id: string; fields: FieldBody[] };
  const ordersUrl = (path: string) => url(`/tables/${orders.id}${path}`);

  async function listOrders(body: object, harness = h) {
    return harness.api.post(ordersUrl('/records/list')).set('Authorization', root).send(body);
  }
  /** What a list answers, without what differs between two equivalent listings (the cursor). */
  const answerOf = (res: { status: number; body: Record<string, unknown> }) => {
    const { nextCursor: _cursor, ...rest } = res.body;
    return [res.status, rest];
  };

  beforeAll(async () => {
    orders = await newTable('Orders', [
      { name: 'Name', type: 'single_line_text' },
      {
        name: 'Stage',
        type: 'single_select',
        template: { options: [{ name: 'Open' }, { name: 'Paid' }, { name: 'Void' }] },
      },
      { name: 'Amount', type: 'number' },
      { name: 'Note', type: 'long_text' },
    ]);
    const rows = [
      ['Acme renewal', 'Open', 1200, 'call back'],
      ['Acme new', 'Paid', 300, null],
      ['Globex', 'Open', 50, 'renewal soon'],
      ['Initech', 'Void', 900, null],
      ['Umbrella renewal', 'Paid', 4000, 'big'],
      ['Hooli', 'Open', null, null],
    ];
    const created = await h.api
      .post(ordersUrl('/records/bulk'))
      .set('Authorization', root)
      .send({ records: rows.map(([Name, Stage, Amount, Note]) => ({ Name, Stage, Amount, Note })) });
    expect(created.status).toBe(201);
    const saved = await h.api
      .post(ordersUrl('/views'))
      .set('Authorization', root)
      .send({
        name: 'Live',
        filter: { field: 'Stage', in: ['Open', 'Paid'] },
        sort: [{ field: 'Amount', direction: 'desc' }],
        fields: ['Name', 'Amount'],
      });
    expect(saved.status).toBe(201);
  });

  test('give the records, order, total and projection of the explicit body, by id or by name', async () => {
    const explicit = await listOrders({
      filter: { field: 'Stage', in: ['Open', 'Paid'] },
      sort: [{ field: 'Amount', direction: 'desc' }],
      fields: ['Name', 'Amount'],
    });
    expect(explicit.status).toBe(200);
    expect(explicit.body.total).toBe(5);
    expect(explicit.body.records.map((r: { fields: { Name: string } }) => r.fields.Name)).toEqual([
      'Umbrella renewal',
      'Acme renewal',
      'Acme new',
      'Globex',
      'Hooli',
    ]);
    expect(Object.keys(explicit.body.records[0].fields)).toEqual(['Name', 'Amount']);
    const view = (await h.api.get(ordersUrl('/views/Live')).set('Authorization', root)).body as View;
    for (const ref of ['Live', 'live', view.id]) {
      expect(answerOf(await listOrders({ view: ref }))).toEqual(answerOf(explicit));
    }
    // Page by page the same too, the cursor bound to the view's listing.
    const first = await listOrders({ view: 'Live', limit: 2 });
    const second = await listOrders({ view: 'Live', limit: 2, cursor: first.body.nextCursor });
    expect([...first.body.records, ...second.body.records]).toEqual(explicit.body.records.slice(0, 4));
  });

  test("AND the body's filter and search with the view's; the body's sort and fields win", async () => {
    await h.api.patch(ordersUrl('/views/Live')).set('Authorization', root).send({ search: 'renewal' });
    try {
      const combined = await listOrders({
        view: 'Live',
        filter: { field: 'Amount', greater_than: 1000 },
        search: 'acme',
        sort: [{ field: 'Name', direction: 'asc' }],
        fields: ['Stage'],
      });
      expect([combined.status, combined.body.error?.message]).toEqual([200, undefined]);
      // Open or Paid, "renewal" (the view), over 1000 and "acme" (the body): Acme renewal alone.
      expect(combined.body.total).toBe(1);
      expect(combined.body.records.map((r: { fields: object }) => r.fields)).toEqual([{ Stage: 'Open' }]);
      // The view's search alone: both renewals (Globex's note says renewal too), in the view's order.
      const searched = await listOrders({ view: 'Live' });
      expect(searched.body.records.map((r: { fields: { Name: string } }) => r.fields.Name)).toEqual([
        'Umbrella renewal',
        'Acme renewal',
        'Globex',
      ]);
      const aggregate = await h.api
        .post(ordersUrl('/records/aggregate'))
        .set('Authorization', root)
        .send({
          view: 'Live',
          search: 'acme',
          aggregations: [{ fn: 'count' }, { field: 'Amount', fn: 'sum' }],
        });
      expect([aggregate.status, aggregate.body]).toEqual([
        200,
        { groups: [{ key: {}, values: [1, 1200] }], truncated: false },
      ]);
    } finally {
      await h.api.patch(ordersUrl('/views/Live')).set('Authorization', root).send({ search: null });
    }
  });

  test('follow renames of the fields they use and of themselves', async () => {
    const before = await listOrders({ view: 'Live' });
    const renamed = await h.api
      .patch(ordersUrl('/fields/Amount'))
      .set('Authorization', root)
      .send({ name: 'Total' });
    expect(renamed.status).toBe(200);
    try {
      const after = await listOrders({ view: 'Live' });
      expect(after.status).toBe(200);
      expect(after.body.records.map((r: { fields: object }) => r.fields)).toEqual(
        before.body.records.map((r: { fields: { Name: string; Amount: number | null } }) => ({
          Name: r.fields.Name,
          Total: r.fields.Amount,
        })),
      );
      const view = await h.api
        .patch(ordersUrl('/views/Live'))
        .set('Authorization', root)
        .send({ name: 'Current' });
      expect(view.status).toBe(200);
      expect(answerOf(await listOrders({ view: 'current' }))).toEqual(answerOf(after));
      expect((await listOrders({ view: 'Live' })).status).toBe(400);
    } finally {
      await h.api.patch(ordersUrl('/fields/Total')).set('Authorization', root).send({ name: 'Amount' });
      await h.api.patch(ordersUrl('/views/Current')).set('Authorization', root).send({ name: 'Live' });
    }
  });

  test('a change of a view is what the next read applies, on every instance', async () => {
    const other = await startHarness({ sameDatabaseAs: h });
    try {
      // Both instances keep the table's metadata, views included.
      expect((await listOrders({ view: 'Live' }, other)).body.total).toBe(5);
      const changed = await h.api
        .patch(ordersUrl('/views/Live'))
        .set('Authorization', root)
        .send({ filter: { field: 'Stage', equals: 'Void' } });
      expect(changed.status).toBe(200);
      for (const harness of [h, other]) {
        const res = await listOrders({ view: 'Live' }, harness);
        expect([res.status, res.body.total]).toEqual([200, 1]);
      }
      const fresh = await h.api.post(ordersUrl('/views')).set('Authorization', root).send({ name: 'Fresh' });
      expect(fresh.status).toBe(201);
      expect((await listOrders({ view: 'Fresh' }, other)).body.total).toBe(6);
    } finally {
      await other.close();
      await h.api
        .patch(ordersUrl('/views/Live'))
        .set('Authorization', root)
        .send({ filter: { field: 'Stage', in: ['Open', 'Paid'] } });
      await h.api.delete(ordersUrl('/views/Fresh')).set('Authorization', root);
    }
  });

  test("refuse a view that is not the table's, and keep the body's refusals at the body's place", async () => {
    const unknown = await listOrders({ view: 'Lve' });
    expect([unknown.status, unknown.body.error?.code]).toEqual([400, 'BAD_REQUEST']);
    expect(unknown.body.error.message).toMatch(/body\.view.*unknown view "Lve".*did you mean "Live"/);
    // A view of another table is no view of this one.
    const theirs = await h.api
      .post(url(`/tables/${contacts.id}/views`))
      .set('Authorization', root)
      .send({ name: 'Theirs' });
    expect(theirs.status).toBe(201);
    for (const ref of ['Theirs', theirs.body.id]) expect((await listOrders({ view: ref })).status).toBe(400);
    const bad = await listOrders({ view: 'Live', filter: { field: 'Amount', equals: 'many' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^body\.filter: /);
    const empty = await listOrders({ view: '' });
    expect([empty.status, empty.body.error?.message]).toEqual([400, expect.stringContaining('body.view')]);
    const aggregate = await h.api
      .post(ordersUrl('/records/aggregate'))
      .set('Authorization', root)
      .send({ view: 'Nope', aggregations: [{ fn: 'count' }] });
    expect([aggregate.status, aggregate.body.error?.message]).toEqual([400, expect.stringContaining('Nope')]);
  });
});
