import { createBase, type Harness, schemaNameOf, startHarness } from './harness';

/**
 * Filtered totals are kept per table write version (count-cache.ts). These tests make the kept
 * total visible (a change made behind the version's back is not seen) and check that every kind
 * of change that can alter a filter's matches advances the version.
 */

let h: Harness;
let auth: string;
let baseId: string;
let schema: string;
let deals: { id: string; fieldIds: Record<string, string> };
let companyIds: string[];

const url = (table: string, path = '') => `/api/v1/bases/${baseId}/tables/${table}/records${path}`;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Cache',
    tables: [
      { name: 'Companies', fields: [{ name: 'Name', type: 'single_line_text' }] },
      {
        name: 'Deals',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Amount', type: 'number' },
          { name: 'Stage', type: 'single_select', template: { options: [{ name: 'A' }, { name: 'B' }] } },
          { name: 'Company', type: 'linked_record', template: { tableId: 'Companies' } },
          { name: 'At', type: 'datetime' },
        ],
      },
    ],
  });
  baseId = base.body.id;
  schema = schemaNameOf(baseId);
  const table = base.body.tables.find((t: { name: string }) => t.name === 'Deals');
  deals = {
    id: table.id,
    fieldIds: Object.fromEntries(table.fields.map((f: { name: string; id: string }) => [f.name, f.id])),
  };
  const companies = await h.api
    .post(url('Companies', '/bulk'))
    .set('Authorization', auth)
    .send({ records: [{ Name: 'c1' }, { Name: 'c2' }] })
    .expect(201);
  companyIds = companies.body.records.map((r: { id: string }) => r.id);
  await h.api
    .post(url('Deals', '/bulk'))
    .set('Authorization', auth)
    .send({
      records: Array.from({ length: 30 }, (_, i) => ({
        Name: `d${i}`,
        Amount: i,
        Stage: i % 2 === 0 ? 'A' : 'B',
        Company: i < 10 ? [companyIds[0]] : [],
        At: i < 5 ? '2024-01-01T18:00:00.000Z' : i < 10 ? '2024-01-02T18:00:00.000Z' : null,
      })),
    })
    .expect(201);
});
afterAll(() => h.close());

/** The total of a one-record page, which always needs a count (the page cannot tell it). */
async function total(filter: object): Promise<number> {
  const response = await h.api
    .post(url('Deals', '/list'))
    .set('Authorization', auth)
    .send({ limit: 1, filter })
    .expect(200);
  return response.body.total;
}

async function writeVersion(): Promise<bigint> {
  const result = await h.db.pool.query<{ version: string }>(
    'SELECT sum(writes)::text AS version FROM table_row_counts WHERE table_id = $1',
    [deals.id],
  );
  return BigInt(result.rows[0]!.version);
}

const dealsTable = () => `"${schema}"."${deals.id}"`;

describe('the kept total of a filter', () => {
  it('is served while the write version stands, and counted again once it moves', async () => {
    const filter = { field: 'Amount', greater_than_or_equal_to: 20 };
    expect(await total(filter)).toBe(10);
    // A change the triggers do not see leaves the version as it was: the kept total shows.
    await h.db.pool.query(`ALTER TABLE ${dealsTable()} DISABLE TRIGGER count_updates`);
    try {
      await h.db.pool.query(
        `UPDATE ${dealsTable()} SET "${deals.fieldIds.Amount}" = 0 WHERE "${deals.fieldIds.Amount}" = 29`,
      );
    } finally {
      await h.db.pool.query(`ALTER TABLE ${dealsTable()} ENABLE TRIGGER count_updates`);
    }
    expect(await total(filter)).toBe(10);
    // The same change made visibly moves the version: the count is exact again.
    await h.db.pool.query(
      `UPDATE ${dealsTable()} SET "${deals.fieldIds.Amount}" = 0 WHERE "${deals.fieldIds.Amount}" = 28`,
    );
    expect(await total(filter)).toBe(8);
  });

  it('follows creates, updates, upserts and deletes through the API', async () => {
    const filter = { field: 'Stage', equals: 'A' };
    expect(await total(filter)).toBe(15);
    const created = await h.api
      .post(url('Deals'))
      .set('Authorization', auth)
      .send({ record: { Name: 'new', Stage: 'A' } })
      .expect(201);
    expect(await total(filter)).toBe(16);
    await h.api
      .patch(url('Deals', `/${created.body.id}`))
      .set('Authorization', auth)
      .send({ record: { Stage: 'B' } })
      .expect(200);
    expect(await total(filter)).toBe(15);
    await h.api
      .post(url('Deals', '/bulk'))
      .set('Authorization', auth)
      .send({ matchOn: [deals.fieldIds.Name], records: [{ Name: 'new', Stage: 'A' }] })
      .expect(200);
    expect(await total(filter)).toBe(16);
    await h.api
      .delete(url('Deals', `/${created.body.id}`))
      .set('Authorization', auth)
      .expect(200);
    expect(await total(filter)).toBe(15);
  });

  it('follows link changes, including links removed by deleting the linked record', async () => {
    const linked = { field: 'Company', is_not_empty: true };
    expect(await total(linked)).toBe(10);
    const before = await writeVersion();
    await h.api
      .delete(url('Companies', `/${companyIds[0]}`))
      .set('Authorization', auth)
      .expect(200);
    expect(await writeVersion()).toBeGreaterThan(before);
    expect(await total(linked)).toBe(0);
  });

  it('follows conversions, which rewrite values without firing row triggers', async () => {
    const afternoon = { field: 'At', greater_than: '2024-01-01T12:00:00.000Z' };
    expect(await total(afternoon)).toBe(10);
    // To a date and back loses the time of day: every value becomes midnight, so the first five
    // no longer match (and the rest still fill a page of one: the total has to be counted).
    for (const type of ['date', 'datetime']) {
      await h.api
        .patch(`/api/v1/bases/${baseId}/tables/Deals/fields/At`)
        .set('Authorization', auth)
        .send({ type })
        .expect(200);
    }
    expect(await total(afternoon)).toBe(5);
  });
});
