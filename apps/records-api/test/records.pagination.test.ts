import { createBase, type Harness, startHarness } from './harness';

let h: Harness;
let auth: string;
let list: string;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'P',
    tables: [
      {
        name: 'Rows',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Group', type: 'number' },
          { name: 'Flag', type: 'checkbox' },
        ],
      },
    ],
  });
  const bulk = `/api/v1/bases/${base.body.id}/tables/Rows/records/bulk`;
  list = `/api/v1/bases/${base.body.id}/tables/Rows/records/list`;
  // Three bulk requests: every record of a request shares its createdAt, so the default order
  // is decided by the tie-breaker alone within each request.
  for (let batch = 0; batch < 3; batch++) {
    const records = Array.from({ length: 100 }, (_, i) => ({
      Name: `r${batch * 100 + i}`,
      Group: i % 3 === 0 ? null : i % 2,
      Flag: i % 5 === 0,
    }));
    await h.api.post(bulk).set('Authorization', auth).send({ records }).expect(201);
  }
});
afterAll(() => h.close());

async function readAllPages(body: object, limit: number) {
  const seen: string[] = [];
  let offset = 0;
  for (;;) {
    const response = await h.api
      .post(list)
      .set('Authorization', auth)
      .send({ ...body, limit, offset })
      .expect(200);
    expect(response.body.total).toBe(300);
    seen.push(...response.body.records.map((r: { id: string }) => r.id));
    if (!response.body.hasMore) break;
    offset += limit;
  }
  return seen;
}

describe('pagination under heavy ties', () => {
  it.each([
    ['default order', {}],
    ['a sort with three values', { sort: [{ field: 'Group' }] }],
    ['a descending sort with empties', { sort: [{ field: 'Group', direction: 'desc' }] }],
    ['two tied sorts', { sort: [{ field: 'Flag' }, { fieldId: 'Group', direction: 'desc' }] }],
    ['createdAt, all tied within a batch', { sort: [{ field: 'createdAt', direction: 'desc' }] }],
  ])('visits every record exactly once with %s', async (_case, body) => {
    for (const limit of [7, 64]) {
      const ids = await readAllPages(body, limit);
      expect(ids).toHaveLength(300);
      expect(new Set(ids).size).toBe(300);
    }
  });

  it('keeps insertion order as the default', async () => {
    const response = await h.api.post(list).set('Authorization', auth).send({ limit: 300 }).expect(200);
    expect(response.body.records.map((r: { fields: { Name: string } }) => r.fields.Name)).toEqual(
      Array.from({ length: 300 }, (_, i) => `r${i}`),
    );
  });

  it('puts empty values first ascending and last descending', async () => {
    const asc = await h.api
      .post(list)
      .set('Authorization', auth)
      .send({ sort: [{ field: 'Group' }], limit: 300 })
      .expect(200);
    const groups = asc.body.records.map((r: { fields: { Group: number | null } }) => r.fields.Group);
    expect(groups.indexOf(0)).toBeGreaterThan(groups.lastIndexOf(null));
    expect(groups.indexOf(1)).toBeGreaterThan(groups.lastIndexOf(0));
    const desc = await h.api
      .post(list)
      .set('Authorization', auth)
      .send({ sort: [{ field: 'Group', direction: 'desc' }], limit: 300 })
      .expect(200);
    expect(desc.body.records.at(-1).fields.Group).toBeNull();
    expect(desc.body.records[0].fields.Group).toBe(1);
  });
});
