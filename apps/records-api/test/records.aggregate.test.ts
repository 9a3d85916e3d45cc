import { MAX_AGGREGATE_GROUPS } from '@recordbase/contracts/records';
import { createBase, type Harness, startHarness } from './harness';

/**
 * `POST .../records/aggregate`: groups of the matching records with their counts,
 * sums, averages, extremes and emptiness counts, from one statement; groups sorted and capped.
 */

let h: Harness;
let auth: string;
let baseId: string;
const url = (table: string, path = '') => `/api/v1/bases/${baseId}/tables/${table}/records${path}`;
const aggregate = async (body: object, status = 200, table = 'Deals') =>
  (await h.api.post(url(table, '/aggregate')).set('Authorization', auth).send(body).expect(status)).body;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Aggregates',
    tables: [
      {
        name: 'Deals',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          {
            name: 'Stage',
            type: 'single_select',
            template: { options: [{ name: 'Lead' }, { name: 'Won' }] },
          },
          { name: 'Amount', type: 'currency' },
          { name: 'Closed', type: 'date' },
          { name: 'Tags', type: 'multiple_select', template: { options: [{ name: 'x' }] } },
        ],
      },
      { name: 'Many', fields: [{ name: 'N', type: 'number' }] },
    ],
  });
  baseId = base.body.id;
  await h.api
    .post(url('Deals', '/bulk'))
    .set('Authorization', auth)
    .send({
      records: [
        { Name: 'acme renewal', Stage: 'Won', Amount: 100, Closed: '2024-03-01' },
        { Name: 'globex', Stage: 'Won', Amount: 50.5, Closed: '2024-01-15' },
        { Name: 'initech', Stage: 'Lead', Amount: 10 },
        { Name: 'acme upsell', Stage: 'Lead' },
        { Name: 'no stage', Amount: 1 },
      ],
    })
    .expect(201);
});
afterAll(() => h.close());

describe('records/aggregate', () => {
  it('groups by a field, empty first, each group answering its aggregations in order', async () => {
    const body = await aggregate({
      groupBy: ['Stage'],
      aggregations: [
        { fn: 'count' },
        { field: 'Amount', fn: 'sum' },
        { field: 'Amount', fn: 'avg' },
        { field: 'Closed', fn: 'max' },
        { field: 'Amount', fn: 'count_empty' },
      ],
    });
    expect(body).toEqual({
      groups: [
        { key: { Stage: null }, values: [1, 1, 1, null, 0] },
        { key: { Stage: 'Lead' }, values: [2, 10, 10, null, 1] },
        { key: { Stage: 'Won' }, values: [2, 150.5, 75.25, '2024-03-01', 0] },
      ],
      truncated: false,
    });
  });

  it('without groupBy answers one group of every matching record, with filter and search', async () => {
    expect(
      await aggregate({ search: 'ACME', aggregations: [{ fn: 'count' }, { field: 'Amount', fn: 'min' }] }),
    ).toEqual({ groups: [{ key: {}, values: [2, 100] }], truncated: false });
    expect(
      await aggregate({
        filter: { field: 'Amount', greater_than: 1000 },
        aggregations: [{ fn: 'count' }, { field: 'Amount', fn: 'sum' }],
      }),
    ).toEqual({ groups: [{ key: {}, values: [0, null] }], truncated: false });
  });

  it(`answers at most ${MAX_AGGREGATE_GROUPS} groups, saying when there were more`, async () => {
    for (let start = 0; start < MAX_AGGREGATE_GROUPS + 5; start += 100) {
      const records = Array.from({ length: 100 }, (_, index) => ({ N: start + index }));
      await h.api.post(url('Many', '/bulk')).set('Authorization', auth).send({ records }).expect(201);
    }
    const body = await aggregate({ groupBy: ['N'], aggregations: [{ fn: 'count' }] }, 200, 'Many');
    expect(body.truncated).toBe(true);
    expect(body.groups).toHaveLength(MAX_AGGREGATE_GROUPS);
    expect(body.groups[0]).toEqual({ key: { N: 0 }, values: [1] });
    expect(body.groups[MAX_AGGREGATE_GROUPS - 1].key).toEqual({ N: MAX_AGGREGATE_GROUPS - 1 });
  });

  it.each([
    [{ aggregations: [] }, 'body.aggregations: must hold at least one aggregation'],
    [{ aggregations: [{ fn: 'median', field: 'Amount' }] }, 'body.aggregations[0].fn'],
    [{ aggregations: [{ fn: 'sum' }] }, 'body.aggregations[0].field: "sum" needs a field'],
    [
      { aggregations: [{ fn: 'sum', field: 'Name' }] },
      'body.aggregations[0].fn: "sum" does not apply to the single_line_text field "Name"',
    ],
    [{ aggregations: [{ fn: 'max', field: 'Stage' }] }, 'does not apply to the single_select field "Stage"'],
    [
      { aggregations: [{ fn: 'sum', field: 'Amout' }] },
      'body.aggregations[0].field: unknown field "Amout" (did you mean "Amount"?)',
    ],
    [
      { groupBy: ['Tags'], aggregations: [{ fn: 'count' }] },
      'body.groupBy[0]: a multiple_select field holds no single value',
    ],
    [
      { groupBy: ['Stag'], aggregations: [{ fn: 'count' }] },
      'body.groupBy[0]: unknown field "Stag" (did you mean "Stage"?)',
    ],
    [
      { filter: { field: 'Nope', equals: 1 }, aggregations: [{ fn: 'count' }] },
      'body.filter.field: unknown field "Nope"',
    ],
  ])('refuses %j with a 400 naming the problem', async (body, message) => {
    expect((await aggregate(body, 400)).error.message).toContain(message);
  });
});
