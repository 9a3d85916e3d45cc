import { MAX_EXPANDED_LINKS } from '@recordbase/contracts/records';
import { createBase, type Harness, startHarness } from './harness';

/**
 * `expand`: beside a link field's ids, each linked record's id and primary field value,
 * one level, in link order, capped; in the same statement as the page.
 */

let h: Harness;
let auth: string;
let baseId: string;
let companies: string[];
let codes: string[];
let dealId: string;
const url = (table: string, path = '') => `/api/v1/bases/${baseId}/tables/${table}/records${path}`;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Expand',
    tables: [
      { name: 'Companies', fields: [{ name: 'Name', type: 'single_line_text' }] },
      { name: 'Codes', fields: [{ name: 'Code', type: 'number' }] },
      {
        name: 'Deals',
        fields: [
          { name: 'Title', type: 'single_line_text' },
          { name: 'Company', type: 'linked_record', template: { tableId: 'Companies' } },
          { name: 'Codes', type: 'linked_record', template: { tableId: 'Codes' } },
        ],
      },
    ],
  });
  baseId = base.body.id;
  const bulk = async (table: string, records: object[]) =>
    (
      await h.api.post(url(table, '/bulk')).set('Authorization', auth).send({ records }).expect(201)
    ).body.records.map((record: { id: string }) => record.id);
  companies = await bulk('Companies', [{ Name: 'Acme' }, { Name: 'Globex' }]);
  codes = [];
  for (let start = 0; start < MAX_EXPANDED_LINKS + 1; start += 100) {
    const count = Math.min(100, MAX_EXPANDED_LINKS + 1 - start);
    codes.push(
      ...(await bulk(
        'Codes',
        Array.from({ length: count }, (_, index) => ({ Code: start + index })),
      )),
    );
  }
  [dealId] = await bulk('Deals', [
    { Title: 'big', Company: [companies[1], companies[0]], Codes: codes },
    { Title: 'none' },
  ]);
});
afterAll(() => h.close());

describe('expand', () => {
  it('renders each linked record with its primary value beside the ids, in link order, capped', async () => {
    const page = await h.api
      .post(url('Deals', '/list'))
      .set('Authorization', auth)
      .send({ expand: ['Company', 'codes'], sort: [{ field: 'Title' }] })
      .expect(200);
    const [big, none] = page.body.records;
    expect(big.fields.Company).toEqual([companies[1], companies[0]]);
    expect(big.expanded.Company).toEqual([
      { id: companies[1], primary: 'Globex' },
      { id: companies[0], primary: 'Acme' },
    ]);
    expect(big.fields.Codes).toHaveLength(MAX_EXPANDED_LINKS + 1);
    expect(big.expanded.Codes).toHaveLength(MAX_EXPANDED_LINKS);
    expect(big.expanded.Codes[0]).toEqual({ id: codes[0], primary: 0 });
    expect(none.expanded).toEqual({ Company: [], Codes: [] });
  });

  it('is absent unless asked, and works on a single read with projection', async () => {
    const plain = await h.api.post(url('Deals', '/list')).set('Authorization', auth).send({}).expect(200);
    expect(plain.body.records[0]).not.toHaveProperty('expanded');
    const one = await h.api
      .get(url('Deals', `/${dealId}?fields=Title&expand=Company`))
      .set('Authorization', auth)
      .expect(200);
    expect(one.body.fields).toEqual({ Title: 'big' });
    expect(one.body.expanded).toEqual({
      Company: [
        { id: companies[1], primary: 'Globex' },
        { id: companies[0], primary: 'Acme' },
      ],
    });
  });

  it.each([
    [{ expand: ['Title'] }, 'body.expand[0]: "Title" is a single_line_text field, not a link field'],
    [{ expand: ['Compnay'] }, 'body.expand[0]: unknown field "Compnay" (did you mean "Company"?)'],
    [{ expand: [] }, 'body.expand: must name at least one link field'],
  ])('refuses %j with a 400 naming the problem', async (body, message) => {
    const response = await h.api
      .post(url('Deals', '/list'))
      .set('Authorization', auth)
      .send(body)
      .expect(400);
    expect(response.body.error.message).toContain(message);
  });
});
