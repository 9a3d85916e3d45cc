import { sqlViewSchemaName } from '@recordbase/db/physical';
import {
  columnsOf,
  createBase,
  databaseSnapshot,
  type Harness,
  lastOutboxSeq,
  purgeSchemaTrashOf,
  schemaNameOf,
  startHarness,
} from './harness';

/**
 * The database trash: a deleted field or table listed with who deleted it and when, its data kept
 * out of every read and write, and brought back all or none exactly as it was (values, links to
 * records that still exist, computed fields computed again) with field.created / table.created;
 * refusals that say what stands in the way; the purge after the retention.
 */

let h: Harness;
let root: string;

interface ApiRecord {
  id: string;
  createdAt: string;
  fields: Record<string, unknown>;
}
interface ApiField {
  id: string;
  name: string;
  type: string;
}

const tableUrl = (baseId: string, table: string, path = '') =>
  `/api/v1/bases/${baseId}/tables/${encodeURIComponent(table)}${path}`;

async function newBase(body: object): Promise<string> {
  return (await createBase(h, body)).body.id;
}
async function addField(baseId: string, table: string, field: object): Promise<ApiField> {
  const response = await h.api
    .post(tableUrl(baseId, table, '/fields'))
    .set('Authorization', root)
    .send(field);
  expect([response.status, response.body.error]).toEqual([201, undefined]);
  return response.body;
}
async function create(
  baseId: string,
  table: string,
  records: Record<string, unknown>[],
): Promise<ApiRecord[]> {
  const response = await h.api
    .post(tableUrl(baseId, table, '/records/bulk'))
    .set('Authorization', root)
    .send({ records });
  expect([response.status, response.body.error]).toEqual([201, undefined]);
  return response.body.records;
}
async function list(baseId: string, table: string): Promise<ApiRecord[]> {
  const response = await h.api
    .post(tableUrl(baseId, table, '/records/list'))
    .set('Authorization', root)
    .send({ limit: 100 });
  expect([response.status, response.body.error]).toEqual([200, undefined]);
  return response.body.records;
}
async function fieldsOf(baseId: string, table: string): Promise<ApiField[]> {
  return (await h.api.get(tableUrl(baseId, table)).set('Authorization', root).expect(200)).body.fields;
}
const deleteField = (baseId: string, table: string, field: string) =>
  h.api
    .delete(tableUrl(baseId, table, `/fields/${field}`))
    .set('Authorization', root)
    .expect(200);
const deleteTable = (baseId: string, table: string) =>
  h.api.delete(tableUrl(baseId, table)).set('Authorization', root).expect(200);
const trash = (baseId: string) => h.api.get(`/api/v1/bases/${baseId}/trash`).set('Authorization', root);
const restore = (baseId: string, body: object) =>
  h.api.post(`/api/v1/bases/${baseId}/trash/restore`).set('Authorization', root).send(body);

async function eventsSince(seq: string) {
  const { rows } = await h.db.pool.query<{ type: string; data: { table?: ApiField; field?: ApiField } }>(
    'SELECT type, data FROM outbox_events WHERE seq > $1 ORDER BY seq',
    [seq],
  );
  return rows.map((row) => {
    const { id, name } = (row.data.table ?? row.data.field)!;
    return { type: row.type, id, name };
  });
}
/** A record as its fields read by name (`data` holds the same by id). */
const byName = ({ id, createdAt, fields }: ApiRecord) => ({ id, createdAt, fields });

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
});
afterAll(() => h.close());

describe('a deleted field', () => {
  const file = (name: string) => ({
    url: `https://cdn.example.com/${name}.pdf`,
    fileName: `${name}.pdf`,
    size: 10,
    mimeType: 'application/pdf',
  });
  // Per written type: its template and a value.
  const written: [string, object, unknown][] = [
    ['single_line_text', {}, 'one'],
    ['long_text', {}, 'line one\nline two'],
    ['email', {}, 'a@example.com'],
    ['url', {}, 'https://example.com/a'],
    ['phone_number', {}, '+1 555 0100'],
    ['number', { decimalPlaces: 2 }, 1.25],
    ['currency', {}, 10.5],
    ['percent', {}, 0.25],
    ['rating', { max: 5 }, 2],
    ['duration', {}, 90],
    ['date', {}, '2026-01-31'],
    ['datetime', {}, '2026-01-31T10:15:00.000Z'],
    ['single_select', { options: [{ name: 'A' }, { name: 'B' }] }, 'B'],
    ['multiple_select', { options: [{ name: 'x' }, { name: 'y' }] }, ['y', 'x']],
    ['checkbox', {}, true],
    ['attachments', {}, [file('b'), file('a')]],
  ];

  it('of every type comes back with its values, links to records still there, and computed fields computed again', async () => {
    const baseId = await newBase({
      name: 'Field trash',
      tables: [
        {
          name: 'Targets',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'Score', type: 'number' },
          ],
        },
        {
          name: 'Things',
          fields: [
            { name: 'Title', type: 'single_line_text' },
            ...written.map(([type, template]) => ({ name: `F ${type}`, type, template })),
            { name: 'F linked_record', type: 'linked_record', template: { tableId: 'Targets' } },
            { name: 'F autonumber', type: 'autonumber' },
            { name: 'F created_time', type: 'created_time' },
            { name: 'F last_modified_time', type: 'last_modified_time' },
          ],
        },
      ],
    });
    const derived = [
      { name: 'F formula', type: 'formula', template: { expression: '{F number} * 2' } },
      { name: 'F lookup', type: 'lookup', template: { linkFieldId: 'F linked_record', fieldId: 'Name' } },
      {
        name: 'F rollup',
        type: 'rollup',
        template: { linkFieldId: 'F linked_record', fieldId: 'Score', function: 'sum' },
      },
      { name: 'F count', type: 'count', template: { linkFieldId: 'F linked_record' } },
    ];
    for (const field of derived) await addField(baseId, 'Things', field);
    const [kept, gone] = await create(baseId, 'Targets', [
      { Name: 'kept', Score: 2 },
      { Name: 'gone', Score: 3 },
    ]);
    const values = Object.fromEntries(written.map(([type, , value]) => [`F ${type}`, value]));
    await create(baseId, 'Things', [
      { Title: 'both', ...values, 'F linked_record': [gone!.id, kept!.id] },
      { Title: 'one', 'F linked_record': [gone!.id] },
      { Title: 'none' },
    ]);
    const before = await list(baseId, 'Things');
    expect(before[0]!.fields).toMatchObject({
      'F formula': 2.5,
      'F lookup': ['gone', 'kept'],
      'F rollup': 5,
      'F count': 2,
      'F autonumber': 1,
    });
    const fields = await fieldsOf(baseId, 'Things');
    const thingsId = (await h.api.get(tableUrl(baseId, 'Things')).set('Authorization', root)).body.id;
    const title = fields.find((field) => field.name === 'Title')!;
    // What reads a field goes first: the derived fields, then the rest.
    const order = [
      ...fields.filter((field) => derived.some((d) => d.name === field.name)),
      ...fields.filter((field) => field.id !== title.id && !derived.some((d) => d.name === field.name)),
    ];
    for (const field of order) await deleteField(baseId, 'Things', field.id);

    // Out of every read: the table, its records, its read-only SQL view.
    expect((await fieldsOf(baseId, 'Things')).map((field) => field.name)).toEqual(['Title']);
    expect((await list(baseId, 'Things')).map((record) => Object.keys(record.fields))).toEqual([
      ['Title'],
      ['Title'],
      ['Title'],
    ]);
    await h.api.get(`/api/v1/bases/${baseId}/sql/schema`).set('Authorization', root).expect(200);
    expect(Object.keys(await columnsOf(h.db, sqlViewSchemaName(baseId), 'Things')).sort()).toEqual([
      'Title',
      'createdAt',
      'id',
      'updatedAt',
    ]);
    // Listed, newest first, with who deleted them.
    const listed = await trash(baseId).expect(200);
    expect(listed.body.tables).toEqual([]);
    expect(listed.body.fields.map((field: ApiField) => field.name)).toEqual(
      order.map((f) => f.name).reverse(),
    );
    expect(listed.body.fields[0]).toMatchObject({
      tableId: thingsId,
      deletedBy: { id: expect.any(String), name: expect.any(String) },
      deletedAt: expect.any(String),
    });

    // Meanwhile: a record created, a linked record deleted (its links go with it).
    const [added] = await create(baseId, 'Things', [{ Title: 'added while deleted' }]);
    await h.api
      .delete(tableUrl(baseId, 'Targets', `/records/${gone!.id}`))
      .set('Authorization', root)
      .expect(200);

    const seq = await lastOutboxSeq(h.db);
    // Asked for in the order they were deleted: the restore brings what they read back first.
    const restored = await restore(baseId, { fieldIds: order.map((field) => field.id) });
    expect([restored.status, restored.body.error]).toEqual([200, undefined]);
    expect(restored.body.tables).toEqual([]);
    expect(restored.body.fields.map((field: ApiField) => field.id).sort()).toEqual(
      order.map((field) => field.id).sort(),
    );
    expect(await fieldsOf(baseId, 'Things')).toEqual(fields);
    expect((await eventsSince(seq)).map((event) => event.type)).toEqual(order.map(() => 'field.created'));

    const after = await list(baseId, 'Things');
    const relinked = (record: ApiRecord, links: string[], names: string[], sum: number) => ({
      ...byName(record),
      fields: {
        ...record.fields,
        'F linked_record': links,
        'F lookup': names,
        'F rollup': sum,
        'F count': links.length,
      },
    });
    expect(after.slice(0, 3).map(byName)).toEqual([
      relinked(before[0]!, [kept!.id], ['kept'], 2),
      relinked(before[1]!, [], [], 0),
      byName(before[2]!),
    ]);
    // A record created meanwhile has what a new record would: the next number, the defaults.
    expect(after[3]!.id).toBe(added!.id);
    expect(after[3]!.fields).toMatchObject({
      Title: 'added while deleted',
      'F autonumber': 4,
      'F checkbox': false,
      'F created_time': added!.createdAt,
      'F count': 0,
      'F rollup': 0,
    });
    expect((await trash(baseId).expect(200)).body.fields).toEqual([]);
    // Out of the trash: a second restore finds nothing.
    await restore(baseId, { fieldIds: [order[0]!.id] }).expect(404);
  });

  it('is not counted against the field limit, and refused back into a full table', async () => {
    const baseId = await newBase({
      name: 'Full',
      tables: [
        {
          name: 'Wide',
          fields: Array.from({ length: 500 }, (_, i) => ({ name: `C${i}`, type: 'number' })),
        },
      ],
    });
    const victim = (await fieldsOf(baseId, 'Wide')).at(-1)!;
    await deleteField(baseId, 'Wide', victim.id);
    await addField(baseId, 'Wide', { name: 'Replacement', type: 'number' });
    const snapshot = await databaseSnapshot(h.db);
    const refused = await restore(baseId, { fieldIds: [victim.id] }).expect(400);
    expect(refused.body.error.message).toContain('holds 500 fields');
    expect(await databaseSnapshot(h.db)).toEqual(snapshot);
  });
});

describe('a deleted table', () => {
  it('comes back with its records, its links both ways, and its record trash', async () => {
    const baseId = await newBase({
      name: 'Table trash',
      tables: [
        { name: 'Companies', fields: [{ name: 'Name', type: 'single_line_text' }] },
        {
          name: 'People',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'Age', type: 'number' },
            { name: 'Company', type: 'linked_record', template: { tableId: 'Companies' } },
          ],
        },
        { name: 'Notes', fields: [{ name: 'Text', type: 'single_line_text' }] },
      ],
    });
    await addField(baseId, 'People', {
      name: 'Company name',
      type: 'lookup',
      template: { linkFieldId: 'Company', fieldId: 'Name' },
    });
    await addField(baseId, 'Notes', {
      name: 'Person',
      type: 'linked_record',
      template: { tableId: 'People' },
    });
    const [acme, globex] = await create(baseId, 'Companies', [{ Name: 'Acme' }, { Name: 'Globex' }]);
    const [ada, bob] = await create(baseId, 'People', [
      { Name: 'Ada', Age: 36, Company: [acme!.id, globex!.id] },
      { Name: 'Bob', Age: 41, Company: [globex!.id] },
    ]);
    await create(baseId, 'Notes', [{ Text: 'call', Person: [bob!.id, ada!.id] }]);
    const table = (await h.api.get(tableUrl(baseId, 'People')).set('Authorization', root).expect(200)).body;
    const notesFields = await fieldsOf(baseId, 'Notes');
    // Bob goes to People's record trash first.
    await h.api
      .delete(tableUrl(baseId, 'People', `/records/${bob!.id}`))
      .set('Authorization', root)
      .expect(200);
    const people = await list(baseId, 'People');

    await deleteTable(baseId, 'People');
    await h.api.get(tableUrl(baseId, 'People')).set('Authorization', root).expect(404);
    expect((await fieldsOf(baseId, 'Notes')).map((field) => field.name)).toEqual(['Text']);
    const listed = await trash(baseId).expect(200);
    expect(listed.body.fields).toEqual([]);
    expect(listed.body.tables).toEqual([
      {
        ...table,
        updatedAt: expect.any(String),
        deletedAt: expect.any(String),
        deletedBy: expect.any(Object),
      },
    ]);
    // Meanwhile Acme is deleted: Ada's link to it does not come back, and her lookup says so.
    await h.api
      .delete(tableUrl(baseId, 'Companies', `/records/${acme!.id}`))
      .set('Authorization', root)
      .expect(200);

    const seq = await lastOutboxSeq(h.db);
    const restored = await restore(baseId, { tableIds: [table.id] });
    expect([restored.status, restored.body.error]).toEqual([200, undefined]);
    expect(restored.body.tables).toEqual([{ ...table, updatedAt: expect.any(String) }]);
    expect(restored.body.fields).toEqual([notesFields.find((field) => field.name === 'Person')]);
    expect(await eventsSince(seq)).toEqual([
      { type: 'table.created', id: table.id, name: 'People' },
      { type: 'field.created', id: notesFields[1]!.id, name: 'Person' },
    ]);
    expect(await fieldsOf(baseId, 'Notes')).toEqual(notesFields);
    expect((await list(baseId, 'People')).map(byName)).toEqual([
      {
        ...byName(people[0]!),
        fields: { ...people[0]!.fields, Company: [globex!.id], 'Company name': ['Globex'] },
      },
    ]);
    // Ada's note still names her; Bob, in the record trash, comes back from there with his links.
    expect((await list(baseId, 'Notes'))[0]!.fields.Person).toEqual([ada!.id]);
    await h.api
      .post(tableUrl(baseId, 'People', '/trash/restore'))
      .set('Authorization', root)
      .send({ ids: [bob!.id] })
      .expect(200);
    expect(
      (await list(baseId, 'People')).map((record) => [record.fields.Name, record.fields.Company]),
    ).toEqual([
      ['Ada', [globex!.id]],
      ['Bob', [globex!.id]],
    ]);
    // The note's link to him is back, after the links it holds now (as for any restored record).
    expect((await list(baseId, 'Notes'))[0]!.fields.Person).toEqual([ada!.id, bob!.id]);
  });
});

describe('a restore', () => {
  it('is all or nothing: one id not in the trash, and nothing comes back', async () => {
    const baseId = await newBase({
      name: 'All or nothing',
      tables: [
        {
          name: 'T',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'A', type: 'number' },
          ],
        },
      ],
    });
    const a = (await fieldsOf(baseId, 'T'))[1]!;
    await deleteField(baseId, 'T', a.id);
    const snapshot = await databaseSnapshot(h.db);
    const refused = await restore(baseId, { fieldIds: [a.id, 'fld00000000000000'] }).expect(404);
    expect(refused.body.error.message).toBe(
      'The field fld00000000000000 is not in the trash of this database; nothing was restored',
    );
    expect(await databaseSnapshot(h.db)).toEqual(snapshot);
    // A table id is not a field's.
    await restore(baseId, { tableIds: [a.id] }).expect(400);
    await restore(baseId, {}).expect(400);
    await restore(baseId, { fieldIds: [a.id] }).expect(200);
  });

  it('says what stands in the way: a name taken, a table in the trash, what it reads gone', async () => {
    const baseId = await newBase({
      name: 'In the way',
      tables: [
        {
          name: 'T',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'N', type: 'number' },
            { name: 'Other', type: 'single_line_text' },
          ],
        },
        { name: 'Linked', fields: [{ name: 'Name', type: 'single_line_text' }] },
        {
          name: 'Linking',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'To', type: 'linked_record', template: { tableId: 'Linked' } },
          ],
        },
      ],
    });
    const [, n, other] = await fieldsOf(baseId, 'T');
    const formula = await addField(baseId, 'T', {
      name: 'Double',
      type: 'formula',
      template: { expression: '{N} * 2' },
    });
    await create(baseId, 'T', [{ Name: 'r', N: 21 }]);

    // A name taken since.
    await deleteField(baseId, 'T', other!.id);
    await addField(baseId, 'T', { name: 'other', type: 'number' });
    const snapshot = await databaseSnapshot(h.db);
    const taken = await restore(baseId, { fieldIds: [other!.id] }).expect(400);
    expect(taken.body.error.message).toContain('a field named "other" exists in table "T"');
    expect(taken.body.error.message).toContain('fieldIds[0]');
    expect(await databaseSnapshot(h.db)).toEqual(snapshot);

    // What a formula reads deleted after it: back only together.
    await deleteField(baseId, 'T', formula.id);
    await deleteField(baseId, 'T', n!.id);
    const reads = await restore(baseId, { fieldIds: [formula.id] }).expect(400);
    expect(reads.body.error.message).toContain(
      'field "Double" reads a field that was deleted or changed since',
    );
    await restore(baseId, { fieldIds: [formula.id, n!.id] }).expect(200);
    expect((await list(baseId, 'T'))[0]!.fields).toMatchObject({ N: 21, Double: 42 });

    // A table linking to a table deleted after it: back only together.
    const linking = (await h.api.get(tableUrl(baseId, 'Linking')).set('Authorization', root)).body;
    const linked = (await h.api.get(tableUrl(baseId, 'Linked')).set('Authorization', root)).body;
    await deleteTable(baseId, 'Linking');
    await deleteTable(baseId, 'Linked');
    const alone = await restore(baseId, { tableIds: [linking.id] }).expect(400);
    expect(alone.body.error.message).toContain(
      `link field "To" links to table ${linked.id}, which is in the trash`,
    );
    // A field of a table in the trash: back with its table.
    const restoredBoth = await restore(baseId, { tableIds: [linking.id, linked.id] });
    expect([restoredBoth.status, restoredBoth.body.error]).toEqual([200, undefined]);
    expect(restoredBoth.body.tables.map((t: { name: string }) => t.name)).toEqual(['Linking', 'Linked']);

    // A table's name taken since.
    await deleteTable(baseId, 'Linked');
    await h.api
      .post(`/api/v1/bases/${baseId}/tables`)
      .set('Authorization', root)
      .send({ name: 'LINKED', fields: [{ name: 'Name', type: 'single_line_text' }] })
      .expect(201);
    const tableTaken = await restore(baseId, { tableIds: [linked.id] }).expect(400);
    expect(tableTaken.body.error.message).toContain('a table named "LINKED" exists in the database');
  });

  it('of a field whose table is in the trash waits for the table', async () => {
    const baseId = await newBase({
      name: 'Field of a deleted table',
      tables: [
        {
          name: 'T',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'Size', type: 'number' },
          ],
        },
      ],
    });
    await create(baseId, 'T', [{ Name: 'a', Size: 7 }]);
    const table = (await h.api.get(tableUrl(baseId, 'T')).set('Authorization', root)).body;
    const size = table.fields[1];
    await deleteField(baseId, 'T', size.id);
    await deleteTable(baseId, 'T');
    const listed = (await trash(baseId).expect(200)).body;
    expect([listed.tables.length, listed.fields.map((f: ApiField) => f.name)]).toEqual([1, ['Size']]);
    const waiting = await restore(baseId, { fieldIds: [size.id] }).expect(400);
    expect(waiting.body.error.message).toContain(`belongs to table ${table.id}, which is in the trash`);
    await restore(baseId, { tableIds: [table.id], fieldIds: [size.id] }).expect(200);
    expect((await list(baseId, 'T'))[0]!.fields).toEqual({ Name: 'a', Size: 7 });
  });
});

describe('the purge', () => {
  it('drops what the trash kept once past the retention, and waits for busy tables', async () => {
    const baseId = await newBase({
      name: 'Purge',
      tables: [
        { name: 'Kept', fields: [{ name: 'Name', type: 'single_line_text' }] },
        {
          name: 'Other',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'Note', type: 'long_text' },
          ],
        },
        {
          name: 'Gone',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'To', type: 'linked_record', template: { tableId: 'Kept' } },
          ],
        },
      ],
    });
    const size = await addField(baseId, 'Kept', { name: 'Size', type: 'number' });
    const gone = (await h.api.get(tableUrl(baseId, 'Gone')).set('Authorization', root)).body;
    const [k] = await create(baseId, 'Kept', [{ Name: 'k', Size: 1 }]);
    const [g] = await create(baseId, 'Gone', [{ Name: 'g', To: [k!.id] }]);
    await h.api
      .delete(tableUrl(baseId, 'Gone', `/records/${g!.id}`))
      .set('Authorization', root)
      .expect(200);
    await deleteField(baseId, 'Kept', size.id);
    await deleteTable(baseId, 'Gone');
    const note = (await fieldsOf(baseId, 'Other'))[1]!;
    await deleteField(baseId, 'Other', note.id);
    const schemaName = schemaNameOf(baseId);
    const keptId = (await h.api.get(tableUrl(baseId, 'Kept')).set('Authorization', root)).body.id;

    // A reader holding the table: the purge of its column does not queue behind it, nor writers behind itself.
    const reader = await h.db.pool.connect();
    try {
      await reader.query('BEGIN');
      await reader.query(`LOCK TABLE "${schemaName}"."${keptId}" IN ACCESS SHARE MODE`);
      // The lock is held until after these checks: a purge that waited for it would never return.
      const purgedWhileBusy = await purgeSchemaTrashOf(h.db, baseId);
      // Both entries touching the held table wait; the one after them goes.
      expect(purgedWhileBusy).toBe(1);
      expect((await trash(baseId).expect(200)).body.fields.map((f: ApiField) => f.name)).toEqual(['Size']);
    } finally {
      await reader.query('ROLLBACK');
      reader.release();
    }
    expect(await purgeSchemaTrashOf(h.db, baseId)).toBe(2);
    expect((await trash(baseId).expect(200)).body).toEqual({ tables: [], fields: [] });
    expect((await columnsOf(h.db, schemaName, keptId))[size.id]).toBeUndefined();
    expect(await columnsOf(h.db, schemaName, gone.id)).toEqual({});
    const linkField = gone.fields.find((field: ApiField) => field.name === 'To');
    expect(await columnsOf(h.db, schemaName, `${linkField.id}_links`)).toEqual({});
    const trashed = await h.db.pool.query('SELECT 1 FROM record_trash WHERE table_id = $1', [gone.id]);
    expect(trashed.rowCount).toBe(0);
    await restore(baseId, { tableIds: [gone.id] }).expect(404);
    // The live table is whole: reads and writes as before.
    await create(baseId, 'Kept', [{ Name: 'after' }]);
    expect((await list(baseId, 'Kept')).map((record) => record.fields)).toEqual([
      { Name: 'k' },
      { Name: 'after' },
    ]);
  });
});

describe('access', () => {
  it('lists with schema:read, restores with schema:write, and hides other databases', async () => {
    const baseId = await newBase({
      name: 'Access',
      tables: [
        {
          name: 'T',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'X', type: 'number' },
          ],
        },
      ],
    });
    const other = await newBase({ name: 'Elsewhere' });
    const x = (await fieldsOf(baseId, 'T'))[1]!;
    await deleteField(baseId, 'T', x.id);
    const key = async (scopes: string[], databaseIds?: string[]) =>
      h.bearer(
        (
          await h.api
            .post('/api/v1/api-keys')
            .set('Authorization', root)
            .send({ name: scopes.join(' '), scopes, ...(databaseIds ? { databaseIds } : {}) })
            .expect(201)
        ).body.key,
      );
    const reader = await key(['schema:read']);
    const recordsOnly = await key(['records:read', 'records:write']);
    const elsewhere = await key(['schema:read', 'schema:write'], [other]);
    const url = `/api/v1/bases/${baseId}/trash`;
    const listed = await h.api.get(url).set('Authorization', reader).expect(200);
    expect(listed.body.fields[0].deletedBy.name).toBe('root');
    await h.api
      .post(`${url}/restore`)
      .set('Authorization', reader)
      .send({ fieldIds: [x.id] })
      .expect(403);
    await h.api.get(url).set('Authorization', recordsOnly).expect(403);
    await h.api.get(url).set('Authorization', elsewhere).expect(404);
    await h.api
      .post(`${url}/restore`)
      .set('Authorization', elsewhere)
      .send({ fieldIds: [x.id] })
      .expect(404);
    expect((await trash(baseId).expect(200)).body.fields).toHaveLength(1);
  });
});
