import { indexBuilderName } from '@recordbase/domain/records/background-indexes';
import { matchIndexBuildsSettled } from '@recordbase/domain/records/match-indexes';
import { MAX_READ_INDEXES_PER_TABLE } from '@recordbase/domain/records/read-indexes';
import { createBase, type Harness, schemaNameOf, startHarness } from './harness';

/**
 * Listings build indexes on what they filter and sort once a table holds READ_INDEX_MIN_ROWS
 * records (read-indexes.ts). They must serve the queries they were built for, stay within their
 * bound, and never refuse a write or a conversion the API accepts.
 */

const MIN_ROWS = 40;
let h: Harness;
let auth: string;
let baseId: string;
let schema: string;

beforeAll(async () => {
  h = await startHarness({ readIndexMinRows: MIN_ROWS });
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, { name: 'Indexed' });
  baseId = base.body.id;
  schema = schemaNameOf(baseId);
});
afterAll(() => h.close());

const fields = [
  { name: 'Name', type: 'single_line_text' },
  { name: 'Notes', type: 'long_text' },
  { name: 'Amount', type: 'number' },
  { name: 'Due', type: 'date' },
  { name: 'At', type: 'datetime' },
  { name: 'Done', type: 'checkbox' },
  { name: 'Stage', type: 'single_select', template: { options: [{ name: 'A' }, { name: 'B' }] } },
  { name: 'Stars', type: 'rating' },
];

async function tableWith(name: string, rows: number): Promise<{ id: string; url: string }> {
  const created = await h.api
    .post(`/api/v1/bases/${baseId}/tables`)
    .set('Authorization', auth)
    .send({ name, fields })
    .expect(201);
  const url = `/api/v1/bases/${baseId}/tables/${name}/records`;
  const records = Array.from({ length: rows }, (_, i) => ({
    Name: i % 7 === 0 ? `xabcx ${i}` : `row ${i}`,
    Amount: i,
    Due: `2024-01-${String((i % 28) + 1).padStart(2, '0')}`,
    Stage: i % 2 === 0 ? 'A' : 'B',
  }));
  for (let i = 0; i < records.length; i += 100) {
    await h.api
      .post(`${url}/bulk`)
      .set('Authorization', auth)
      .send({ records: records.slice(i, i + 100) })
      .expect(201);
  }
  return { id: created.body.id, url };
}

async function list(url: string, body: object) {
  const response = await h.api.post(`${url}/list`).set('Authorization', auth).send(body).expect(200);
  await matchIndexBuildsSettled();
  return response.body;
}

async function readIndexes(tableId: string): Promise<string[]> {
  const result = await h.db.pool.query<{ indexdef: string }>(
    `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE $2 ORDER BY indexname`,
    [schema, `${tableId}\\_rx\\_%`],
  );
  return result.rows.map((row) => row.indexdef);
}

describe('indexes on filtered and sorted fields', () => {
  it('are built for contains (trigram) and for a sorted, filtered number (btree in that order)', async () => {
    const table = await tableWith('Big', 120);
    const contains = await list(table.url, { filter: { field: 'Name', contains: 'ABC' }, limit: 5 });
    expect(contains.total).toBe(18);
    const ranged = await list(table.url, {
      filter: {
        and: [
          { field: 'Amount', greater_than: 50 },
          { field: 'Stage', in: ['A'] },
        ],
      },
      sort: [{ field: 'Amount', direction: 'desc' }],
      limit: 3,
    });
    expect(ranged.records.map((r: { fields: { Amount: number } }) => r.fields.Amount)).toEqual([
      118, 116, 114,
    ]);
    const indexes = await readIndexes(table.id);
    expect(indexes).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/USING gin \("[^"]+" gin_trgm_ops\)/),
        expect.stringMatching(/USING btree \("[^"]+" DESC NULLS LAST, seq\)/),
        expect.stringMatching(/USING btree \("[^"]+"\)$/),
      ]),
    );
    // The sort's index serves the filter on the same field: no second btree on Amount.
    expect(indexes).toHaveLength(3);
    // The planner takes them where they pay: on this small table, forced to choose an index.
    const client = await h.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_seqscan = off');
      const nameId = (await fieldIds(table.id)).Name;
      const plan = await client.query(
        `EXPLAIN SELECT count(*) FROM "${schema}"."${table.id}" r WHERE r."${nameId}" ILIKE $1::text ESCAPE '\\'`,
        ['%abc%'],
      );
      expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toContain('Bitmap Index Scan');
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it('are not built for tables below the threshold', async () => {
    const table = await tableWith('Small', MIN_ROWS - 1);
    await list(table.url, {
      filter: { field: 'Name', contains: 'abc' },
      sort: [{ field: 'Due', direction: 'asc' }],
    });
    expect(await readIndexes(table.id)).toEqual([]);
  });

  it('stay within their bound per table', async () => {
    const table = await tableWith('Bounded', 60);
    for (const field of ['Amount', 'Due', 'At', 'Done', 'Stage', 'Stars', 'createdAt', 'updatedAt']) {
      for (const direction of ['asc', 'desc']) await list(table.url, { sort: [{ field, direction }] });
    }
    expect(await readIndexes(table.id)).toHaveLength(MAX_READ_INDEXES_PER_TABLE);
  });

  it('never refuse a long value, and go away when their field changes type', async () => {
    const table = await tableWith('Long', 50);
    await list(table.url, { filter: { field: 'Notes', contains: 'z' } });
    await list(table.url, { filter: { field: 'Amount', equals: 3 } });
    expect(await readIndexes(table.id)).toHaveLength(2);
    const long = 'λ'.repeat(100_000);
    await h.api
      .post(table.url)
      .set('Authorization', auth)
      .send({ record: { Notes: long, Amount: 1 } })
      .expect(201);
    const found = await list(table.url, { filter: { field: 'Notes', contains: 'λλλ' } });
    expect(found.total).toBe(1);
    // Text to a number and a number to text: the old indexes could not hold the new type.
    await h.api
      .patch(`/api/v1/bases/${baseId}/tables/Long/fields/Amount`)
      .set('Authorization', auth)
      .send({ type: 'single_line_text' })
      .expect(200);
    expect(await readIndexes(table.id)).toHaveLength(1);
    await h.api
      .post(table.url)
      .set('Authorization', auth)
      .send({ record: { Amount: 'x'.repeat(90_000) } })
      .expect(201);
  });
});

describe('a schema change', () => {
  it('cancels the background index builds of its database rather than wait for them', async () => {
    await tableWith('Renamed', 5);
    const builder = await h.db.pool.connect();
    try {
      // A build stands in: a session named as a builder of this schema, busy for 60 s.
      await builder.query(`SET application_name = '${indexBuilderName(schema)}'`);
      const outcome = builder.query('SELECT pg_sleep(60)').then(
        () => 'finished',
        (error: { code?: string }) => error.code,
      );
      await waitUntil(async () => {
        const running = await h.db.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'`,
          [indexBuilderName(schema)],
        );
        return running.rowCount === 1;
      });
      await h.api
        .patch(`/api/v1/bases/${baseId}/tables/Renamed/fields/Amount`)
        .set('Authorization', auth)
        .send({ name: 'Total' })
        .expect(200);
      expect(await outcome).toBe('57014');
    } finally {
      builder.release(true);
    }
  });
});

async function waitUntil(probe: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 100 && !(await probe()); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function fieldIds(tableId: string): Promise<Record<string, string>> {
  const result = await h.db.pool.query<{ id: string; name: string }>(
    'SELECT id, name FROM fields WHERE table_id = $1',
    [tableId],
  );
  return Object.fromEntries(result.rows.map((row) => [row.name, row.id]));
}
