import { sqlName, sqlViewSchemaName } from '@recordbase/db/physical';
import { createBase, type Harness, startHarness } from './harness';

/**
 * The views read-only SQL runs against (packages/db sql-views.ts): tables under their names,
 * fields under theirs, values in the API's shapes, rebuilt in the transaction of every change.
 */

let h: Harness;
let auth: string;
let baseId: string;
let views: string;

const schemaUrl = (path = '') => `/api/v1/bases/${baseId}${path}`;

async function query<T = Record<string, unknown>>(sql: string): Promise<T[]> {
  return (await h.db.pool.query(sql)).rows as T[];
}

async function viewNames(): Promise<string[]> {
  const rows = await query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.views WHERE table_schema = '${views}' ORDER BY 1`,
  );
  return rows.map((row) => row.name);
}

async function columnsOf(view: string): Promise<Record<string, string>> {
  const rows = await query<{ name: string; type: string }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
       FROM pg_attribute a WHERE a.attrelid = format('%I.%I', '${views}', '${view.replace(/'/g, "''")}')::regclass
        AND a.attnum > 0 ORDER BY a.attnum`,
  );
  return Object.fromEntries(rows.map((row) => [row.name, row.type]));
}

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Views',
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
          { name: 'Due', type: 'date' },
          { name: 'Done', type: 'checkbox' },
          { name: 'Company', type: 'linked_record', template: { tableId: 'Companies' } },
        ],
      },
    ],
  });
  baseId = base.body.id;
  views = sqlViewSchemaName(baseId);
});
afterAll(() => h.close());

describe('views for read-only SQL', () => {
  it('show each table under its name and each value in the API shape', async () => {
    expect(await viewNames()).toEqual(['Companies', 'Deals']);
    const companies = await h.api
      .post(schemaUrl('/tables/Companies/records/bulk'))
      .set('Authorization', auth)
      .send({ records: [{ Name: 'Acme' }, { Name: 'Globex' }] })
      .expect(201);
    const [acme, globex] = companies.body.records.map((r: { id: string }) => r.id);
    const deal = await h.api
      .post(schemaUrl('/tables/Deals/records'))
      .set('Authorization', auth)
      .send({
        record: {
          Name: 'Big',
          Amount: 2.5,
          Stage: 'Won',
          Tags: ['b', 'a'],
          Due: '2024-02-29',
          Company: [globex, acme],
        },
      })
      .expect(201);
    const rows = await query(
      `SELECT d.id::text, d."Name", d."Amount", d."Stage", d."Tags", to_char(d."Due", 'YYYY-MM-DD') AS due, d."Done", d."Company"::text[] AS company, c."Name" AS first_company
         FROM "${views}"."Deals" d JOIN "${views}"."Companies" c ON c.id = d."Company"[1]`,
    );
    expect(rows).toEqual([
      {
        id: deal.body.id,
        Name: 'Big',
        Amount: 2.5,
        Stage: 'Won',
        Tags: ['b', 'a'],
        due: '2024-02-29',
        Done: false,
        company: [globex, acme],
        first_company: 'Globex',
      },
    ]);
    expect(await columnsOf('Deals')).toEqual({
      id: 'uuid',
      createdAt: 'timestamp with time zone',
      updatedAt: 'timestamp with time zone',
      Name: 'text',
      Amount: 'double precision',
      Stage: 'text',
      Tags: 'text[]',
      Due: 'date',
      Done: 'boolean',
      Company: 'uuid[]',
    });
  });

  it('follow renames, type changes and deletions of fields and tables', async () => {
    await h.api
      .patch(schemaUrl('/tables/Deals/fields/Amount'))
      .set('Authorization', auth)
      .send({ name: 'Value "net"', type: 'single_line_text' })
      .expect(200);
    await h.api.delete(schemaUrl('/tables/Deals/fields/Done')).set('Authorization', auth).expect(200);
    await h.api
      .patch(schemaUrl('/tables/Deals'))
      .set('Authorization', auth)
      .send({ name: 'Sales' })
      .expect(200);
    expect(await viewNames()).toEqual(['Companies', 'Sales']);
    const columns = await columnsOf('Sales');
    expect(columns['Value "net"']).toBe('text');
    expect(columns.Amount).toBeUndefined();
    expect(columns.Done).toBeUndefined();
    // Deleting the linked table removes the link field, and its column with it.
    await h.api.delete(schemaUrl('/tables/Companies')).set('Authorization', auth).expect(200);
    expect(await viewNames()).toEqual(['Sales']);
    expect((await columnsOf('Sales')).Company).toBeUndefined();
    expect(await query(`SELECT "Value ""net""" AS value FROM "${views}"."Sales"`)).toEqual([
      { value: '2.5' },
    ]);
  });

  it('keep names longer than an identifier apart', async () => {
    const long = 'x'.repeat(70);
    for (const suffix of ['one', 'two']) {
      await h.api
        .post(schemaUrl('/tables'))
        .set('Authorization', auth)
        .send({ name: `${long}${suffix}`, fields: [{ name: `${'é'.repeat(40)}${suffix}`, type: 'number' }] })
        .expect(201);
    }
    const names = await viewNames();
    expect(names).toEqual(expect.arrayContaining([sqlName(`${long}one`), sqlName(`${long}two`)]));
    expect(new Set(names).size).toBe(names.length);
    expect(Object.keys(await columnsOf(sqlName(`${long}two`)))).toContain(sqlName(`${'é'.repeat(40)}two`));
  });

  it('are described by GET /sql/schema, behind sql:read, and built for a database that had none', async () => {
    await h.db.pool.query(`DROP SCHEMA "${views}" CASCADE`);
    const described = await h.api.get(schemaUrl('/sql/schema')).set('Authorization', auth).expect(200);
    const sales = described.body.tables.find((table: { name: string }) => table.name === 'Sales');
    expect(sales.columns).toEqual([
      { name: 'id', fieldId: null, fieldType: null, sqlType: 'uuid' },
      { name: 'createdAt', fieldId: null, fieldType: null, sqlType: 'timestamp with time zone' },
      { name: 'updatedAt', fieldId: null, fieldType: null, sqlType: 'timestamp with time zone' },
      { name: 'Name', fieldId: expect.any(String), fieldType: 'single_line_text', sqlType: 'text' },
      { name: 'Value "net"', fieldId: expect.any(String), fieldType: 'single_line_text', sqlType: 'text' },
      { name: 'Stage', fieldId: expect.any(String), fieldType: 'single_select', sqlType: 'text' },
      { name: 'Tags', fieldId: expect.any(String), fieldType: 'multiple_select', sqlType: 'text[]' },
      { name: 'Due', fieldId: expect.any(String), fieldType: 'date', sqlType: 'date' },
    ]);
    expect(await viewNames()).toContain('Sales');
    const created = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', auth)
      .send({ name: 'no sql', scopes: ['schema:read', 'records:read'] })
      .expect(201);
    await h.api.get(schemaUrl('/sql/schema')).set('Authorization', h.bearer(created.body.key)).expect(403);
  });

  it('go with their database', async () => {
    await h.api.delete(schemaUrl()).set('Authorization', auth).expect(200);
    const schemas = await query(`SELECT 1 FROM pg_namespace WHERE nspname = '${views}'`);
    expect(schemas).toEqual([]);
  });
});
