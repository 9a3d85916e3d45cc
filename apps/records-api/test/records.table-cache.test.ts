import { createBase, type Harness, startHarness } from './harness';

/**
 * Table metadata is kept per app instance between requests; a schema change must be seen by the
 * very next write and list, whether it went through this instance or another one on the same
 * database, and a cache made stale behind its back recovers by itself.
 */

let h: Harness;
let other: Harness;
beforeAll(async () => {
  h = await startHarness();
  other = await startHarness({ sameDatabaseAs: h });
});
afterAll(async () => {
  await other.close();
  await h.close();
});

async function newTable(): Promise<{ root: string; nameId: string }> {
  const base = await createBase(h, {
    name: 'Cache',
    tables: [{ name: 'T', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  return {
    root: `/api/v1/bases/${base.body.id}/tables/T`,
    nameId: base.body.tables[0].fields[0].id,
  };
}

const write = (app: Harness, root: string, records: object[], matchOn?: string[]) =>
  app.api
    .post(`${root}/records/bulk`)
    .set('Authorization', app.bearer(app.rootKey))
    .send(matchOn ? { records, matchOn } : { records });

const list = (app: Harness, root: string) =>
  app.api.post(`${root}/records/list`).set('Authorization', app.bearer(app.rootKey)).send({}).expect(200);

/** matchOn indexes (`<table>_mx_<hash>`) of the database that are built and valid. */
async function validMatchIndexes(): Promise<number> {
  const result = await h.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname LIKE '%\\_mx\\_%' AND i.indisvalid AND i.indisready`,
  );
  return result.rows[0]!.n;
}

async function waitUntil(probe: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const changeField = (app: Harness, method: 'post' | 'patch' | 'delete', path: string, body?: object) =>
  app.api[method](path)
    .set('Authorization', app.bearer(app.rootKey))
    .send(body ?? {});

describe.each([
  ['the same instance', () => h],
  ['another instance on the same database', () => other],
])('a schema change made through %s', (_label, changer) => {
  it('is seen by the very next write and list: added, renamed, type-changed, deleted', async () => {
    const { root } = await newTable();
    // Both instances cache the table.
    for (const app of [h, other]) {
      await write(app, root, [{ Name: 'warm' }]).expect(201);
      await list(app, root);
    }

    const added = await changeField(changer(), 'post', `${root}/fields`, {
      name: 'Size',
      type: 'number',
    }).expect(201);
    const sizeId = added.body.id as string;
    const created = await write(h, root, [{ Name: 'a', Size: 3 }]).expect(201);
    expect(created.body.records[0].fields.Size).toBe(3);
    expect((await list(h, root)).body.records.at(-1).fields).toEqual({ Name: 'a', Size: 3 });

    await changeField(changer(), 'patch', `${root}/fields/${sizeId}`, { name: 'Width' }).expect(200);
    await write(h, root, [{ Width: 4 }]).expect(201);
    const renamed = (await list(h, root)).body.records;
    expect(renamed.at(-2).fields).toEqual({ Name: 'a', Width: 3 });
    expect(renamed.at(-1).data[sizeId]).toBe(4);

    await changeField(changer(), 'patch', `${root}/fields/${sizeId}`, { type: 'single_line_text' }).expect(
      200,
    );
    const asText = await write(h, root, [{ Width: 'wide' }]).expect(201);
    expect(asText.body.records[0].fields.Width).toBe('wide');
    expect((await list(h, root)).body.records.at(-2).fields.Width).toBe('4');

    await changeField(changer(), 'delete', `${root}/fields/${sizeId}`).expect(200);
    const refused = await write(h, root, [{ Width: 'x' }]).expect(400);
    expect(refused.body.error.message).toMatch(/unknown field "Width"/);
    expect(Object.keys((await list(h, root)).body.records.at(-1).fields)).toEqual(['Name']);
  });

  it('is seen by the next upsert on matchOn', async () => {
    const { root, nameId } = await newTable();
    const indexesBefore = await validMatchIndexes();
    await write(h, root, [{ Name: 'k1' }], [nameId]).expect(200);
    // The first upsert builds its matchOn index in the background (CREATE INDEX CONCURRENTLY);
    // a schema change racing that build is another test's subject, not this one's.
    await waitUntil(async () => (await validMatchIndexes()) > indexesBefore, 'the matchOn index');
    await changeField(changer(), 'post', `${root}/fields`, { name: 'Done', type: 'checkbox' }).expect(201);
    const upserted = await write(h, root, [{ Name: 'k1', Done: true }], [nameId]).expect(200);
    expect(upserted.body.records[0].fields).toEqual({ Name: 'k1', Done: true });
  });
});

describe('a cache made stale without a notification', () => {
  it('drops the entry and retries once when a cached column no longer exists', async () => {
    const base = await createBase(h, {
      name: 'Stale',
      tables: [
        {
          name: 'T',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'Old', type: 'number' },
          ],
        },
      ],
    });
    const root = `/api/v1/bases/${base.body.id}/tables/T`;
    const table = base.body.tables[0] as { id: string; fields: { id: string }[] };
    await write(h, root, [{ Name: 'warm', Old: 1 }]).expect(201);
    await list(h, root);
    // Behind the app's back, without a NOTIFY: the field and its column go away.
    const { rows } = await h.db.pool.query<{ s: string }>(
      'SELECT schema_name AS s FROM databases WHERE id = $1',
      [base.body.id],
    );
    const oldId = table.fields[1]!.id;
    await h.db.pool.query(`DELETE FROM fields WHERE id = $1`, [oldId]);
    await h.db.pool.query(`ALTER TABLE "${rows[0]!.s}"."${table.id}" DROP COLUMN "${oldId}" CASCADE`);

    const created = await write(h, root, [{ Name: 'after' }]).expect(201);
    expect(created.body.records[0].fields).toEqual({ Name: 'after' });
    const listed = await list(h, root);
    expect(listed.body.records.map((record: { fields: object }) => record.fields)).toEqual([
      { Name: 'warm' },
      { Name: 'after' },
    ]);
  });
});

describe('a listing with metadata older than the schema', () => {
  it('loads the metadata again when the database schema version moved, before its NOTIFY arrives', async () => {
    const base = await createBase(h, {
      name: 'Renamed',
      tables: [{ name: 'T', fields: [{ name: 'Name', type: 'single_line_text' }] }],
    });
    const root = `/api/v1/bases/${base.body.id}/tables/T`;
    const nameId = (base.body.tables[0] as { fields: { id: string }[] }).fields[0]!.id;
    await write(h, root, [{ Name: 'x' }]).expect(201);
    await list(h, root);
    // A rename as a schema change commits it, minus the NOTIFY this process would act on.
    await h.db.pool.query(`UPDATE fields SET name = 'Title', name_key = 'title' WHERE id = $1`, [nameId]);
    await h.db.pool.query('UPDATE databases SET schema_version = schema_version + 1 WHERE id = $1', [
      base.body.id,
    ]);
    const listed = await list(h, root);
    expect(listed.body.records.map((record: { fields: object }) => record.fields)).toEqual([{ Title: 'x' }]);
  });
});
