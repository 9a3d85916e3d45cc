import type { FieldTemplate, FieldType } from '@recordbase/contracts/fields';
import type { Filter, Sort, TableRecord } from '@recordbase/contracts/records';
import { compareForSort, matchesFilter } from '@recordbase/domain/records/filter-evaluator';
import { buildTableMeta, type TableMeta } from '@recordbase/domain/records/table-meta';
import fc from 'fast-check';
import {
  COMPARISON_OPERATORS,
  emptinessCondition,
  filterTree,
  listCondition,
  SELECT_OPERATORS,
  scalarCondition,
  TEXT_OPERATORS,
} from './filter-arbitraries';
import { createBase, type Harness, startHarness } from './harness';

/**
 * Random filters, sorts and pages against the real API, checked against an in-memory evaluation
 * of the same filter over the same rows; and random bodies, which must never cause a 500.
 */

let h: Harness;
let auth: string;
let records: string;
let table: TableMeta;
let rows: TableRecord[];

const words = ['', 'ab', 'Ab', 'abc', 'b a', 'ba', 'A', 'c%', 'x_y'];
const options = ['A', 'B', 'C'];
const tags = ['a', 'b', 'c'];
const dates = ['2024-01-01', '2024-01-02', '2024-02-29', '2025-06-30'];
const dateTimes = [
  '2024-01-01T00:00:00.000Z',
  '2024-01-01T23:59:59.999Z',
  '2024-01-02T12:00:00.000Z',
  '2025-06-30T08:30:00.000Z',
];
const numbers = [-1.5, 0, 1, 2, 2.5, 100];

const fieldDefs: { name: string; type: FieldType; template?: object }[] = [
  { name: 'Name', type: 'single_line_text' },
  { name: 'Count', type: 'number' },
  { name: 'Stars', type: 'rating', template: { max: 5 } },
  { name: 'Due', type: 'date' },
  { name: 'At', type: 'datetime' },
  { name: 'Stage', type: 'single_select', template: { options: options.map((name) => ({ name })) } },
  { name: 'Tags', type: 'multiple_select', template: { options: tags.map((name) => ({ name })) } },
  { name: 'Done', type: 'checkbox' },
];

const rowArbitrary = fc.record(
  {
    Name: fc.constantFrom(...words, null),
    Count: fc.constantFrom(...numbers, null),
    Stars: fc.constantFrom(0, 1, 3, 5, null),
    Due: fc.constantFrom(...dates, null),
    At: fc.constantFrom(...dateTimes, null),
    Stage: fc.constantFrom(...options, null),
    Tags: fc.subarray(tags),
    Done: fc.boolean(),
  },
  { requiredKeys: [] },
);

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, { name: 'Prop', tables: [{ name: 'Rows', fields: fieldDefs }] });
  const created = base.body.tables[0];
  table = buildTableMeta({
    databaseId: base.body.id,
    schemaName: `base_${base.body.id.replace(/-/g, '')}`,
    id: created.id,
    name: created.name,
    primaryFieldId: created.primaryFieldId,
    fields: created.fields.map(
      (f: { id: string; name: string; type: FieldType; template: FieldTemplate }) => f,
    ),
  });
  records = `/api/v1/bases/${base.body.id}/tables/Rows/records`;
  const sample = fc.sample(rowArbitrary, { numRuns: 120, seed: 42 });
  for (let i = 0; i < sample.length; i += 60) {
    await h.api
      .post(`${records}/bulk`)
      .set('Authorization', auth)
      .send({ records: sample.slice(i, i + 60) })
      .expect(201);
  }
  rows = (await h.api.post(`${records}/list`).set('Authorization', auth).send({ limit: 2000 }).expect(200))
    .body.records;
  expect(rows).toHaveLength(120);
});
afterAll(() => h.close());

/** A field by name or by id; system fields by name. */
const fieldRef = (name: string) => {
  const field = table.fieldsByNameKey.get(name.toLowerCase());
  return field ? fc.constantFrom(name, field.id) : fc.constant(name);
};

function conditionArbitrary(): fc.Arbitrary<Filter> {
  const empties = (name: string) => emptinessCondition(fieldRef(name));
  const scalarOps = (name: string, ops: string[], value: fc.Arbitrary<unknown>) =>
    scalarCondition(fieldRef(name), ops, value);
  const listOps = (name: string, value: fc.Arbitrary<unknown>) => listCondition(fieldRef(name), value);
  const comparisons = COMPARISON_OPERATORS;
  return fc.oneof(
    scalarOps('Name', TEXT_OPERATORS, fc.constantFrom(...words.filter(Boolean), 'a', 'B', '%', '_')),
    listOps('Name', fc.constantFrom(...words.filter(Boolean))),
    empties('Name'),
    scalarOps('Count', comparisons, fc.constantFrom(...numbers, 1.25)),
    listOps('Count', fc.constantFrom(...numbers)),
    empties('Count'),
    scalarOps('Stars', comparisons, fc.constantFrom(0, 1, 2, 3, 5)),
    scalarOps('Due', comparisons, fc.constantFrom(...dates, '2024-01-01T12:00:00Z')),
    empties('Due'),
    scalarOps('At', comparisons, fc.constantFrom(...dateTimes, ...dates)),
    empties('At'),
    scalarOps('Stage', SELECT_OPERATORS, fc.constantFrom(...options, 'a', 'Z')),
    listOps('Stage', fc.constantFrom(...options, 'Z')),
    empties('Stage'),
    scalarOps('Tags', SELECT_OPERATORS, fc.constantFrom(...tags)),
    listOps('Tags', fc.constantFrom(...tags)),
    empties('Tags'),
    scalarOps('Done', ['equals', 'does_not_equal'], fc.boolean()),
    scalarOps(
      'createdAt',
      ['greater_than', 'less_than_or_equal_to'],
      fc.constantFrom('2000-01-01T00:00:00Z', '2100-01-01'),
    ),
  );
}

/** Built once the table exists, since conditions use its field ids. */
const filterArbitrary = (): fc.Arbitrary<Filter> => filterTree(conditionArbitrary());

const sortArbitrary: fc.Arbitrary<Sort[]> = fc.array(
  fc.record({
    field: fc.constantFrom(...fieldDefs.map((f) => f.name), 'createdAt', 'id'),
    direction: fc.constantFrom('asc' as const, 'desc' as const),
  }),
  { maxLength: 2 },
);

describe('list agrees with an in-memory evaluation', () => {
  it('for random filters and sorts', async () => {
    await fc.assert(
      fc.asyncProperty(filterArbitrary(), sortArbitrary, async (filter, sort) => {
        const response = await h.api
          .post(`${records}/list`)
          .set('Authorization', auth)
          .send({ filter, sort, limit: 2000 });
        expect(response.status).toBe(200);
        const expected = rows.filter((row) => matchesFilter(row, filter, table)).map((row) => row.id);
        const got: TableRecord[] = response.body.records;
        expect(got.map((row) => row.id).sort()).toEqual([...expected].sort());
        expect(response.body.total).toBe(expected.length);
        for (let i = 1; i < got.length; i++) {
          expect(
            compareForSort(got[i - 1]!, got[i]!, sort.length > 0 ? sort : undefined, table),
          ).toBeLessThanOrEqual(0);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('for random projections, by name or id, of random filters and sorts', async () => {
    const projection = fc
      .subarray(
        fieldDefs.map((f) => f.name),
        { minLength: 1 },
      )
      .chain((names) => fc.tuple(fc.constant(names), fc.tuple(...names.map((name) => fieldRef(name)))));
    const byId = new Map(rows.map((row) => [row.id, row]));
    await fc.assert(
      fc.asyncProperty(filterArbitrary(), sortArbitrary, projection, async (filter, sort, [names, refs]) => {
        const list = async (extra: object) =>
          (
            await h.api
              .post(`${records}/list`)
              .set('Authorization', auth)
              .send({ filter, sort, limit: 2000, ...extra })
              .expect(200)
          ).body;
        const [projected, whole] = [await list({ fields: refs }), await list({})];
        expect(projected.total).toBe(whole.total);
        const chosen = table.fields.filter((field) => names.includes(field.name));
        expect(projected.records).toEqual(
          whole.records.map((record: TableRecord) => {
            const full = byId.get(record.id)!;
            return {
              ...full,
              data: Object.fromEntries(chosen.map((field) => [field.id, full.data[field.id]])),
              fields: Object.fromEntries(chosen.map((field) => [field.name, full.fields[field.name]])),
            };
          }),
        );
      }),
      { numRuns: 60 },
    );
  });

  it('for random searches within random filters', async () => {
    // Searchable here: Name (text), Stage (single select), Tags (multiple select).
    const holds = (row: TableRecord, text: string) => {
      const wanted = text.toLowerCase();
      const values = [row.fields.Name, row.fields.Stage, ...((row.fields.Tags as string[]) ?? [])];
      return values.some((value) => typeof value === 'string' && value.toLowerCase().includes(wanted));
    };
    const searchText = fc.constantFrom('a', 'A', 'b', 'AB', 'x_', '%', 'c%', ' a', 'zz', 'Ba');
    await fc.assert(
      fc.asyncProperty(
        fc.option(filterArbitrary(), { nil: undefined }),
        searchText,
        async (filter, search) => {
          const response = await h.api
            .post(`${records}/list`)
            .set('Authorization', auth)
            .send({ ...(filter ? { filter } : {}), search, limit: 2000 })
            .expect(200);
          const expected = rows
            .filter((row) => (filter ? matchesFilter(row, filter, table) : true) && holds(row, search))
            .map((row) => row.id);
          expect(response.body.records.map((row: TableRecord) => row.id).sort()).toEqual(
            [...expected].sort(),
          );
          expect(response.body.total).toBe(expected.length);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('for random pages of a random filter', async () => {
    await fc.assert(
      fc.asyncProperty(
        filterArbitrary(),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 0, max: 130 }),
        async (filter, limit, offset) => {
          const full = await h.api
            .post(`${records}/list`)
            .set('Authorization', auth)
            .send({ filter, limit: 2000 })
            .expect(200);
          const page = await h.api
            .post(`${records}/list`)
            .set('Authorization', auth)
            .send({ filter, limit, offset })
            .expect(200);
          const ids = full.body.records.map((row: TableRecord) => row.id);
          expect(page.body.records.map((row: TableRecord) => row.id)).toEqual(
            ids.slice(offset, offset + limit),
          );
          expect(page.body.total).toBe(ids.length);
          expect(page.body.hasMore).toBe(offset + limit < ids.length);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('aggregate agrees with an in-memory evaluation', () => {
  type Aggregation = { field?: string; fn: string };
  const numeric = ['Count', 'Stars'];
  const aggregationArbitrary: fc.Arbitrary<Aggregation> = fc.oneof(
    fc.constant({ fn: 'count' }),
    fc.record({ field: fc.constantFrom(...numeric), fn: fc.constantFrom('sum', 'avg', 'min', 'max') }),
    fc.record({ field: fc.constantFrom('Due', 'At'), fn: fc.constantFrom('min', 'max') }),
    fc.record({
      field: fc.constantFrom('Name', 'Count', 'Due', 'Stage', 'Tags'),
      fn: fc.constantFrom('count_empty', 'count_not_empty'),
    }),
  );
  const groupByArbitrary = fc.option(
    fc.subarray(['Stage', 'Done', 'Due', 'Stars'], { minLength: 1, maxLength: 2 }),
    {
      nil: undefined,
    },
  );

  /** What one aggregation makes of a group's rows, as the API words it. */
  function evaluate(group: TableRecord[], aggregation: Aggregation): unknown {
    if (aggregation.fn === 'count') return group.length;
    const name = aggregation.field as string;
    if (aggregation.fn === 'count_empty' || aggregation.fn === 'count_not_empty') {
      return group.filter((row) =>
        matchesFilter(
          row,
          { field: name, [aggregation.fn === 'count_empty' ? 'is_empty' : 'is_not_empty']: true } as Filter,
          table,
        ),
      ).length;
    }
    const present = group
      .map((row) => row.fields[name])
      .filter((value) => value !== null && value !== undefined);
    if (present.length === 0) return null;
    if (aggregation.fn === 'sum') return (present as number[]).reduce((a, b) => a + b, 0);
    if (aggregation.fn === 'avg') return (present as number[]).reduce((a, b) => a + b, 0) / present.length;
    const sorted = [...present].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return aggregation.fn === 'min' ? sorted[0] : sorted[sorted.length - 1];
  }

  it('for random groupings and aggregations of random filters', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.option(filterArbitrary(), { nil: undefined }),
        groupByArbitrary,
        fc.array(aggregationArbitrary, { minLength: 1, maxLength: 4 }),
        async (filter, groupBy, aggregations) => {
          const response = await h.api
            .post(`${records}/aggregate`)
            .set('Authorization', auth)
            .send({ ...(filter ? { filter } : {}), ...(groupBy ? { groupBy } : {}), aggregations })
            .expect(200);
          const matching = rows.filter((row) => (filter ? matchesFilter(row, filter, table) : true));
          const groups = new Map<string, TableRecord[]>();
          for (const row of matching) {
            const key = JSON.stringify((groupBy ?? []).map((name) => row.fields[name] ?? null));
            groups.set(key, [...(groups.get(key) ?? []), row]);
          }
          // Without groupBy there is one group, of every matching record (maybe none).
          if (!groupBy && groups.size === 0) groups.set('[]', []);
          const expected = [...groups.values()]
            .sort((a, b) =>
              compareForSort(
                a[0]!,
                b[0]!,
                (groupBy ?? []).map((field) => ({ field, direction: 'asc' as const })),
                table,
              ),
            )
            .map((group) => ({
              key: Object.fromEntries((groupBy ?? []).map((name) => [name, group[0]?.fields[name] ?? null])),
              values: aggregations.map((aggregation) => evaluate(group, aggregation)),
            }));
          const got = response.body.groups as { key: object; values: unknown[] }[];
          expect(response.body.truncated).toBe(false);
          expect(got.map((group) => group.key)).toEqual(expected.map((group) => group.key));
          got.forEach((group, index) => {
            group.values.forEach((value, position) => {
              const want = expected[index]!.values[position];
              if (typeof want === 'number' && !Number.isInteger(want)) expect(value).toBeCloseTo(want, 9);
              else expect(value).toEqual(want);
            });
          });
        },
      ),
      { numRuns: 120 },
    );
  });
});

describe('paging by cursor', () => {
  type Page = { records: TableRecord[]; total: number; hasMore: boolean; nextCursor: string | null };
  const list = async (body: object): Promise<Page> =>
    (await h.api.post(`${records}/list`).set('Authorization', auth).send(body).expect(200)).body;

  it('walks through the same records in the same order as offset paging', async () => {
    await fc.assert(
      fc.asyncProperty(
        filterArbitrary(),
        sortArbitrary,
        fc.integer({ min: 3, max: 40 }),
        async (filter, sort, limit) => {
          const byOffset: string[] = [];
          for (let offset = 0; ; offset += limit) {
            const page = await list({ filter, sort, limit, offset });
            byOffset.push(...page.records.map((row) => row.id));
            if (!page.hasMore) break;
          }
          const byCursor: string[] = [];
          let cursor: string | null = null;
          do {
            const page: Page = await list({ filter, sort, limit, ...(cursor === null ? {} : { cursor }) });
            expect(page.total).toBe(byOffset.length);
            expect(page.hasMore).toBe(page.nextCursor !== null);
            byCursor.push(...page.records.map((row) => row.id));
            cursor = page.nextCursor;
          } while (cursor !== null && byCursor.length <= rows.length);
          expect(byCursor).toEqual(byOffset);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('random bodies never cause a 500', () => {
  const anyJson = fc.jsonValue({ maxDepth: 4 });
  const plausibleList = () =>
    fc.record(
      {
        limit: fc.oneof(fc.integer(), anyJson),
        offset: fc.oneof(fc.integer(), anyJson),
        sort: anyJson,
        filter: fc.oneof(filterArbitrary(), anyJson),
        cursor: fc.oneof(fc.string(), fc.base64String(), anyJson),
        fields: fc.oneof(fc.array(fc.constantFrom(...fieldDefs.map((f) => f.name), 'Nope', '')), anyJson),
        search: fc.oneof(fc.string(), anyJson),
      },
      { requiredKeys: [] },
    );
  const plausibleRecord = fc.dictionary(
    fc.constantFrom(...fieldDefs.map((f) => f.name), 'id', 'Nope'),
    anyJson,
    { maxKeys: 4 },
  );
  const plausibleBulk = () =>
    fc.record(
      {
        records: fc.oneof(fc.array(plausibleRecord, { maxLength: 3 }), anyJson),
        matchOn: fc.oneof(fc.constant([table.fields[0]!.id]), anyJson),
      },
      { requiredKeys: [] },
    );

  it('on list', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(plausibleList(), anyJson), async (body) => {
        const response = await h.api
          .post(`${records}/list`)
          .set('Authorization', auth)
          .set('content-type', 'application/json')
          .send(JSON.stringify(body));
        expect([200, 400]).toContain(response.status);
      }),
      { numRuns: 200 },
    );
  });

  it('on bulk', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(plausibleBulk(), anyJson), async (body) => {
        const response = await h.api
          .post(`${records}/bulk`)
          .set('Authorization', auth)
          .set('content-type', 'application/json')
          .send(JSON.stringify(body));
        expect([200, 201, 400]).toContain(response.status);
      }),
      { numRuns: 200 },
    );
  });
});
