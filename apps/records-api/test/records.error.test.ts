import { createBase, type Harness, startHarness } from './harness';

let h: Harness;
let auth: string;
let baseId: string;
let fieldIds: Record<string, string>;
const url = (path = '') => `/api/v1/bases/${baseId}/tables/Items/records${path}`;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'B',
    tables: [
      {
        name: 'Items',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Count', type: 'number' },
          { name: 'Stars', type: 'rating', template: { max: 3 } },
          { name: 'Due', type: 'date' },
          { name: 'Email', type: 'email' },
          { name: 'Stage', type: 'single_select', template: { options: [{ name: 'A' }] } },
          { name: 'Files', type: 'attachments' },
        ],
      },
    ],
  });
  baseId = base.body.id;
  fieldIds = Object.fromEntries(
    base.body.tables[0].fields.map((f: { name: string; id: string }) => [f.name, f.id]),
  );
  await post('/bulk', {
    records: [
      { Name: 'dup', Count: 1 },
      { Name: 'dup', Count: 2 },
      { Name: 'solo', Count: 3 },
    ],
  }).expect(201);
});
afterAll(() => h.close());

function post(path: string, body: unknown) {
  return h.api
    .post(url(path))
    .set('Authorization', auth)
    .set('content-type', 'application/json')
    .send(JSON.stringify(body));
}

async function recordCount(): Promise<number> {
  return (await post('/list', { limit: 1 }).expect(200)).body.total;
}

describe('list refuses invalid requests with 400 BAD_REQUEST naming the problem', () => {
  it.each([
    ['limit 0', { limit: 0 }, /body\.limit/],
    ['limit 2001', { limit: 2001 }, /body\.limit/],
    ['a fractional limit', { limit: 1.5 }, /body\.limit/],
    ['a negative offset', { offset: -1 }, /body\.offset/],
    ['an unknown body key', { page: 2 }, /"page"/],
    ['a sort on an unknown field', { sort: [{ field: 'Nope' }] }, /Nope/],
    ['a sort direction other than asc/desc', { sort: [{ field: 'Name', direction: 'up' }] }, /direction/],
    ['a sort with neither field nor fieldId', { sort: [{ direction: 'asc' }] }, /sort/],
    ['a filter on an unknown field', { filter: { field: 'Nope', equals: 1 } }, /Nope/],
    ['a condition with two operators', { filter: { field: 'Name', equals: 'a', contains: 'b' } }, /operator/],
    ['a condition with no operator', { filter: { field: 'Name' } }, /operator/],
    [
      'an operator the type does not support',
      { filter: { field: 'Count', starts_with: '1' } },
      /starts_with/,
    ],
    ['an operand of the wrong shape', { filter: { field: 'Count', greater_than: 'ten' } }, /Count/],
    ['in without an array', { filter: { field: 'Name', in: 'a' } }, /in/],
    ['is_empty with false', { filter: { field: 'Name', is_empty: false } }, /is_empty/],
    ['an invalid date operand', { filter: { field: 'Due', equals: '2024-02-30' } }, /Due|date/],
    ['an empty group', { filter: { and: [] } }, /filter/],
  ])('%s', async (_case, body, message) => {
    const response = await post('/list', body).expect(400);
    expect(response.body.error.code).toBe('BAD_REQUEST');
    expect(response.body.error.message).toMatch(message);
  });

  it('a filter nested deeper than 10 levels', async () => {
    let filter: object = { field: 'Name', equals: 'x' };
    for (let i = 0; i < 11; i++) filter = { and: [filter] };
    const response = await post('/list', { filter }).expect(400);
    expect(response.body.error.message).toMatch(/deeper than 10/);
  });

  it('a filter with more than 200 conditions', async () => {
    const filter = { or: Array.from({ length: 201 }, (_, i) => ({ field: 'Count', equals: i })) };
    const response = await post('/list', { filter }).expect(400);
    expect(response.body.error.message).toMatch(/200/);
  });

  it('malformed JSON', async () => {
    const response = await h.api
      .post(url('/list'))
      .set('Authorization', auth)
      .set('content-type', 'application/json')
      .send('{"limit":');
    expect(response.status).toBe(400);
  });
});

describe('bulk refuses invalid requests and writes nothing', () => {
  it.each([
    ['no records', { records: [] }, /body\.records/],
    ['101 records', { records: Array.from({ length: 101 }, () => ({ Name: 'x' })) }, /100/],
    ['matchOn with a field name', { records: [{ Name: 'x' }], matchOn: ['Name'] }, /field id/],
    [
      '21 matchOn ids',
      {
        records: [{ Name: 'x' }],
        matchOn: Array.from({ length: 21 }, (_, i) => `fld${String(i).padStart(14, '0')}`),
      },
      /20/,
    ],
    [
      'matchOn naming no field of the table',
      { records: [{ Name: 'x' }], matchOn: ['fld00000000000000'] },
      /matchOn\[0\]/,
    ],
    [
      'an unknown key in a record',
      { records: [{ Name: 'x' }, { Colour: 'red' }] },
      /body\.records\[1\]: unknown field "Colour"/,
    ],
    ['a string for a number', { records: [{ Count: 'three' }] }, /body\.records\[0\]\.Count/],
    ['a rating above the maximum', { records: [{ Stars: 4 }] }, /Stars: must be between 0 and 3/],
    ['an impossible date', { records: [{ Due: '2024-02-30' }] }, /Due/],
    ['an invalid email', { records: [{ Email: 'nope' }] }, /Email/],
    ['an unknown select option', { records: [{ Stage: 'Z' }] }, /unknown option "Z"/],
    ['a NUL character in text', { records: [{ Name: 'a\u0000b' }] }, /NUL/],
    [
      'an attachment url that was never uploaded',
      { records: [{ Files: [{ url: 'https://example.com/x.png' }] }] },
      /Files\[0\]\.url/,
    ],
    ['a field given by name and by id', { records: [{ Name: 'a', NAME: 'b' }] }, /given twice/],
    [
      'records without matchOn values',
      { records: [{ Count: 1 }], matchOn: ['NAME_ID'] },
      /needs a value for matchOn field "Name"/,
    ],
    [
      'two records with the same matchOn values',
      { records: [{ Name: 'k' }, { Name: 'k' }], matchOn: ['NAME_ID'] },
      /same matchOn values/,
    ],
    [
      'a record matching two existing records',
      { records: [{ Name: 'dup', Count: 9 }], matchOn: ['NAME_ID'] },
      /matches 2 existing records/,
    ],
  ])('%s', async (_case, body, message) => {
    const before = await recordCount();
    const payload = JSON.parse(JSON.stringify(body).replaceAll('NAME_ID', fieldIds.Name!));
    const response = await post('/bulk', payload).expect(400);
    expect(response.body.error.code).toBe('BAD_REQUEST');
    expect(response.body.error.message).toMatch(message);
    expect(await recordCount()).toBe(before);
  });

  it('is all or nothing: one bad record among 100 writes none', async () => {
    const before = await recordCount();
    const records = Array.from({ length: 100 }, (_, i) => ({ Name: `r${i}`, Count: i === 99 ? 'bad' : i }));
    const response = await post('/bulk', { records }).expect(400);
    expect(response.body.error.message).toMatch(/body\.records\[99\]\.Count/);
    expect(await recordCount()).toBe(before);
  });
});

describe('single record writes refuse invalid input', () => {
  it('refuses an unknown key, a body without record, and bad values', async () => {
    await post('', { record: { Nope: 1 } }).expect(400);
    await post('', { Name: 'x' }).expect(400);
    const created = await post('', { record: { Name: 'ok' } }).expect(201);
    const patch = await h.api
      .patch(url(`/${created.body.id}`))
      .set('Authorization', auth)
      .send({ record: { Count: 'x' } })
      .expect(400);
    expect(patch.body.error.message).toMatch(/body\.record\.Count/);
    const unchanged = await h.api
      .get(url(`/${created.body.id}`))
      .set('Authorization', auth)
      .expect(200);
    expect(unchanged.body.fields.Count).toBeNull();
  });
});

describe('record access', () => {
  it('needs records scopes', async () => {
    const key = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', auth)
      .send({ name: 'schema only', scopes: ['schema:read'] })
      .expect(201);
    const response = await h.api
      .post(url('/list'))
      .set('Authorization', h.bearer(key.body.key))
      .send({})
      .expect(403);
    expect(response.body.error.message).toMatch(/records:read/);
    await h.api
      .post(url('/bulk'))
      .set('Authorization', h.bearer(key.body.key))
      .send({ records: [{ Name: 'x' }] })
      .expect(403);
  });

  it('answers 404 for an unknown database or table', async () => {
    await h.api
      .post('/api/v1/bases/00000000-0000-4000-8000-000000000000/tables/Items/records/list')
      .set('Authorization', auth)
      .send({})
      .expect(404);
    const table = await h.api
      .post(`/api/v1/bases/${baseId}/tables/Nope/records/list`)
      .set('Authorization', auth)
      .send({})
      .expect(404);
    expect(table.body.error.message).toBe('Table "Nope" not found');
  });
});

describe('errors that help (issue 14)', () => {
  it('suggest the nearest field names for one that is no field, wherever it is named', async () => {
    const before = await recordCount();
    const write = await post('/bulk', { records: [{ Nmae: 'x' }] }).expect(400);
    expect(write.body.error.message).toBe('body.records[0]: unknown field "Nmae" (did you mean "Name"?)');
    const filter = await post('/list', {
      filter: {
        or: [
          { field: 'Name', equals: 'a' },
          { field: 'count', greater_than: 1 },
          { field: 'Cuont', equals: 1 },
        ],
      },
    }).expect(400);
    expect(filter.body.error.message).toBe(
      'body.filter.or[2].field: unknown field "Cuont" (did you mean "Count"?)',
    );
    const sort = await post('/list', { sort: [{ field: 'Stars' }, { field: 'Emial' }] }).expect(400);
    expect(sort.body.error.message).toBe('body.sort[1].field: unknown field "Emial" (did you mean "Email"?)');
    const projection = await post('/list', { fields: ['Due', 'Dude'] }).expect(400);
    expect(projection.body.error.message).toBe('body.fields[1]: unknown field "Dude" (did you mean "Due"?)');
    const nothingNear = await post('/bulk', { records: [{ Quantity: 1 }] }).expect(400);
    expect(nothingNear.body.error.message).toBe('body.records[0]: unknown field "Quantity"');
    expect(await recordCount()).toBe(before);
  });

  it('list the options of a select for a name that is none of them', async () => {
    const response = await post('/bulk', { records: [{ Stage: 'a ' }] }).expect(400);
    expect(response.body.error.message).toBe(
      'body.records[0].Stage: unknown option "a " (did you mean "A"?); the options are "A"',
    );
  });

  it('say the limit of a value that is too long', async () => {
    const response = await post('/bulk', { records: [{ Name: 'x'.repeat(100_001) }] }).expect(400);
    expect(response.body.error.message).toBe('body.records[0].Name: must be at most 100000 characters');
  });

  it('name every bad record of a batch, up to twenty, writing none', async () => {
    const before = await recordCount();
    const records = [
      { Name: 'fine' },
      { Email: 'not an email' },
      { Count: 'ten' },
      { Name: 'fine too' },
      ...Array.from({ length: 25 }, () => ({ Stars: 9 })),
    ];
    const response = await post('/bulk', { records }).expect(400);
    const problems = (response.body.error.message as string).split('; ');
    expect(problems).toHaveLength(21);
    expect(problems[0]).toBe('body.records[1].Email: must be an email address');
    expect(problems[1]).toMatch(/^body\.records\[2\]\.Count: /);
    expect(problems[2]).toMatch(/^body\.records\[4\]\.Stars: /);
    expect(problems[20]).toBe('and 7 more bad records');
    expect(await recordCount()).toBe(before);
  });
});

describe('errors that teach (issue 26)', () => {
  it('names a misspelt table of the path and suggests the nearest of its base, none of another', async () => {
    const deals = await createBase(h, {
      name: 'Sales',
      tables: [
        { name: 'Deals', fields: [{ name: 'Name', type: 'single_line_text' }] },
        { name: 'Companies', fields: [{ name: 'Name', type: 'single_line_text' }] },
      ],
    });
    // Another base's table as near to the misspelling: never suggested.
    await createBase(h, {
      name: 'Other',
      tables: [{ name: 'Dealy', fields: [{ name: 'Name', type: 'single_line_text' }] }],
    });
    const list = await h.api
      .post(`/api/v1/bases/${deals.body.id}/tables/Dealz/records/list`)
      .set('Authorization', auth)
      .send({})
      .expect(404);
    expect(list.body.error).toEqual({
      code: 'NOT_FOUND',
      message: 'Table "Dealz" not found (did you mean "Deals"?)',
    });
    const schema = await h.api
      .get(`/api/v1/bases/${deals.body.id}/tables/companys`)
      .set('Authorization', auth)
      .expect(404);
    expect(schema.body.error).toEqual({
      code: 'NOT_FOUND',
      message: 'Table "companys" not found (did you mean "Companies"?)',
    });
  });

  it('reports every bad value of one record, writing nothing', async () => {
    const before = await recordCount();
    const bad = { Email: 'not an email', Count: 'ten', Stars: 9 };
    const expected =
      'body.record.Email: must be an email address; body.record.Count: must be a number; ' +
      'body.record.Stars: must be between 0 and 3';
    const created = await post('', { record: bad }).expect(400);
    expect(created.body.error).toEqual({ code: 'BAD_REQUEST', message: expected });
    const existing = (await post('/list', { limit: 1 }).expect(200)).body.records[0].id;
    const updated = await h.api
      .patch(url(`/${existing}`))
      .set('Authorization', auth)
      .send({ record: { Name: 'changed', ...bad } })
      .expect(400);
    expect(updated.body.error).toEqual({ code: 'BAD_REQUEST', message: expected });
    const bulk = await post('/bulk', { records: [{ Name: 'fine' }, bad] }).expect(400);
    expect(bulk.body.error.message).toBe(expected.replaceAll('body.record.', 'body.records[1].'));
    const upsert = await post('/bulk', { records: [bad], matchOn: [fieldIds.Name] }).expect(400);
    expect(upsert.body.error.message).toBe(expected.replaceAll('body.record.', 'body.records[0].'));
    expect(await recordCount()).toBe(before);
    const unchanged = await h.api
      .get(url(`/${existing}`))
      .set('Authorization', auth)
      .expect(200);
    expect(unchanged.body.fields.Name).not.toBe('changed');
  });

  it('lists twenty problems of a record, then how many more', async () => {
    const before = await recordCount();
    const record = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`Extra${i}`, 1]));
    const response = await post('', { record }).expect(400);
    const problems = (response.body.error.message as string).split('; ');
    expect(problems).toHaveLength(21);
    expect(problems[0]).toBe('body.record: unknown field "Extra0"');
    expect(problems[19]).toBe('body.record: unknown field "Extra19"');
    expect(problems[20]).toBe('and 5 more in body.record');
    const batch = await post('/bulk', { records: [record, { Count: 'ten' }] }).expect(400);
    expect((batch.body.error.message as string).split('; ').slice(19)).toEqual([
      'body.records[0]: unknown field "Extra19"',
      'and 5 more in body.records[0]',
      'and 1 more bad records',
    ]);
    expect(await recordCount()).toBe(before);
  });

  it('points a GET of the records to POST …/records/list, naming the methods the path takes', async () => {
    const path = `/api/v1/bases/${baseId}/tables/Items/records`;
    const listing = await h.api.get(path).set('Authorization', auth).expect(404);
    expect(listing.body.error).toEqual({
      code: 'NOT_FOUND',
      message:
        `No route for GET ${path}; this path takes POST; to list records, use POST ${path}/list ` +
        'with a JSON body for filters, sorts and pages ({} lists the first page)',
    });
    expect(listing.headers.allow).toBe('POST');
    const put = await h.api
      .put(`/api/v1/bases/${baseId}/tables/Items`)
      .set('Authorization', auth)
      .expect(404);
    expect(put.body.error.message).toBe(
      `No route for PUT /api/v1/bases/${baseId}/tables/Items; this path takes GET, PATCH, DELETE`,
    );
    const nowhere = await h.api.get('/api/v1/no/such/route').set('Authorization', auth).expect(404);
    expect(nowhere.body.error.message).toBe('No route for GET /api/v1/no/such/route');
  });
});
