import type { Filter, Sort, TableRecord } from '@recordbase/contracts/records';
import { compareForSort, matchesFilter } from '@recordbase/domain/records/filter-evaluator';
import { loadTableMeta } from '@recordbase/domain/records/table-loader';
import { baseClient, type FieldBody } from './base-client';
import { createBase, type Harness, schemaNameOf, startHarness } from './harness';
import { type ImportFixture, importFixture } from './import-fixture';

/**
 * The automatic computed types (autonumber, created_time, last_modified_time, created_by,
 * last_modified_by) through the API: created like any field, filled by every write, read
 * everywhere a field is read, never written.
 */

let h: Harness;
let f: ImportFixture;
let root: string;
let writer: { id: string; name: string; auth: string };
let baseId: string;

const { url, newTable, create, update, list } = baseClient(
  () => h,
  () => baseId,
  () => root,
);
const ROOT_AUTHOR = { id: 'root', name: 'root' };

const pause = () => new Promise((resolve) => setTimeout(resolve, 15));

beforeAll(async () => {
  h = await startHarness();
  f = await importFixture(h);
  f.startWorker();
  root = h.bearer(h.rootKey);
  const key = await h.api
    .post('/api/v1/api-keys')
    .set('Authorization', root)
    .send({ name: 'Writer bot', scopes: ['records:read', 'records:write', 'schema:read'] })
    .expect(201);
  writer = { id: key.body.id, name: 'Writer bot', auth: h.bearer(key.body.key) };
  const base = await createBase(h, {
    name: 'Computed',
    tables: [
      {
        name: 'Tasks',
        fields: [
          { name: 'Title', type: 'single_line_text' },
          { name: 'Notes', type: 'long_text' },
          { name: 'No', type: 'autonumber' },
          { name: 'Created', type: 'created_time' },
          { name: 'Modified', type: 'last_modified_time' },
          { name: 'Title modified', type: 'last_modified_time', template: { fieldIds: ['Title'] } },
          { name: 'Creator', type: 'created_by' },
          { name: 'Editor', type: 'last_modified_by' },
        ],
      },
    ],
  });
  expect(base.status).toBe(201);
  baseId = base.body.id;
});
afterAll(async () => {
  await f.close();
  await h.close();
});

describe('creating computed fields', () => {
  it('answers each with its resultType, inside POST /bases too, and watched fields by id', async () => {
    const tables = await h.api.get(url('/tables')).set('Authorization', root).expect(200);
    const fields = tables.body.tables[0].fields as FieldBody[];
    const byName = Object.fromEntries(fields.map((field) => [field.name, field]));
    expect(byName.Title!.resultType).toBeUndefined();
    expect(byName.No).toMatchObject({ type: 'autonumber', resultType: 'number', template: {} });
    expect(byName.Created).toMatchObject({ type: 'created_time', resultType: 'datetime' });
    expect(byName.Modified).toMatchObject({
      type: 'last_modified_time',
      resultType: 'datetime',
      template: {},
    });
    expect(byName['Title modified']!.template).toEqual({ fieldIds: [byName.Title!.id] });
    expect(byName.Creator).toMatchObject({ type: 'created_by', resultType: 'text' });
    expect(byName.Editor).toMatchObject({ type: 'last_modified_by', resultType: 'text' });
  });

  it('creates them in POST /tables and POST .../fields', async () => {
    const table = await newTable('Plain', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'When', type: 'created_time' },
    ]);
    expect(table.fields[1]).toMatchObject({ type: 'created_time', resultType: 'datetime' });
    const res = await h.api
      .post(url(`/tables/${table.id}/fields`))
      .set('Authorization', root)
      .send({ name: 'Who', type: 'created_by' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Who', type: 'created_by', resultType: 'text' });
  });

  it('refuses one as the primary field', async () => {
    const res = await h.api
      .post(url('/tables'))
      .set('Authorization', root)
      .send({ name: 'Numbered', fields: [{ name: 'No', type: 'autonumber' }] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('a autonumber field cannot be the primary field');
  });

  it('refuses watched fields that are unknown or computed', async () => {
    const table = await newTable('Watching', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'At', type: 'created_time' },
    ]);
    const unknown = await h.api
      .post(url(`/tables/${table.id}/fields`))
      .set('Authorization', root)
      .send({ name: 'Changed', type: 'last_modified_time', template: { fieldIds: ['Nope'] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toBe('body.template.fieldIds[0]: no field "Nope" in this table');
    const computed = await h.api
      .post(url(`/tables/${table.id}/fields`))
      .set('Authorization', root)
      .send({ name: 'Changed', type: 'last_modified_time', template: { fieldIds: ['At'] } });
    expect(computed.status).toBe(400);
    expect(computed.body.error.message).toContain('field "At" is computed');
  });
});

describe('values', () => {
  it('numbers records 1, 2, 3 and never reuses a number', async () => {
    const table = await newTable('Tickets', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'No', type: 'autonumber' },
    ]);
    const first = await create(table.id, { Name: 'a' });
    const bulk = await h.api
      .post(url(`/tables/${table.id}/records/bulk`))
      .set('Authorization', root)
      .send({ records: [{ Name: 'b' }, { Name: 'c' }] })
      .expect(201);
    expect([first, ...bulk.body.records].map((record: TableRecord) => record.fields.No)).toEqual([1, 2, 3]);
    await h.api
      .delete(url(`/tables/${table.id}/records/${bulk.body.records[1].id}`))
      .set('Authorization', root)
      .expect(200);
    expect((await create(table.id, { Name: 'd' })).fields.No).toBe(4);
    // Upserts number the records they create.
    const upsert = await h.api
      .post(url(`/tables/${table.id}/records/bulk`))
      .set('Authorization', root)
      .send({ matchOn: [table.fields[0]!.id], records: [{ Name: 'a' }, { Name: 'e' }] });
    expect(upsert.status).toBe(200);
    expect(upsert.body.records.map((record: TableRecord) => record.fields.No)).toEqual([1, 5]);
  });

  it('numbers records already there by creation order when the field is added, then goes on', async () => {
    const table = await newTable('Backlog', [{ name: 'Name', type: 'single_line_text' }]);
    const records = [];
    for (const name of ['first', 'second', 'third']) records.push(await create(table.id, { Name: name }));
    // The last one created earliest: creation time, not insertion order, decides.
    await h.db.pool.query(
      `UPDATE ${`"${schemaNameOf(baseId)}"."${table.id}"`} SET created_at = created_at - interval '1 hour' WHERE id = $1`,
      [records[2]!.id],
    );
    const added = await h.api
      .post(url(`/tables/${table.id}/fields`))
      .set('Authorization', root)
      .send({ name: 'No', type: 'autonumber' });
    expect(added.status).toBe(201);
    const numbers = Object.fromEntries(
      (await list(table.id)).map((record) => [record.fields.Name, record.fields.No]),
    );
    expect(numbers).toEqual({ third: 1, first: 2, second: 3 });
    expect((await create(table.id, { Name: 'fourth' })).fields.No).toBe(4);
  });

  it('shows createdAt, the time of the last watched change and the keys that wrote', async () => {
    const tasks = await newTable('Chores', [
      { name: 'Title', type: 'single_line_text' },
      { name: 'Notes', type: 'long_text' },
      { name: 'Created', type: 'created_time' },
      { name: 'Modified', type: 'last_modified_time' },
      { name: 'Title modified', type: 'last_modified_time', template: { fieldIds: ['Title'] } },
      { name: 'Creator', type: 'created_by' },
      { name: 'Editor', type: 'last_modified_by' },
    ]);
    const created = await create(tasks.id, { Title: 'Dishes', Notes: 'tonight' });
    expect(created.fields).toMatchObject({
      Created: created.createdAt,
      Modified: created.createdAt,
      'Title modified': created.createdAt,
      Creator: ROOT_AUTHOR,
      Editor: ROOT_AUTHOR,
    });

    await pause();
    const notes = await update(tasks.id, created.id, { Notes: 'tomorrow' }, writer.auth);
    const writerAuthor = { id: writer.id, name: writer.name };
    expect(notes.fields.Modified).toBe(notes.updatedAt);
    expect(notes.fields.Modified).not.toBe(created.createdAt);
    expect(notes.fields['Title modified']).toBe(created.createdAt);
    expect(notes.fields.Creator).toEqual(ROOT_AUTHOR);
    expect(notes.fields.Editor).toEqual(writerAuthor);

    await pause();
    // The same title again changes nothing watched; the editor still moves.
    const same = await update(tasks.id, created.id, { Title: 'Dishes', Notes: 'tomorrow' });
    expect(same.fields.Modified).toBe(notes.fields.Modified);
    expect(same.fields['Title modified']).toBe(created.createdAt);
    expect(same.fields.Editor).toEqual(ROOT_AUTHOR);

    await pause();
    const title = await update(tasks.id, created.id, { Title: 'Laundry' }, writer.auth);
    expect(title.fields['Title modified']).toBe(title.updatedAt);
    expect(title.fields.Modified).toBe(title.updatedAt);
    expect(title.fields.Editor).toEqual(writerAuthor);

    // Bulk updates and upserts keep them the same way.
    await pause();
    const bulk = await h.api
      .patch(url(`/tables/${tasks.id}/records/bulk`))
      .set('Authorization', root)
      .send({ records: [{ id: created.id, fields: { Notes: 'done' } }] });
    expect(bulk.status).toBe(200);
    const after = bulk.body.records[0] as TableRecord;
    expect(after.fields.Modified).toBe(after.updatedAt);
    expect(after.fields['Title modified']).toBe(title.fields['Title modified']);
    expect(after.fields.Editor).toEqual(ROOT_AUTHOR);
    await pause();
    const upsert = await h.api
      .post(url(`/tables/${tasks.id}/records/bulk`))
      .set('Authorization', writer.auth)
      .send({ matchOn: [tasks.fields[0]!.id], records: [{ Title: 'Laundry', Notes: 'done' }] });
    expect(upsert.status).toBe(200);
    const matched = upsert.body.records[0] as TableRecord;
    expect(matched.fields.Modified).toBe(after.fields.Modified);
    expect(matched.fields.Editor).toEqual(writerAuthor);

    // A single read and a projection read the same values.
    const one = await h.api
      .get(url(`/tables/${tasks.id}/records/${created.id}?fields=Creator&fields=Modified`))
      .set('Authorization', root)
      .expect(200);
    expect(one.body.fields).toEqual({ Creator: ROOT_AUTHOR, Modified: after.fields.Modified });
  });

  it('moves a last_modified_time that watches a link field when its links change', async () => {
    const people = await newTable('Folks', [{ name: 'Name', type: 'single_line_text' }]);
    const ada = await create(people.id, { Name: 'Ada' });
    const grace = await create(people.id, { Name: 'Grace' });
    const teams = await newTable('Teams', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Members', type: 'linked_record', template: { tableId: people.id } },
      { name: 'Members changed', type: 'last_modified_time', template: { fieldIds: ['Members'] } },
    ]);
    const team = await create(teams.id, { Name: 'Core', Members: [ada.id] });
    await pause();
    const sameLinks = await update(teams.id, team.id, { Name: 'Core team', Members: [ada.id] });
    expect(sameLinks.fields['Members changed']).toBe(team.createdAt);
    await pause();
    const moreLinks = await update(teams.id, team.id, { Members: [ada.id, grace.id] });
    expect(moreLinks.fields['Members changed']).toBe(moreLinks.updatedAt);
    // Events carry the computed values as reads do.
    const events = await h.db.pool.query<{ data: { records: TableRecord[] } }>(
      `SELECT data FROM outbox_events WHERE table_id = $1 AND type = 'record.updated' ORDER BY seq DESC LIMIT 1`,
      [teams.id],
    );
    expect(events.rows[0]!.data.records[0]!.fields['Members changed']).toBe(moreLinks.updatedAt);

    // A watched field cannot go while it is watched.
    const gone = await h.api.delete(url(`/tables/${teams.id}/fields/Members`)).set('Authorization', root);
    expect(gone.status).toBe(400);
    expect(gone.body.error.message).toContain('watched by last_modified_time field "Members changed"');
  });
});

describe('filters and sorts', () => {
  let tableId: string;
  let records: TableRecord[];

  beforeAll(async () => {
    const table = await newTable('Queue', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'No', type: 'autonumber' },
      { name: 'Created', type: 'created_time' },
      { name: 'Modified', type: 'last_modified_time' },
      { name: 'Creator', type: 'created_by' },
      { name: 'Editor', type: 'last_modified_by' },
    ]);
    tableId = table.id;
    const a = await create(tableId, { Name: 'a' });
    await create(tableId, { Name: 'b' }, writer.auth);
    await pause();
    await create(tableId, { Name: 'c' });
    await update(tableId, a.id, { Name: 'a2' }, writer.auth);
    records = await list(tableId);
  });

  const filters: Filter[] = [
    { field: 'No', greater_than: 1 },
    { field: 'No', in: [1, 3] },
    { field: 'No', less_than_or_equal_to: 2 },
    { field: 'Creator', equals: 'Writer bot' },
    { field: 'Creator', contains: 'WRITER' },
    { field: 'Creator', does_not_equal: 'root' },
    { field: 'Editor', equals: 'root' },
    { field: 'Editor', in: ['Writer bot'] },
    { field: 'Created', is_not_empty: true },
    { field: 'Modified', is_empty: true },
  ];

  it.each(filters)('filters %j as the oracle does', async (filter) => {
    const table = await loadTableMeta(h.db.pool, baseId, tableId);
    const expected = records.filter((record) => matchesFilter(record, filter, table)).map((r) => r.id);
    const got = (await list(tableId, { filter })).map((record) => record.id);
    expect(got.sort()).toEqual(expected.sort());
  });

  it('filters the instants as dates, and names in the words of the text filters', async () => {
    const [first, , third] = records;
    // Answered instants are cut to milliseconds: c's is at or after its own creation.
    const before = await list(tableId, { filter: { field: 'Created', less_than: third!.createdAt } });
    expect(before.map((record) => record.fields.Name)).toEqual(['a2', 'b']);
    const day = first!.createdAt.slice(0, 10);
    expect(await list(tableId, { filter: { field: 'Created', equals: day } })).toHaveLength(3);
    const modified = await list(tableId, {
      filter: { field: 'Modified', greater_than_or_equal_to: third!.createdAt },
    });
    expect(modified.map((record) => record.fields.Name).sort()).toEqual(['a2', 'c']);
    const refused = await h.api
      .post(url(`/tables/${tableId}/records/list`))
      .set('Authorization', root)
      .send({ filter: { field: 'No', contains: 'x' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain(
      'operator "contains" is not supported for autonumber field "No"',
    );
  });

  it.each<Sort[]>([
    [{ field: 'No', direction: 'desc' }],
    [{ field: 'Modified', direction: 'desc' }],
    [
      { field: 'Editor', direction: 'asc' },
      { field: 'Created', direction: 'desc' },
    ],
    [{ field: 'Creator', direction: 'desc' }],
  ])('sorts by %j as the oracle does', async (...sort) => {
    const table = await loadTableMeta(h.db.pool, baseId, tableId);
    const expected = [...records].sort((a, b) => compareForSort(a, b, sort, table)).map((r) => r.id);
    const got = (await list(tableId, { sort })).map((record) => record.id);
    expect(got).toEqual(expected);
  });
});

describe('writes', () => {
  let tableId: string;
  let recordId: string;

  beforeAll(async () => {
    const table = await newTable('Locked', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'No', type: 'autonumber' },
      { name: 'Creator', type: 'created_by' },
    ]);
    tableId = table.id;
    recordId = (await create(tableId, { Name: 'x' })).id;
  });

  it.each<[string, object]>([
    ['create', { method: 'post', path: '', body: { record: { Name: 'y', No: 7 } } }],
    ['update', { method: 'patch', path: '/RECORD', body: { record: { No: 7 } } }],
    [
      'bulk create',
      { method: 'post', path: '/bulk', body: { records: [{ Name: 'y' }, { Name: 'z', No: 7 }] } },
    ],
    [
      'bulk update',
      { method: 'patch', path: '/bulk', body: { records: [{ id: 'RECORD', fields: { No: 7 } }] } },
    ],
    ['a typecast create', { method: 'post', path: '', body: { record: { No: '7' }, typecast: true } }],
  ])('refuses a value for a computed field on %s, naming it', async (_, request) => {
    const { method, path, body } = request as { method: 'post' | 'patch'; path: string; body: object };
    const text = JSON.stringify(body).replace('RECORD', recordId);
    const res = await h.api[method](url(`/tables/${tableId}/records${path.replace('RECORD', recordId)}`))
      .set('Authorization', root)
      .send(JSON.parse(text));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(
      'field "No" is a autonumber field, which the service computes: it cannot be written',
    );
    expect((await list(tableId)).length).toBe(1);
  });

  it('refuses a computed field in matchOn', async () => {
    const fields = (await h.api.get(url(`/tables/${tableId}`)).set('Authorization', root)).body
      .fields as FieldBody[];
    const creator = fields.find((field) => field.name === 'Creator')!;
    const res = await h.api
      .post(url(`/tables/${tableId}/records/bulk`))
      .set('Authorization', root)
      .send({ matchOn: [creator.id], records: [{ Name: 'y' }] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(
      'body.matchOn[0]: field "Creator" is a created_by field, which the service computes: it cannot be written, so it cannot be matched on',
    );
  });
});

describe('type changes', () => {
  it('keeps the values of a computed field that becomes a written one, and refuses the reverse', async () => {
    const table = await newTable('Converted', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'No', type: 'autonumber' },
      { name: 'Created', type: 'created_time' },
      { name: 'Creator', type: 'created_by' },
      { name: 'Count', type: 'number' },
    ]);
    const record = await create(table.id, { Name: 'a' });
    const change = (field: string, type: string) =>
      h.api
        .patch(url(`/tables/${table.id}/fields/${field}`))
        .set('Authorization', root)
        .send({ type });
    expect((await change('No', 'number')).status).toBe(200);
    expect((await change('Created', 'datetime')).status).toBe(200);
    expect((await change('Creator', 'single_line_text')).status).toBe(200);
    const [after] = await list(table.id);
    expect(after!.fields).toMatchObject({ No: 1, Created: record.createdAt, Creator: 'root' });
    // Written now, as the types they became.
    expect((await update(table.id, record.id, { No: 10, Creator: 'someone' })).fields.No).toBe(10);

    const into = await change('Count', 'autonumber');
    expect(into.status).toBe(400);
    expect(into.body.error.message).toBe(
      'body.type: a number field cannot become autonumber, whose values the service computes; add a new autonumber field instead',
    );
  });
});

describe('imports and read-only SQL', () => {
  it('skips computed columns of an imported file and fills them as writes do', async () => {
    const table = await newTable('Imported', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'No', type: 'autonumber' },
      { name: 'Creator', type: 'created_by' },
    ]);
    await create(table.id, { Name: 'before' });
    const s3Key = await f.upload(
      'rows.csv',
      'Name,No,Creator\nAda,99,someone\nGrace,98,other\n',
      'text/csv',
      writer.id,
    );
    const started = await h.api
      .post(url('/imports'))
      .set('Authorization', writer.auth)
      .send({ s3Key, tableId: table.id });
    expect(started.status).toBe(202);
    const status = await f.finished(baseId, started.body.id);
    expect(status).toMatchObject({ status: 'succeeded', rowsImported: 2, skippedColumns: ['No', 'Creator'] });
    const rows = await list(table.id);
    expect(rows.map((record) => [record.fields.Name, record.fields.No, record.fields.Creator])).toEqual([
      ['before', 1, ROOT_AUTHOR],
      ['Ada', 2, { id: writer.id, name: writer.name }],
      ['Grace', 3, { id: writer.id, name: writer.name }],
    ]);
  });

  it('shows them in the views of read-only SQL and in sql/schema', async () => {
    const schema = await h.api.get(url('/sql/schema')).set('Authorization', root).expect(200);
    const tasks = schema.body.tables.find((table: { name: string }) => table.name === 'Tasks');
    const columns = Object.fromEntries(
      tasks.columns.map((column: { name: string; fieldType: string; sqlType: string }) => [
        column.name,
        [column.fieldType, column.sqlType],
      ]),
    );
    expect(columns).toMatchObject({
      No: ['autonumber', 'bigint'],
      Created: ['created_time', 'timestamp with time zone'],
      Modified: ['last_modified_time', 'timestamp with time zone'],
      Creator: ['created_by', 'jsonb'],
      Editor: ['last_modified_by', 'jsonb'],
    });
    const record = await create('Tasks', { Title: 'SQL' }, writer.auth);
    const res = await h.api
      .post(url('/sql'))
      .set('Authorization', root)
      .send({
        query: `SELECT "No", "Created" = "createdAt" AS same, "Creator" ->> 'name' AS creator FROM "Tasks" WHERE id = $1`,
        params: [record.id],
      });
    expect(res.status).toBe(200);
    expect(res.body.rows).toEqual([[record.fields.No, true, 'Writer bot']]);
  });
});
