import { createBase, type Harness, startHarness } from './harness';

/**
 * Projection: `fields` on a list and on a single read returns only the fields named,
 * by name or id, in both `data` and `fields`; the rest of the record (id, times) is unchanged.
 */

let h: Harness;
let auth: string;
let baseId: string;
let ids: Record<string, string>;
let recordId: string;
const url = (path = '') => `/api/v1/bases/${baseId}/tables/People/records${path}`;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Projection',
    tables: [
      {
        name: 'People',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Email', type: 'email' },
          { name: 'Age', type: 'number' },
          { name: 'Active', type: 'checkbox' },
          { name: 'Files', type: 'attachments' },
        ],
      },
    ],
  });
  baseId = base.body.id;
  ids = Object.fromEntries(
    base.body.tables[0].fields.map((f: { name: string; id: string }) => [f.name, f.id]),
  );
  const created = await h.api
    .post(url('/bulk'))
    .set('Authorization', auth)
    .send({
      records: [
        { Name: 'Ada', Email: 'ada@example.com', Age: 36, Active: true },
        { Name: 'Grace', Email: 'grace@example.com', Age: 45 },
      ],
    })
    .expect(201);
  recordId = created.body.records[0].id;
});
afterAll(() => h.close());

describe('projection on list', () => {
  it('returns only the fields named, by name or id, in data and fields', async () => {
    const listed = await h.api
      .post(url('/list'))
      .set('Authorization', auth)
      .send({ fields: ['email', ids.Age, 'Email'], sort: [{ field: 'Name' }] })
      .expect(200);
    expect(listed.body.total).toBe(2);
    expect(listed.body.records).toEqual([
      {
        id: recordId,
        data: { [ids.Email as string]: 'ada@example.com', [ids.Age as string]: 36 },
        fields: { Email: 'ada@example.com', Age: 36 },
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
      expect.objectContaining({ fields: { Email: 'grace@example.com', Age: 45 } }),
    ]);
  });

  it('still filters and sorts on fields it does not return', async () => {
    const listed = await h.api
      .post(url('/list'))
      .set('Authorization', auth)
      .send({
        fields: ['Name'],
        filter: { field: 'Active', equals: true },
        sort: [{ field: 'Age', direction: 'desc' }],
      })
      .expect(200);
    expect(listed.body.records.map((record: { fields: object }) => record.fields)).toEqual([{ Name: 'Ada' }]);
  });

  it.each([
    [{ fields: ['Name', 'Nope'] }, 'body.fields[1]: unknown field "Nope"'],
    [{ fields: [] }, 'body.fields'],
    [{ fields: 'Name' }, 'body.fields'],
    [{ fields: [''] }, 'body.fields[0]'],
  ])('refuses %j with a 400 naming what is wrong', async (body, named) => {
    const response = await h.api.post(url('/list')).set('Authorization', auth).send(body).expect(400);
    expect(response.body.error.message).toContain(named);
  });
});

describe('projection on a single read', () => {
  it('takes one fields parameter per field, and refuses a parameter it does not take', async () => {
    // A misspelt parameter would otherwise answer something other than what was asked.
    const misspelt = await h.api
      .get(url(`/${recordId}?feilds=Name&cacheBuster=1`))
      .set('Authorization', auth)
      .expect(400);
    expect(misspelt.body.error.message).toBe('query: unknown parameters "feilds", "cacheBuster"');
    const response = await h.api
      .get(url(`/${recordId}?fields=Name&fields=${ids.Active}`))
      .set('Authorization', auth)
      .expect(200);
    expect(response.body).toEqual({
      id: recordId,
      data: { [ids.Name as string]: 'Ada', [ids.Active as string]: true },
      fields: { Name: 'Ada', Active: true },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const one = await h.api
      .get(url(`/${recordId}?fields=Age`))
      .set('Authorization', auth)
      .expect(200);
    expect(one.body.fields).toEqual({ Age: 36 });
    const all = await h.api
      .get(url(`/${recordId}`))
      .set('Authorization', auth)
      .expect(200);
    expect(Object.keys(all.body.fields)).toEqual(['Name', 'Email', 'Age', 'Active', 'Files']);
  });

  it('refuses an unknown field with a 400 naming it', async () => {
    const response = await h.api
      .get(url(`/${recordId}?fields=Nope`))
      .set('Authorization', auth)
      .expect(400);
    expect(response.body.error.message).toContain('query.fields[0]: unknown field "Nope"');
  });
});
