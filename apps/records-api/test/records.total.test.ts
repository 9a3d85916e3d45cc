import { createBase, type Harness, startHarness } from './harness';

let h: Harness;
let auth: string;
let records: string;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'T',
    tables: [{ name: 'Rows', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  records = `/api/v1/bases/${base.body.id}/tables/Rows/records`;
});
afterAll(() => h.close());

async function unfilteredTotal(): Promise<number> {
  // A one-record page of a larger table always needs the count (it cannot be read off the page).
  const response = await h.api
    .post(`${records}/list`)
    .set('Authorization', auth)
    .send({ limit: 1 })
    .expect(200);
  return response.body.total;
}

describe('total', () => {
  it('stays exact through creates and deletes, across compactions of the maintained count', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 80; i++) {
      const created = await h.api
        .post(records)
        .set('Authorization', auth)
        .send({ record: { Name: `r${i}` } })
        .expect(201);
      ids.push(created.body.id);
      if (i === 40) expect(await unfilteredTotal()).toBe(41);
    }
    expect(await unfilteredTotal()).toBe(80);
    await h.api
      .post(`${records}/bulk-delete`)
      .set('Authorization', auth)
      .send({ ids: ids.slice(0, 30) })
      .expect(200);
    await h.api.delete(`${records}/${ids[30]}`).set('Authorization', auth).expect(200);
    expect(await unfilteredTotal()).toBe(49);
    const parts = await h.db.pool.query('SELECT count(*)::int AS n FROM table_row_counts');
    expect(parts.rows[0].n).toBeLessThan(20);
    const filtered = await h.api
      .post(`${records}/list`)
      .set('Authorization', auth)
      .send({ limit: 1, filter: { field: 'Name', starts_with: 'r7' } })
      .expect(200);
    expect(filtered.body.total).toBe(10);
  });

  it('counts an offset past the end', async () => {
    const response = await h.api
      .post(`${records}/list`)
      .set('Authorization', auth)
      .send({ offset: 1000 })
      .expect(200);
    expect(response.body).toEqual({ records: [], total: 49, hasMore: false, nextCursor: null });
  });
});
