import { createBase, type Harness, schemaNameOf, startHarness } from './harness';

let h: Harness;
let auth: string;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
});
afterAll(() => h.close());

const hostile = `x"; DROP TABLE databases; --`;
const hostileQuote = `'); DELETE FROM api_keys; --`;

async function metadataTablesIntact() {
  const result = await h.db.pool.query(
    `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' AND tablename IN ('databases', 'tables', 'fields', 'api_keys')`,
  );
  expect(result.rows[0].n).toBe(4);
}

describe('SQL injection attempts are harmless', () => {
  it('through table names, field names, values, filters and sorts', async () => {
    const base = await createBase(h, {
      name: hostile,
      tables: [
        {
          name: hostile,
          fields: [
            { name: hostile, type: 'single_line_text' },
            { name: hostileQuote, type: 'number' },
          ],
        },
      ],
    });
    const baseId = base.body.id;
    const tableName = encodeURIComponent(hostile);
    const records = `/api/v1/bases/${baseId}/tables/${tableName}/records`;
    const created = await h.api
      .post(`${records}/bulk`)
      .set('Authorization', auth)
      .send({
        records: [
          { [hostile]: hostileQuote, [hostileQuote]: 1 },
          { [hostile]: `%_\\'"`, [hostileQuote]: 2 },
        ],
      })
      .expect(201);
    expect(created.body.records[0].fields).toEqual({ [hostile]: hostileQuote, [hostileQuote]: 1 });

    const filters = [
      { field: hostile, equals: hostileQuote },
      { field: hostile, contains: `'; DROP TABLE databases; --` },
      { field: hostile, contains: '%' },
      { field: hostile, in: [hostileQuote, `") OR 1=1 --`] },
      { field: hostileQuote, greater_than: 0 },
    ];
    const expected = [[1], [], [2], [1], [1, 2]];
    for (const [index, filter] of filters.entries()) {
      const response = await h.api
        .post(`${records}/list`)
        .set('Authorization', auth)
        .send({ filter, sort: [{ field: hostileQuote, direction: 'asc' }] })
        .expect(200);
      expect(
        response.body.records.map((r: { fields: Record<string, number> }) => r.fields[hostileQuote]),
      ).toEqual(expected[index]);
    }
    const badSort = await h.api
      .post(`${records}/list`)
      .set('Authorization', auth)
      .send({ sort: [{ field: 'createdAt; DROP TABLE databases' }] })
      .expect(400);
    expect(badSort.body.error.code).toBe('BAD_REQUEST');
    const badField = await h.api
      .post(`${records}/list`)
      .set('Authorization', auth)
      .send({ filter: { field: '" OR 1=1 --', equals: 'x' } })
      .expect(400);
    expect(badField.body.error.code).toBe('BAD_REQUEST');
    const stored = await h.db.pool.query(
      `SELECT count(*)::int AS n FROM "${schemaNameOf(baseId)}"."${base.body.tables[0].id}"`,
    );
    expect(stored.rows[0].n).toBe(2);
    await metadataTablesIntact();
    await h.api.get('/api/v1/api-keys').set('Authorization', auth).expect(200);
  });

  it('through path segments', async () => {
    await h.api
      .post(`/api/v1/bases/${encodeURIComponent("' OR 1=1 --")}/tables/x/records/list`)
      .set('Authorization', auth)
      .send({})
      .expect(404);
    await metadataTablesIntact();
  });
});

describe('concurrent upserts', () => {
  it('on the same matchOn key leave exactly one record', async () => {
    const base = await createBase(h, {
      name: 'C',
      tables: [
        {
          name: 'People',
          fields: [
            { name: 'Email', type: 'email' },
            { name: 'Visits', type: 'number' },
          ],
        },
      ],
    });
    const emailId = base.body.tables[0].fields[0].id;
    const bulk = `/api/v1/bases/${base.body.id}/tables/People/records/bulk`;
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        h.api
          .post(bulk)
          .set('Authorization', auth)
          .send({
            matchOn: [emailId],
            records: [
              { Email: 'same@example.com', Visits: i },
              { Email: `other${i % 2}@example.com`, Visits: i },
            ],
          }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const listed = await h.api
      .post(`/api/v1/bases/${base.body.id}/tables/People/records/list`)
      .set('Authorization', auth)
      .send({})
      .expect(200);
    const emails = listed.body.records.map((r: { fields: { Email: string } }) => r.fields.Email).sort();
    expect(emails).toEqual(['other0@example.com', 'other1@example.com', 'same@example.com']);
  });
});
