import { SqlParams } from '@recordbase/db/physical';
import { matchIndexBuildsSettled } from '@recordbase/domain/records/match-indexes';
import { compileFilter } from '@recordbase/domain/records/query-compiler';
import { searchFilter } from '@recordbase/domain/records/search';
import { loadTableMeta } from '@recordbase/domain/records/table-loader';
import { createBase, type Harness, schemaNameOf, startHarness } from './harness';

/**
 * `search` on records/list: any text, email, url, phone or select field holding the
 * text, case aside, ANDed with the filter, with an exact total, bound to its cursor, and served
 * by the trigram indexes listings build.
 */

const MIN_ROWS = 40;
let h: Harness;
let auth: string;
let baseId: string;
let tableId: string;
const url = (path = '') => `/api/v1/bases/${baseId}/tables/Contacts/records${path}`;
const list = async (body: object, status = 200) =>
  (await h.api.post(url('/list')).set('Authorization', auth).send(body).expect(status)).body;

beforeAll(async () => {
  h = await startHarness({ readIndexMinRows: MIN_ROWS });
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Search',
    tables: [
      {
        name: 'Contacts',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Notes', type: 'long_text' },
          { name: 'Email', type: 'email' },
          { name: 'Site', type: 'url' },
          { name: 'Phone', type: 'phone_number' },
          {
            name: 'Stage',
            type: 'single_select',
            template: { options: [{ name: 'Lead' }, { name: 'Customer' }] },
          },
          {
            name: 'Tags',
            type: 'multiple_select',
            template: { options: [{ name: 'vip' }, { name: 'press' }] },
          },
          { name: 'Score', type: 'number' },
        ],
      },
    ],
  });
  baseId = base.body.id;
  tableId = base.body.tables[0].id;
  const special = [
    { Name: 'Ada Lovelace', Score: 10 },
    { Name: 'Grace', Notes: 'met at the ACME booth', Score: 20 },
    { Name: 'Linus', Email: 'linus@acme.example', Score: 30 },
    { Name: 'Ken', Site: 'https://acme.example/ken', Score: 40 },
    { Name: 'Dennis', Phone: '+1 555 0100', Stage: 'Customer', Score: 50 },
    { Name: 'Barbara', Tags: ['vip', 'press'], Score: 60 },
    { Name: '100% sure', Score: 70 },
  ];
  const filler = Array.from({ length: 60 }, (_, index) => ({
    Name: `filler ${index}`,
    Stage: 'Lead',
    Score: index,
  }));
  for (const records of [special, filler]) {
    await h.api.post(url('/bulk')).set('Authorization', auth).send({ records }).expect(201);
  }
});
afterAll(() => h.close());

const names = (page: { records: { fields: { Name: string } }[] }) =>
  page.records.map((record) => record.fields.Name);

describe('search on records/list', () => {
  it('finds the text in any text, email, url, phone or select field, case aside', async () => {
    expect(names(await list({ search: 'acme', sort: [{ field: 'Score' }] }))).toEqual([
      'Grace',
      'Linus',
      'Ken',
    ]);
    expect(names(await list({ search: '555 01' }))).toEqual(['Dennis']);
    expect(names(await list({ search: 'CUSTOM' }))).toEqual(['Dennis']);
    expect(names(await list({ search: 'PRE' }))).toEqual(['Barbara']);
    // LIKE's wildcards are plain characters to a search.
    expect(names(await list({ search: '0%' }))).toEqual(['100% sure']);
    expect((await list({ search: 'nobody here' })).total).toBe(0);
  });

  it('is ANDed with the filter, with an exact total across pages', async () => {
    const page = await list({ search: 'filler', filter: { field: 'Score', less_than: 30 }, limit: 10 });
    expect(page.total).toBe(30);
    expect(page.records).toHaveLength(10);
    expect(page.hasMore).toBe(true);
    const seen = new Set(names(page));
    let cursor = page.nextCursor;
    while (cursor) {
      const next = await list({
        search: 'filler',
        filter: { field: 'Score', less_than: 30 },
        limit: 10,
        cursor,
      });
      for (const name of names(next)) seen.add(name);
      cursor = next.nextCursor;
    }
    expect(seen.size).toBe(30);
  });

  it("refuses another search's cursor, and an empty search", async () => {
    const page = await list({ search: 'filler', limit: 5 });
    const refused = await list({ search: 'fill', limit: 5, cursor: page.nextCursor }, 400);
    expect(refused.error.message).toMatch(/^body\.cursor: /);
    const empty = await list({ search: '' }, 400);
    expect(empty.error.message).toMatch(/^body\.search: must not be empty/);
  });

  it('is served by trigram indexes on the text fields it reads', async () => {
    await list({ search: 'ada', limit: 5 });
    await matchIndexBuildsSettled();
    const schema = schemaNameOf(baseId);
    const { rows } = await h.db.pool.query<{ indexdef: string }>(
      `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 AND indexdef LIKE '%gin_trgm_ops%'`,
      [schema, tableId],
    );
    // Name, Notes, Email, Site and Phone; the selects are searched by their option names.
    expect(rows).toHaveLength(5);
    // Every branch of the search has an index, so PostgreSQL can answer it without reading every
    // row (shown with sequential scans off: 67 rows are fewer than an index is worth).
    const meta = await loadTableMeta(h.db.pool, baseId, tableId);
    const params = new SqlParams();
    const where = compileFilter(searchFilter(meta, 'ada'), meta, params);
    const client = await h.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_seqscan = off');
      const plan = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT count(*) FROM "${schema}"."${tableId}" r WHERE ${where}`,
        params.values,
      );
      const lines = plan.rows.map((row) => row['QUERY PLAN']);
      expect(lines.some((line) => line.includes('BitmapOr'))).toBe(true);
      expect(lines.filter((line) => line.includes('Bitmap Index Scan'))).toHaveLength(5);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });
});
