import { createBase, type Harness, startHarness } from './harness';
import { deeplyNested, expectRefused, type HostileRequest, transportCases } from './hostile';

/** Databases, tables and fields against NUL bytes, bad encodings, huge and nested values, wrong types. */

let h: Harness;
let root: string;
let base: string;
let fieldId: string;

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
  const created = await createBase(h, {
    name: 'Hostile schema',
    tables: [
      {
        name: 'T',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Price', type: 'currency' },
        ],
      },
    ],
  });
  base = created.body.id;
  fieldId = created.body.tables[0].fields[0].id;
});
afterAll(() => h.close());

const field = (overrides: object) => ({ name: 'F', type: 'single_line_text', ...overrides });
const manyFields = (count: number) => Array.from({ length: count }, (_, i) => field({ name: `f${i}` }));

function cases(): HostileRequest[] {
  const bases = { method: 'post' as const, path: '/bases' };
  const tables = { method: 'post' as const, path: `/bases/${base}/tables` };
  const fields = { method: 'post' as const, path: `/bases/${base}/tables/T/fields` };
  const table = { method: 'patch' as const, path: `/bases/${base}/tables/T` };
  const oneField = { method: 'patch' as const, path: `/bases/${base}/tables/T/fields/${fieldId}` };
  return [
    { name: 'NUL in a database name', ...bases, body: { name: 'a\u0000b' } },
    {
      name: 'a control character in a table name',
      ...tables,
      body: { name: 'a\u0007', fields: [field({})] },
    },
    { name: 'NUL in a field name', ...tables, body: { name: 'X', fields: [field({ name: 'n\u0000' })] } },
    {
      name: 'NUL in a select option colour',
      ...fields,
      body: field({ type: 'single_select', template: { options: [{ name: 'a', color: 're\u0000d' }] } }),
    },
    {
      name: 'NUL in a select option name',
      ...fields,
      body: field({ type: 'multiple_select', template: { options: [{ name: 'a\u0000' }] } }),
    },
    {
      name: 'NUL in a currency symbol',
      ...fields,
      body: field({ type: 'currency', template: { currencySymbol: '\u0000' } }),
    },
    {
      name: 'NUL in a linked table reference',
      ...fields,
      body: field({ type: 'linked_record', template: { tableId: 'T\u0000' } }),
    },
    { name: 'NUL in a primaryFieldId', ...table, body: { primaryFieldId: 'fld\u0000' } },
    { name: 'NUL in a renamed field', ...oneField, body: { name: '\u0000' } },
    { name: 'NUL in the database of the path', method: 'get', path: `/bases/${base}%00` },
    { name: 'NUL in the table of the path', method: 'get', path: `/bases/${base}/tables/T%00` },
    { name: 'NUL in the field of the path', method: 'get', path: `/bases/${base}/tables/T/fields/F%00` },
    {
      name: 'NUL in a table path of a change',
      method: 'patch',
      path: `/bases/${base}/tables/T%00`,
      body: { name: 'Y' },
    },
    {
      name: 'a malformed percent-encoding in the table',
      method: 'get',
      path: `/bases/${base}/tables/%E0%A4%A`,
    },
    {
      name: 'a malformed percent-encoding in the field',
      method: 'delete',
      path: `/bases/${base}/tables/T/fields/%C3`,
    },
    { name: 'a lone surrogate in a name', ...bases, body: '{"name":"\\udc00"}' },
    { name: 'an unknown field type', ...fields, body: field({ type: 'spreadsheet' }) },
    {
      name: 'a template nested 100,000 deep',
      ...fields,
      body: `{"name":"F","type":"single_select","template":${deeplyNested(100_000)}}`,
    },
    { name: 'a name of 10,000 characters', ...bases, body: { name: 'x'.repeat(10_000) } },
    {
      name: '50 tables of 500 fields in one request',
      ...bases,
      body: {
        name: 'Big',
        tables: Array.from({ length: 50 }, (_, i) => ({ name: `t${i}`, fields: manyFields(500) })),
      },
      mentions: /500/,
    },
    { name: 'a table of 501 fields', ...tables, body: { name: 'Wide', fields: manyFields(501) } },
    {
      name: 'select options past the bound',
      ...fields,
      body: field({
        type: 'single_select',
        template: { options: Array.from({ length: 1001 }, (_, i) => ({ name: `o${i}` })) },
      }),
    },
    { name: 'a rating max of 11', ...fields, body: field({ type: 'rating', template: { max: 11 } }) },
    {
      name: 'a database body past the limit',
      ...bases,
      body: { name: 'x', tables: [{ name: 'y'.repeat(5_000_000), fields: [] }] },
      status: 413,
    },
    ...transportCases(bases, { name: 'x' }),
    ...transportCases(tables, { name: 'x', fields: [field({})] }),
    ...transportCases(oneField, { name: 'y' }),
  ];
}

describe('schema routes refuse hostile input, writing nothing', () => {
  const names = (() => {
    base = '00000000-0000-4000-8000-000000000000';
    fieldId = 'fld000000000000';
    return cases().map((c, index) => [
      c.name,
      `${c.method.toUpperCase()} ${c.path.replace(base, ':id')}`,
      index,
    ]);
  })();

  it.each(names)('%s (%s)', async (_name, _route, index) => {
    await expectRefused(h, cases()[index as number]!, root);
  });
});
