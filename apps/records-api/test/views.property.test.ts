import { type FieldType, groupOfField } from '@recordbase/contracts/fields';
import {
  type Filter,
  type FilterOperator,
  filterOperatorsByFieldTypeGroup,
  type Sort,
  type TableRecord,
} from '@recordbase/contracts/records';
import fc from 'fast-check';
import { baseClient, type FieldBody } from './base-client';
import { filterTree } from './filter-arbitraries';
import { createBase, type Harness, startHarness } from './harness';

/**
 * A list naming a view answers what the equivalent explicit body answers: the same records, in the
 * same order, with the same total and projection. Random filters, sorts, projections and searches
 * over a table with a field of every type, computed ones included, are split at random between a
 * saved view and the body (a part in both: filter and search ANDed, the body's sort and fields
 * winning), and the view's answer is held against the explicit body's. A part the explicit body
 * refuses is refused through the view too, and no view is saved with it.
 */

let h: Harness;
let root: string;
let baseId: string;
let things: { id: string; fields: FieldBody[] };

const { url, newTable, addField } = baseClient(
  () => h,
  () => baseId,
  () => root,
);

const file = (name: string) => ({
  url: `https://cdn.example.com/${name}.pdf`,
  fileName: `${name}.pdf`,
  size: 10,
  mimeType: 'application/pdf',
});

/** Per writable field: a few values, null among them, so that filters split and sorts tie. */
const valuePools: Record<string, unknown[]> = {
  Title: ['alpha', 'Beta', 'gamma ray', 'alpha', null, 'Δelta'],
  Notes: ['first line\nsecond', 'beta notes', null],
  Email: ['a@example.com', 'b@example.org', null],
  Site: ['https://example.com/a', 'https://alpha.example.org', null],
  Phone: ['+1 555 0100', '+44 20 7946 0000', null],
  Amount: [1.25, -7.5, 0, 100, null, 1.25],
  Price: [10.5, 99.99, null],
  Share: [0.25, 0.75, null],
  Stars: [1, 3, 5, null],
  Took: [90, 3600, null],
  Day: ['2026-01-31', '2026-02-28', '2025-12-31', null],
  At: ['2026-01-31T10:15:00.000Z', '2026-03-01T23:59:59.000Z', null],
  Stage: ['Open', 'Paid', 'Void', null],
  Tags: [['x'], ['y', 'x'], [], ['z']],
  Done: [true, false],
  Files: [[file('a')], [], [file('b'), file('a')]],
};

const RECORDS = 36;
const RUNS = Number(process.env.VIEWS_PROPERTY_RUNS ?? 60);

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Views property',
    tables: [
      {
        name: 'Targets',
        fields: [
          { name: 'Label', type: 'single_line_text' },
          { name: 'Score', type: 'number' },
        ],
      },
    ],
  });
  expect(base.status).toBe(201);
  baseId = base.body.id;
  const targets = base.body.tables[0] as { id: string };
  const targetIds: string[] = [];
  for (const [Label, Score] of [
    ['north', 3],
    ['south', 5],
    ['east', null],
    ['west', 1],
  ] as const) {
    const res = await h.api
      .post(url(`/tables/${targets.id}/records`))
      .set('Authorization', root)
      .send({ record: { Label, Score } });
    expect(res.status).toBe(201);
    targetIds.push(res.body.id);
  }
  things = await newTable('Things', [
    { name: 'Title', type: 'single_line_text' },
    { name: 'Notes', type: 'long_text' },
    { name: 'Email', type: 'email' },
    { name: 'Site', type: 'url' },
    { name: 'Phone', type: 'phone_number' },
    { name: 'Amount', type: 'number', template: { decimalPlaces: 2 } },
    { name: 'Price', type: 'currency' },
    { name: 'Share', type: 'percent' },
    { name: 'Stars', type: 'rating', template: { max: 5 } },
    { name: 'Took', type: 'duration' },
    { name: 'Day', type: 'date' },
    { name: 'At', type: 'datetime' },
    {
      name: 'Stage',
      type: 'single_select',
      template: { options: [{ name: 'Open' }, { name: 'Paid' }, { name: 'Void' }] },
    },
    {
      name: 'Tags',
      type: 'multiple_select',
      template: { options: [{ name: 'x' }, { name: 'y' }, { name: 'z' }] },
    },
    { name: 'Done', type: 'checkbox' },
    { name: 'Files', type: 'attachments' },
    { name: 'Targets', type: 'linked_record', template: { tableId: 'Targets' } },
    { name: 'Twice', type: 'formula', template: { expression: '{Amount} * 2' } },
    { name: 'Shout', type: 'formula', template: { expression: 'UPPER({Title})' } },
    { name: 'Seq', type: 'autonumber' },
    { name: 'Created', type: 'created_time' },
    { name: 'Touched', type: 'last_modified_time' },
    { name: 'Creator', type: 'created_by' },
    { name: 'Editor', type: 'last_modified_by' },
  ]);
  // Fields reading through a link are added once both tables exist.
  for (const field of [
    { name: 'Linked', type: 'count', template: { linkFieldId: 'Targets' } },
    { name: 'Labels', type: 'lookup', template: { linkFieldId: 'Targets', fieldId: 'Label' } },
    {
      name: 'Scores',
      type: 'rollup',
      template: { linkFieldId: 'Targets', fieldId: 'Score', function: 'sum' },
    },
  ]) {
    const res = await addField(things.id, field);
    expect([res.status, res.body.error?.message]).toEqual([201, undefined]);
    things.fields.push(res.body as FieldBody);
  }
  // Records from the pools by a fixed walk, so every run of the suite reads the same table.
  const records = Array.from({ length: RECORDS }, (_, i) => {
    const record: Record<string, unknown> = {};
    let step = 0;
    for (const [name, pool] of Object.entries(valuePools)) {
      record[name] = pool[(i * 7 + step * 3 + (i >> 2)) % pool.length];
      step += 1;
    }
    record.Targets = targetIds.filter((_, t) => (i + t) % 3 === 0).slice(0, i % 4);
    return record;
  });
  for (let start = 0; start < RECORDS; start += 12) {
    const res = await h.api
      .post(url(`/tables/${things.id}/records/bulk`))
      .set('Authorization', root)
      .send({ records: records.slice(start, start + 12) });
    expect([res.status, res.body.error?.message]).toEqual([201, undefined]);
  }
}, 60_000);

afterAll(async () => {
  await h?.close();
});

/** Values a field holds in the table, flattened, to draw operands from (`{id, name}` by its name). */
async function operandPools(): Promise<Map<string, unknown[]>> {
  const res = await h.api
    .post(url(`/tables/${things.id}/records/list`))
    .set('Authorization', root)
    .send({ limit: 100 });
  expect(res.status).toBe(200);
  const pools = new Map<string, unknown[]>();
  for (const field of things.fields) {
    const values = new Set<unknown>();
    for (const record of res.body.records as TableRecord[]) {
      const value = record.data[field.id];
      for (const item of Array.isArray(value) ? value : [value]) {
        if (item === null || item === undefined) continue;
        values.add(typeof item === 'object' && 'name' in item ? item.name : item);
      }
    }
    pools.set(
      field.id,
      [...values].filter((value) => typeof value !== 'object'),
    );
  }
  return pools;
}

/** A field referred to by id or by name, as a client may. */
const refOf = (field: FieldBody) => fc.constantFrom(field.id, field.name);

function conditionOf(field: FieldBody, pool: readonly unknown[]): fc.Arbitrary<Filter> {
  // A computed field's group is its result type's (the answered Field carries it beside the template).
  const group = groupOfField({
    type: field.type as FieldType,
    template: { ...field.template, resultType: field.resultType },
  } as never);
  const operators = filterOperatorsByFieldTypeGroup[group];
  const operand = (operator: FilterOperator): fc.Arbitrary<unknown> => {
    if (operator === 'is_empty' || operator === 'is_not_empty') return fc.constant(true);
    const one =
      pool.length > 0
        ? fc.constantFrom(...pool).chain((value) =>
            // Part of a text, for the operators that match inside one.
            typeof value === 'string' &&
            ['contains', 'does_not_contain', 'starts_with', 'ends_with'].includes(operator)
              ? fc.nat({ max: Math.max(0, value.length - 1) }).map((cut) => value.slice(0, cut + 1))
              : fc.constant(value),
          )
        : fc.constant('none');
    return operator === 'in' || operator === 'not_in' ? fc.array(one, { maxLength: 3 }) : one;
  };
  return fc
    .record({ field: refOf(field), operator: fc.constantFrom(...operators) })
    .chain(({ field: ref, operator }) =>
      operand(operator).map((value) => ({ field: ref, [operator]: value }) as Filter),
    );
}

interface Parts {
  filter?: Filter;
  sort?: Sort[];
  fields?: string[];
  search?: string;
}

function partsArbitrary(pools: Map<string, unknown[]>): fc.Arbitrary<Parts> {
  const condition = fc.oneof(...things.fields.map((field) => conditionOf(field, pools.get(field.id) ?? [])));
  const sortField = fc.oneof(...things.fields.map(refOf), fc.constantFrom('createdAt', 'updatedAt', 'id'));
  return fc.record(
    {
      filter: filterTree(condition),
      sort: fc.array(
        fc.record({ field: sortField, direction: fc.constantFrom<'asc' | 'desc'>('asc', 'desc') }),
        { minLength: 1, maxLength: 3 },
      ),
      fields: fc.uniqueArray(fc.oneof(...things.fields.map(refOf)), { minLength: 1, maxLength: 6 }),
      search: fc.constantFrom('a', 'alpha', 'ex', 'X', 'no such text', 'Open'),
    },
    { requiredKeys: [] },
  );
}

/** Where each part goes: nowhere, the view, the body, or both. */
const placement = fc.constantFrom('view', 'body', 'both');

const ids = (records: TableRecord[]) => records.map((record) => record.id);

async function list(body: object) {
  return h.api
    .post(url(`/tables/${things.id}/records/list`))
    .set('Authorization', root)
    .send({ limit: 2000, ...body });
}

let viewNumber = 0;

test('a view answers what the equivalent explicit body answers, for every field type', async () => {
  const pools = await operandPools();
  let compared = 0;
  let refused = 0;
  await fc.assert(
    fc.asyncProperty(
      partsArbitrary(pools),
      partsArbitrary(pools),
      fc.record({ filter: placement, sort: placement, fields: placement, search: placement }),
      async (first, second, place) => {
        const view: Parts = {};
        const body: Parts = {};
        for (const part of ['filter', 'sort', 'fields', 'search'] as const) {
          const [own, other] = [first[part], second[part]];
          if (own === undefined) continue;
          if (place[part] !== 'body') (view as Record<string, unknown>)[part] = own;
          if (place[part] !== 'view')
            (body as Record<string, unknown>)[part] = place[part] === 'both' ? (other ?? own) : own;
        }
        // The explicit equivalent: filters ANDed, the body's sort and fields over the view's.
        const filters = [view.filter, body.filter].filter((f): f is Filter => f !== undefined);
        const searches = [...new Set([view.search, body.search].filter((s): s is string => s !== undefined))];
        const explicitBody = {
          ...(filters.length > 0 ? { filter: filters.length === 1 ? filters[0] : { and: filters } } : {}),
          ...((body.sort ?? view.sort) ? { sort: body.sort ?? view.sort } : {}),
          ...((body.fields ?? view.fields) ? { fields: body.fields ?? view.fields } : {}),
        };
        const explicitAnswers = await Promise.all(
          (searches.length > 0 ? searches : [undefined]).map((search) =>
            list({ ...explicitBody, ...(search ? { search } : {}) }),
          ),
        );
        const name = `View ${++viewNumber}`;
        const saved = await h.api
          .post(url(`/tables/${things.id}/views`))
          .set('Authorization', root)
          .send({ name, ...view });
        const explicitRefused = explicitAnswers.find((answer) => answer.status !== 200);
        if (saved.status !== 201) {
          // The view's part was refused: as the explicit body refuses it, and nothing was saved.
          expect([saved.status, saved.body.error?.code]).toEqual([400, 'BAD_REQUEST']);
          expect(explicitRefused?.status).toBe(400);
          refused += 1;
          return;
        }
        try {
          const through = await list({ view: name, ...body });
          if (explicitRefused) {
            expect([through.status, explicitRefused.status]).toEqual([400, 400]);
            refused += 1;
            return;
          }
          expect([through.status, through.body.error?.message]).toEqual([200, undefined]);
          // Two searches are two explicit listings: the records both hold, in the (shared) order.
          const [firstAnswer, ...others] = explicitAnswers;
          const inAll = new Set(ids(firstAnswer!.body.records));
          for (const answer of others) {
            const theirs = new Set(ids(answer.body.records));
            for (const id of inAll) if (!theirs.has(id)) inAll.delete(id);
          }
          const expected = (firstAnswer!.body.records as TableRecord[]).filter((record) =>
            inAll.has(record.id),
          );
          expect(through.body.records).toEqual(expected);
          expect([through.body.total, through.body.hasMore]).toEqual([expected.length, false]);
          compared += 1;
        } finally {
          await h.api
            .delete(url(`/tables/${things.id}/views/${encodeURIComponent(name)}`))
            .set('Authorization', root);
        }
      },
    ),
    { numRuns: RUNS },
  );
  // Most draws are valid requests: the property compared answers, not only refusals.
  expect(compared).toBeGreaterThan(RUNS / 2);
  expect(compared + refused).toBe(RUNS);
}, 300_000);
