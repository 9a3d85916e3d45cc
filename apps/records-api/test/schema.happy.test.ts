import {
  columnsOf,
  createBase,
  type Harness,
  purgeSchemaTrashOf,
  schemaNameOf,
  startHarness,
} from './harness';

let h: Harness;
let auth: string;

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
});
afterAll(() => h.close());

async function newBase(tables: object[] = []) {
  const response = await createBase(h, { name: 'Base', tables });
  return response.body as {
    id: string;
    tables: { id: string; name: string; fields: { id: string; name: string }[] }[];
  };
}

async function columnComment(databaseId: string, tableId: string, fieldId: string): Promise<string | null> {
  const result = await h.db.pool.query<{ comment: string | null }>(
    `SELECT col_description(c.oid, a.attnum) AS comment FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid
      WHERE n.nspname = $1 AND c.relname = $2 AND a.attname = $3`,
    [schemaNameOf(databaseId), tableId, fieldId],
  );
  return result.rows[0]?.comment ?? null;
}

describe('databases', () => {
  it('creates a database with tables, each a physical table with typed columns', async () => {
    const base = await newBase([
      {
        name: 'Projects',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Budget', type: 'currency', template: { currencySymbol: '€' } },
          {
            name: 'Stage',
            type: 'single_select',
            template: { options: [{ name: 'Idea' }, { name: 'Done' }] },
          },
          { name: 'Kickoff', type: 'date' },
          { name: 'Shipped', type: 'checkbox' },
        ],
      },
    ]);
    expect(base).toMatchObject({ name: 'Base', id: expect.any(String), createdAt: expect.any(String) });
    const [table] = base.tables;
    expect(table).toMatchObject({ name: 'Projects', primaryFieldId: table!.fields[0]!.id });
    expect(table!.fields.map((f) => f.name)).toEqual(['Name', 'Budget', 'Stage', 'Kickoff', 'Shipped']);
    expect(table!.id).toMatch(/^tbl[0-9A-Za-z]{14}$/);
    const columns = await columnsOf(h.db, schemaNameOf(base.id), table!.id);
    const [name, budget, stage, kickoff, shipped] = table!.fields;
    expect(columns).toMatchObject({
      id: 'uuid',
      seq: 'bigint',
      created_at: 'timestamp with time zone',
      updated_at: 'timestamp with time zone',
      [name!.id]: 'text',
      [budget!.id]: 'double precision',
      [stage!.id]: 'text',
      [kickoff!.id]: 'date',
      [shipped!.id]: 'boolean',
    });
    const fields = (
      await h.api.get(`/api/v1/bases/${base.id}/tables/Projects`).set('Authorization', auth).expect(200)
    ).body.fields;
    expect(fields[1]).toMatchObject({
      type: 'currency',
      template: { currencySymbol: '€', decimalPlaces: 2 },
    });
  });

  it('renames a database and lists it', async () => {
    const base = await newBase();
    const renamed = await h.api
      .patch(`/api/v1/bases/${base.id}`)
      .set('Authorization', auth)
      .send({ name: 'Renamed' })
      .expect(200);
    expect(renamed.body.name).toBe('Renamed');
    const list = await h.api.get('/api/v1/bases').set('Authorization', auth).expect(200);
    expect(list.body.bases.find((b: { id: string }) => b.id === base.id).name).toBe('Renamed');
  });

  it('deletes a database with its schema', async () => {
    const base = await newBase([{ name: 'T', fields: [{ name: 'N', type: 'number' }] }]);
    const response = await h.api.delete(`/api/v1/bases/${base.id}`).set('Authorization', auth).expect(200);
    expect(response.body).toEqual({ success: true, message: 'Database deleted' });
    const schema = await h.db.pool.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [
      schemaNameOf(base.id),
    ]);
    expect(schema.rowCount).toBe(0);
    await h.api.get(`/api/v1/bases/${base.id}`).set('Authorization', auth).expect(404);
  });
});

describe('tables', () => {
  it('addresses a table by id or by name, case-insensitively', async () => {
    const base = await newBase([{ name: 'Tasks', fields: [{ name: 'Title', type: 'long_text' }] }]);
    const id = base.tables[0]!.id;
    const byId = await h.api
      .get(`/api/v1/bases/${base.id}/tables/${id}`)
      .set('Authorization', auth)
      .expect(200);
    const byName = await h.api
      .get(`/api/v1/bases/${base.id}/tables/tasks`)
      .set('Authorization', auth)
      .expect(200);
    expect(byName.body).toEqual(byId.body);
  });

  it('creates, renames and deletes a table and its storage', async () => {
    const base = await newBase();
    const created = await h.api
      .post(`/api/v1/bases/${base.id}/tables`)
      .set('Authorization', auth)
      .send({
        name: 'Contacts',
        fields: [
          { name: 'Email', type: 'email' },
          { name: 'Phone', type: 'phone_number' },
        ],
      })
      .expect(201);
    const tableId = created.body.id;
    expect(Object.keys(await columnsOf(h.db, schemaNameOf(base.id), tableId))).toHaveLength(6);
    const renamed = await h.api
      .patch(`/api/v1/bases/${base.id}/tables/Contacts`)
      .set('Authorization', auth)
      .send({ name: 'People' })
      .expect(200);
    expect(renamed.body.name).toBe('People');
    const comment = await h.db.pool.query(`SELECT obj_description($1::regclass, 'pg_class') AS c`, [
      `"${schemaNameOf(base.id)}"."${tableId}"`,
    ]);
    expect(comment.rows[0].c).toBe('People');
    await h.api.delete(`/api/v1/bases/${base.id}/tables/People`).set('Authorization', auth).expect(200);
    await h.api.get(`/api/v1/bases/${base.id}/tables/${tableId}`).set('Authorization', auth).expect(404);
    // Its storage is kept for a restore from the database trash until the purge drops it.
    expect(Object.keys(await columnsOf(h.db, schemaNameOf(base.id), tableId))).toHaveLength(6);
    await purgeSchemaTrashOf(h.db, base.id);
    expect(await columnsOf(h.db, schemaNameOf(base.id), tableId)).toEqual({});
  });

  it('changes the primary field', async () => {
    const base = await newBase([
      {
        name: 'T',
        fields: [
          { name: 'A', type: 'single_line_text' },
          { name: 'B', type: 'number' },
        ],
      },
    ]);
    const [, b] = base.tables[0]!.fields;
    const updated = await h.api
      .patch(`/api/v1/bases/${base.id}/tables/T`)
      .set('Authorization', auth)
      .send({ primaryFieldId: b!.id })
      .expect(200);
    expect(updated.body.primaryFieldId).toBe(b!.id);
  });

  it('creates a junction table for a linked record field, and drops inbound links with the target table', async () => {
    const base = await newBase([
      { name: 'Companies', fields: [{ name: 'Name', type: 'single_line_text' }] },
      {
        name: 'People',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Employer', type: 'linked_record', template: { tableId: 'Companies' } },
        ],
      },
    ]);
    const companies = base.tables.find((t) => t.name === 'Companies')!;
    const people = base.tables.find((t) => t.name === 'People')!;
    const link = people.fields[1]!;
    const got = await h.api
      .get(`/api/v1/bases/${base.id}/tables/People/fields/${link.id}`)
      .set('Authorization', auth)
      .expect(200);
    expect(got.body.template).toEqual({ tableId: companies.id });
    expect(Object.keys(await columnsOf(h.db, schemaNameOf(base.id), `${link.id}_links`)).sort()).toEqual([
      'linked_id',
      'position',
      'record_id',
    ]);
    await h.api.delete(`/api/v1/bases/${base.id}/tables/Companies`).set('Authorization', auth).expect(200);
    const after = await h.api
      .get(`/api/v1/bases/${base.id}/tables/People`)
      .set('Authorization', auth)
      .expect(200);
    expect(after.body.fields.map((f: { name: string }) => f.name)).toEqual(['Name']);
    expect(Object.keys(await columnsOf(h.db, schemaNameOf(base.id), `${link.id}_links`))).toHaveLength(3);
    await purgeSchemaTrashOf(h.db, base.id);
    expect(await columnsOf(h.db, schemaNameOf(base.id), `${link.id}_links`)).toEqual({});
  });
});

describe('fields', () => {
  it('adds, renames and deletes a column', async () => {
    const base = await newBase([{ name: 'T', fields: [{ name: 'Name', type: 'single_line_text' }] }]);
    const table = base.tables[0]!;
    const url = `/api/v1/bases/${base.id}/tables/${table.id}/fields`;
    const created = await h.api
      .post(url)
      .set('Authorization', auth)
      .send({ name: 'Score', type: 'rating', template: { max: 10 } })
      .expect(201);
    expect(created.body).toMatchObject({ name: 'Score', type: 'rating', template: { max: 10 } });
    const fieldId = created.body.id;
    expect((await columnsOf(h.db, schemaNameOf(base.id), table.id))[fieldId]).toBe('smallint');

    await h.api.patch(`${url}/${fieldId}`).set('Authorization', auth).send({ name: 'Stars' }).expect(200);
    expect(await columnComment(base.id, table.id, fieldId)).toBe('Stars');
    const renamed = await h.api.get(`${url}/Stars`).set('Authorization', auth).expect(200);
    expect(renamed.body.id).toBe(fieldId);

    const deleted = await h.api.delete(`${url}/${fieldId}`).set('Authorization', auth).expect(200);
    expect(deleted.body).toEqual({ success: true, message: 'Field deleted' });
    expect((await columnsOf(h.db, schemaNameOf(base.id), table.id))[fieldId]).toBe('smallint');
    await purgeSchemaTrashOf(h.db, base.id);
    expect((await columnsOf(h.db, schemaNameOf(base.id), table.id))[fieldId]).toBeUndefined();
  });

  it('converts values when a field changes type, and adds select options for the values found', async () => {
    const base = await newBase([
      {
        name: 'T',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Status', type: 'single_line_text' },
        ],
      },
    ]);
    const table = base.tables[0]!;
    const status = table.fields[1]!;
    await h.db.pool.query(
      `INSERT INTO "${schemaNameOf(base.id)}"."${table.id}" ("${status.id}") VALUES ('Open'), ('Closed'), (NULL)`,
    );
    const changed = await h.api
      .patch(`/api/v1/bases/${base.id}/tables/T/fields/${status.id}`)
      .set('Authorization', auth)
      .send({ type: 'single_select', template: { options: [{ name: 'Open', color: 'green' }] } })
      .expect(200);
    expect(changed.body.type).toBe('single_select');
    expect(changed.body.template.options).toEqual([{ name: 'Open', color: 'green' }, { name: 'Closed' }]);
  });

  it.each(['single_select', 'multiple_select'])(
    'keeps the colours of %s options sent again by name only; a colour sent wins (issue 26)',
    async (type) => {
      const base = await newBase([
        {
          name: 'T',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            {
              name: 'Stage',
              type,
              template: {
                options: [
                  { name: 'Lead', color: 'blue' },
                  { name: 'Won', color: 'green' },
                  { name: 'Lost', color: 'red' },
                ],
              },
            },
          ],
        },
      ]);
      const url = `/api/v1/bases/${base.id}/tables/T/fields/Stage`;
      const resent = await h.api
        .patch(url)
        .set('Authorization', auth)
        .send({ template: { options: [{ name: 'Won' }, { name: 'Lead' }, { name: 'New' }] } })
        .expect(200);
      expect(resent.body.template.options).toEqual([
        { name: 'Won', color: 'green' },
        { name: 'Lead', color: 'blue' },
        { name: 'New' },
      ]);
      const recoloured = await h.api
        .patch(url)
        .set('Authorization', auth)
        .send({ template: { options: [{ name: 'Won', color: 'purple' }, { name: 'Lead' }] } })
        .expect(200);
      expect(recoloured.body.template.options).toEqual([
        { name: 'Won', color: 'purple' },
        { name: 'Lead', color: 'blue' },
      ]);
      const read = await h.api.get(url).set('Authorization', auth).expect(200);
      expect(read.body.template).toEqual(recoloured.body.template);
    },
  );

  it('clears values of a removed select option', async () => {
    const base = await newBase([
      {
        name: 'T',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Tags', type: 'multiple_select', template: { options: [{ name: 'a' }, { name: 'b' }] } },
        ],
      },
    ]);
    const table = base.tables[0]!;
    const tags = table.fields[1]!;
    await h.db.pool.query(
      `INSERT INTO "${schemaNameOf(base.id)}"."${table.id}" ("${tags.id}") VALUES ('{a,b}')`,
    );
    await h.api
      .patch(`/api/v1/bases/${base.id}/tables/T/fields/Tags`)
      .set('Authorization', auth)
      .send({ template: { options: [{ name: 'a' }] } })
      .expect(200);
    const rows = await h.db.pool.query(
      `SELECT "${tags.id}" AS v FROM "${schemaNameOf(base.id)}"."${table.id}"`,
    );
    expect(rows.rows[0].v).toEqual(['a']);
  });
});
