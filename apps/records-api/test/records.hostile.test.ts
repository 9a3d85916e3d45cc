import { randomUUID } from 'node:crypto';
import { createBase, type Harness, startHarness } from './harness';
import { deeplyNested, expectRefused, type HostileRequest, transportCases } from './hostile';

/** Record routes against NUL bytes, bad encodings, huge and deeply nested values, wrong types. */

let h: Harness;
let root: string;
let base: string;
let recordId: string;
let textFieldId: string;

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
  const created = await createBase(h, {
    name: 'Hostile',
    tables: [
      {
        name: 'T',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Notes', type: 'long_text' },
          { name: 'Amount', type: 'number' },
          { name: 'When', type: 'datetime' },
          { name: 'Tags', type: 'multiple_select', template: { options: [{ name: 'a' }] } },
        ],
      },
    ],
  });
  base = created.body.id;
  textFieldId = created.body.tables[0].fields[0].id;
  const record = await h.api
    .post(`/api/v1/bases/${base}/tables/T/records`)
    .set('Authorization', root)
    .send({ record: { Name: 'kept' } })
    .expect(201);
  recordId = record.body.id;
});
afterAll(() => h.close());

const records = () => `/bases/${base}/tables/T/records`;

function cases(): HostileRequest[] {
  const list = { method: 'post' as const, path: `${records()}/list` };
  const bulk = { method: 'post' as const, path: `${records()}/bulk` };
  const one = { method: 'patch' as const, path: `${records()}/${recordId}` };
  return [
    // NUL bytes wherever text goes.
    { name: 'NUL in a filter operand', ...list, body: { filter: { field: 'Name', contains: 'a\u0000b' } } },
    { name: 'NUL in an in-list item', ...list, body: { filter: { field: 'Name', in: ['a', 'b\u0000'] } } },
    {
      name: 'NUL in a filter field reference',
      ...list,
      body: { filter: { field: 'Na\u0000me', equals: 'x' } },
    },
    { name: 'NUL in a sort field', ...list, body: { sort: [{ field: 'Name\u0000' }] } },
    {
      name: 'NUL in a comparison operand',
      ...list,
      body: { filter: { field: 'When', greater_than: '2024\u0000' } },
    },
    {
      name: 'NUL in the table reference of the path',
      method: 'post',
      path: `/bases/${base}/tables/T%00/records/list`,
    },
    {
      name: 'NUL in the database reference of the path',
      method: 'post',
      path: `/bases/${base}%00/tables/T/records/list`,
    },
    { name: 'NUL in the record id of the path', method: 'get', path: `${records()}/${recordId}%00` },
    { name: 'NUL in a record value', ...bulk, body: { records: [{ Name: 'a\u0000' }] } },
    { name: 'NUL in a record key', ...bulk, body: { records: [{ 'Na\u0000me': 'a' }] } },
    { name: 'NUL in a multiple-select option', ...bulk, body: { records: [{ Tags: ['a\u0000'] }] } },
    { name: 'NUL in an update', ...one, body: { record: { Notes: '\u0000' } } },
    {
      name: 'NUL in a bulk-delete id',
      method: 'post',
      path: `${records()}/bulk-delete`,
      body: { ids: [`${recordId}\u0000`] },
    },
    {
      name: 'NUL in a matchOn id',
      ...bulk,
      body: { records: [{ Name: 'x' }], matchOn: [`${textFieldId}\u0000`] },
    },
    // Bad encodings in the path.
    {
      name: 'a malformed percent-encoding in the table',
      method: 'post',
      path: `/bases/${base}/tables/%E0%A4%A/records/list`,
    },
    { name: 'a malformed percent-encoding in the record id', method: 'delete', path: `${records()}/%ZZ` },
    { name: 'a lone surrogate in a value', ...bulk, body: '{"records":[{"Name":"\\ud800"}]}' },
    // Huge values.
    { name: 'a text past 100,000 characters', ...bulk, body: { records: [{ Notes: 'x'.repeat(100_001) }] } },
    {
      name: 'a filter operand past 10,000 characters',
      ...list,
      body: { filter: { field: 'Name', equals: 'x'.repeat(10_001) } },
    },
    {
      name: 'a 200-condition or of 1,000-character contains',
      ...list,
      body: {
        filter: { or: Array.from({ length: 200 }, () => ({ field: 'Notes', contains: 'y'.repeat(1_000) })) },
      },
      mentions: /characters/,
    },
    {
      name: 'a record of 600,000 keys',
      ...bulk,
      body: `{"records":[{${Array.from({ length: 600_000 }, (_, i) => `"k${i}":1`).join(',')}}]}`,
      mentions: /keys/,
    },
    {
      name: 'a body past the list limit',
      ...list,
      body: { filter: { field: 'Name', in: Array(200_000).fill('zzzzzz') } },
      status: 413,
    },
    { name: 'a number too large for a double', ...bulk, body: '{"records":[{"Amount":1e400}]}' },
    { name: 'a year past 9999', ...bulk, body: { records: [{ When: '10000-01-01T00:00:00Z' }] } },
    { name: '101 records', ...bulk, body: { records: Array.from({ length: 101 }, () => ({ Name: 'x' })) } },
    { name: 'an offset past what PostgreSQL counts', ...list, body: { offset: 2 ** 63 } },
    // Deep nesting.
    { name: 'a value nested 100,000 deep', ...bulk, body: `{"records":[{"Name":${deeplyNested(100_000)}}]}` },
    {
      name: 'a filter nested 5,000 groups deep',
      ...list,
      body: `{"filter":${'{"and":['.repeat(5000)}{"field":"Name","equals":"x"}${']}'.repeat(5000)}}`,
    },
    // Wrong shapes and ids.
    { name: 'a record id that is not a UUID', method: 'get', path: `${records()}/not-a-uuid`, status: 400 },
    { name: 'a prototype-polluting key', ...bulk, body: '{"records":[{"__proto__":{"admin":true}}]}' },
    { name: 'a record that is an array', ...bulk, body: { records: [['Name', 'x']] } },
    {
      name: 'an unknown record of another table',
      method: 'delete',
      path: `${records()}/${randomUUID()}`,
      status: 404,
    },
    ...transportCases(list, { limit: 1 }),
    ...transportCases(bulk, { records: [{ Name: 'x' }] }),
    ...transportCases(one, { record: { Name: 'x' } }),
  ];
}

describe('record routes refuse hostile input, writing nothing', () => {
  // Names only: the cases need ids that exist once beforeAll has run.
  const names = (() => {
    base = '00000000-0000-4000-8000-000000000000';
    recordId = base;
    return cases().map((c, index) => [
      c.name,
      `${c.method.toUpperCase()} ${c.path.split('/').slice(-1)[0]}`,
      index,
    ]);
  })();

  it.each(names)('%s (%s)', async (_name, _route, index) => {
    await expectRefused(h, cases()[index as number]!, root);
  });

  it('still lists the record afterwards', async () => {
    const listed = await h.api.post(`/api/v1${records()}/list`).set('Authorization', root).expect(200);
    expect(listed.body.total).toBe(1);
  });
});
