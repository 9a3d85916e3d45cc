import { createBase, type Harness, startHarness } from './harness';

/**
 * POST /bases/{id}/sql: queries against tables and fields by their names, values in JSON as the
 * API shapes them, bounded results, and PostgreSQL's refusals as 400s.
 */

const MAX_RESULT_BYTES = 20_000;

let h: Harness;
let auth: string;
let baseId: string;
let acme: string;
let globex: string;

const sql = (body: object, database = baseId) =>
  h.api.post(`/api/v1/bases/${database}/sql`).set('Authorization', auth).send(body);
const url = (path: string) => `/api/v1/bases/${baseId}${path}`;

beforeAll(async () => {
  h = await startHarness({ sqlMaxResultBytes: MAX_RESULT_BYTES });
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Sales',
    tables: [
      { name: 'Companies', fields: [{ name: 'Name', type: 'single_line_text' }] },
      {
        name: 'Deals',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Amount', type: 'number' },
          {
            name: 'Stage',
            type: 'single_select',
            template: { options: [{ name: 'Won' }, { name: 'Lost' }] },
          },
          { name: 'Tags', type: 'multiple_select', template: { options: [{ name: 'a' }, { name: 'b' }] } },
          { name: 'Closed', type: 'date' },
          { name: 'Done', type: 'checkbox' },
          { name: 'Company', type: 'linked_record', template: { tableId: 'Companies' } },
        ],
      },
    ],
  });
  baseId = base.body.id;
  const companies = await h.api
    .post(url('/tables/Companies/records/bulk'))
    .set('Authorization', auth)
    .send({ records: [{ Name: 'Acme' }, { Name: 'Globex' }] })
    .expect(201);
  [acme, globex] = companies.body.records.map((record: { id: string }) => record.id);
  await h.api
    .post(url('/tables/Deals/records/bulk'))
    .set('Authorization', auth)
    .send({
      records: [
        {
          Name: 'One',
          Amount: 100,
          Stage: 'Won',
          Tags: ['b', 'a'],
          Closed: '2024-02-29',
          Done: true,
          Company: [acme],
        },
        { Name: 'Two', Amount: 250.5, Stage: 'Won', Company: [globex, acme] },
        { Name: 'Three', Amount: 10, Stage: 'Lost', Company: [globex] },
      ],
    })
    .expect(201);
});
afterAll(() => h.close());

describe('queries', () => {
  it('join two tables through a linked record', async () => {
    const res = await sql({
      query: `SELECT d."Name" AS deal, c."Name" AS company
                FROM "Deals" d JOIN "Companies" c ON c.id = ANY (d."Company")
               ORDER BY 1, 2`,
    }).expect(200);
    expect(res.body).toEqual({
      columns: [
        { name: 'deal', type: 'text' },
        { name: 'company', type: 'text' },
      ],
      rows: [
        ['One', 'Acme'],
        ['Three', 'Globex'],
        ['Two', 'Acme'],
        ['Two', 'Globex'],
      ],
      rowCount: 4,
      truncated: false,
    });
  });

  it('aggregate', async () => {
    const res = await sql({
      query: 'SELECT "Stage", count(*) AS deals, sum("Amount") AS total FROM "Deals" GROUP BY 1 ORDER BY 1',
    }).expect(200);
    expect(res.body.columns).toEqual([
      { name: 'Stage', type: 'text' },
      { name: 'deals', type: 'bigint' },
      { name: 'total', type: 'double precision' },
    ]);
    expect(res.body.rows).toEqual([
      ['Lost', 1, 10],
      ['Won', 2, 350.5],
    ]);
  });

  it('bind params in order, of every JSON kind', async () => {
    const res = await sql({
      query: `SELECT "Name" FROM "Deals" WHERE "Amount" > $1 AND "Stage" = $2 AND "Done" IS NOT DISTINCT FROM $3
                 AND ($4::text IS NULL) ORDER BY 1`,
      params: [50, 'Won', false, null],
    }).expect(200);
    expect(res.body.rows).toEqual([['Two']]);
    // A parameter is a value, never SQL.
    const injected = await sql({
      query: 'SELECT count(*) FROM "Deals" WHERE "Name" = $1',
      params: ["x' OR '1'='1"],
    });
    expect(injected.body.rows).toEqual([[0]]);
  });

  it('give linked records as arrays of ids in their order, and each type in its JSON shape', async () => {
    const res = await sql({
      query: `SELECT "Company", "Tags", "Closed", "Done", "createdAt", id FROM "Deals" WHERE "Name" = 'Two'`,
    }).expect(200);
    expect(res.body.columns.map((column: { type: string }) => column.type)).toEqual([
      'uuid[]',
      'text[]',
      'date',
      'boolean',
      'timestamp with time zone',
      'uuid',
    ]);
    const [row] = res.body.rows;
    expect(row[0]).toEqual([globex, acme]);
    expect(row[1]).toEqual([]);
    expect(row[2]).toBeNull();
    expect(row[3]).toBe(false);
    expect(row[4]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3,6}Z$/);
    const one = await sql({ query: `SELECT "Tags", "Closed" FROM "Deals" WHERE "Name" = 'One'` }).expect(200);
    expect(one.body.rows).toEqual([[['b', 'a'], '2024-02-29']]);
  });

  it('keep numbers exact: past 2^53 and past 15 digits as strings', async () => {
    const res = await sql({
      query: `SELECT 9007199254740991::int8 AS safe, 9007199254740993::int8 AS unsafe, 1.50::numeric AS short,
                     12345678901234567890.5::numeric AS long, 'NaN'::float8 AS nan, 2::int2 AS small,
                     '{"a": [1, {"b": null}]}'::jsonb AS doc, ARRAY[[1, 2], [3, NULL]] AS grid,
                     '2024-01-02 03:04:05'::timestamp AS plain, 'x'::bytea AS bytes, interval '1 day' AS span`,
    }).expect(200);
    expect(res.body.rows[0]).toEqual([
      9007199254740991,
      '9007199254740993',
      1.5,
      '12345678901234567890.5',
      'NaN',
      2,
      { a: [1, { b: null }] },
      [
        [1, 2],
        [3, null],
      ],
      '2024-01-02T03:04:05.000Z',
      '\\x78',
      'P1D',
    ]);
    expect(res.body.columns.map((column: { type: string }) => column.type)).toEqual([
      'bigint',
      'bigint',
      'numeric',
      'numeric',
      'double precision',
      'smallint',
      'jsonb',
      'integer[]',
      'timestamp without time zone',
      'bytea',
      'interval',
    ]);
  });

  it('answer an empty query and a statement without rows with no columns', async () => {
    expect((await sql({ query: '-- nothing' }).expect(200)).body).toEqual({
      columns: [],
      rows: [],
      rowCount: 0,
      truncated: false,
    });
  });
});

describe('bounded results', () => {
  it('stop at the limit and say more rows existed', async () => {
    const three = 'SELECT "Name" FROM "Deals" ORDER BY "Amount"';
    expect((await sql({ query: three, limit: 2 }).expect(200)).body).toMatchObject({
      rows: [['Three'], ['One']],
      rowCount: 2,
      truncated: true,
    });
    expect((await sql({ query: three, limit: 3 }).expect(200)).body).toMatchObject({
      rowCount: 3,
      truncated: false,
    });
    expect((await sql({ query: three }).expect(200)).body).toMatchObject({ rowCount: 3, truncated: false });
  });

  it('stop at the byte cap', async () => {
    const res = await sql({
      query: `SELECT repeat('x', 1000) AS filler FROM generate_series(1, 1000)`,
      limit: 10_000,
    });
    expect(res.status).toBe(200);
    expect(res.body.truncated).toBe(true);
    expect(res.body.rowCount).toBeGreaterThan(0);
    expect(res.body.rowCount * 1000).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(res.body.rowCount).toBe(res.body.rows.length);
  });
});

describe('errors', () => {
  it("are 400s with PostgreSQL's message and position", async () => {
    const syntax = await sql({ query: 'SELECT * FROM "Deals" WHER 1' }).expect(400);
    expect(syntax.body.error.message).toMatch(/syntax error at or near "1".*at character 28/);
    const column = await sql({ query: 'SELECT "Nope" FROM "Deals"' }).expect(400);
    expect(column.body.error.message).toMatch(/column "Nope" does not exist.*at character 8/);
    const division = await sql({ query: 'SELECT 1 / 0' }).expect(400);
    expect(division.body.error.message).toMatch(/division by zero/);
    const param = await sql({ query: 'SELECT $1::int', params: ['seven'] }).expect(400);
    expect(param.body.error.message).toMatch(/invalid input syntax for type integer/);
  });

  it('name what is wrong with the request itself', async () => {
    const cases: [object, RegExp][] = [
      [{}, /query/],
      [{ query: '   ' }, /query.*blank/],
      [{ query: 'SELECT 1', limit: 0 }, /limit/],
      [{ query: 'SELECT 1', limit: 10_001 }, /limit/],
      [{ query: 'SELECT 1', params: 'x' }, /params/],
      [{ query: 'SELECT 1', params: [{}] }, /params\[0\]/],
      [{ query: 'SELECT 1', other: true }, /other/],
    ];
    for (const [body, message] of cases) {
      const res = await sql(body).expect(400);
      expect(res.body.error.message).toMatch(message);
    }
  });

  it('404 for a database out of reach, 403 without sql:read', async () => {
    await sql({ query: 'SELECT 1' }, '00000000-0000-4000-8000-000000000000').expect(404);
    const key = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', auth)
      .send({ name: 'records only', scopes: ['records:read'] })
      .expect(201);
    await h.api
      .post(`/api/v1/bases/${baseId}/sql`)
      .set('Authorization', h.bearer(key.body.key))
      .send({ query: 'SELECT 1' })
      .expect(403);
  });
});

describe('the views follow the schema', () => {
  it('after renames and deletions, in queries and in GET /sql/schema', async () => {
    const scratch = await createBase(h, {
      name: 'Scratch',
      tables: [
        {
          name: 'Old',
          fields: [
            { name: 'Keep', type: 'number' },
            { name: 'Drop', type: 'number' },
          ],
        },
        { name: 'Gone', fields: [{ name: 'A', type: 'number' }] },
      ],
    });
    const id = scratch.body.id;
    const at = (path: string) => `/api/v1/bases/${id}${path}`;
    await sql({ query: 'SELECT "Keep", "Drop" FROM "Old"' }, id).expect(200);
    await h.api.patch(at('/tables/Old')).set('Authorization', auth).send({ name: 'New' }).expect(200);
    await h.api
      .patch(at('/tables/New/fields/Keep'))
      .set('Authorization', auth)
      .send({ name: 'Kept' })
      .expect(200);
    await h.api.delete(at('/tables/New/fields/Drop')).set('Authorization', auth).expect(200);
    await h.api.delete(at('/tables/Gone')).set('Authorization', auth).expect(200);

    await sql({ query: 'SELECT "Kept" FROM "New"' }, id).expect(200);
    expect((await sql({ query: 'SELECT * FROM "Old"' }, id).expect(400)).body.error.message).toMatch(
      /relation "Old" does not exist/,
    );
    expect((await sql({ query: 'SELECT "Drop" FROM "New"' }, id).expect(400)).body.error.message).toMatch(
      /column "Drop" does not exist/,
    );
    await sql({ query: 'SELECT * FROM "Gone"' }, id).expect(400);

    const schema = await h.api.get(at('/sql/schema')).set('Authorization', auth).expect(200);
    expect(schema.body.tables).toHaveLength(1);
    expect(schema.body.tables[0]).toMatchObject({ name: 'New' });
    expect(schema.body.tables[0].columns.map((column: { name: string }) => column.name)).toEqual([
      'id',
      'createdAt',
      'updatedAt',
      'Kept',
    ]);
  });

  it('a database queried by many at once for the first time makes one role', async () => {
    const fresh = await createBase(h, {
      name: 'Fresh',
      tables: [{ name: 'T', fields: [{ name: 'N', type: 'number' }] }],
    });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => sql({ query: 'SELECT count(*) FROM "T"' }, fresh.body.id)),
    );
    for (const answer of answers) expect(answer.status).toBe(200);
  });
});
