import type { TableRecord } from '@recordbase/contracts/records';
import { TransactionEvents } from '@recordbase/domain/events';
import { addSelectOptions } from '@recordbase/domain/records/select-option-additions';
import { lockExisting, lockKeys } from '@recordbase/domain/records/store';
import { loadTableMeta } from '@recordbase/domain/records/table-loader';
import { StaleTableMeta } from '@recordbase/domain/records/table-meta';
import { baseClient, type FieldBody } from './base-client';
import { createBase, type Harness, lastOutboxSeq, schemaNameOf, startHarness } from './harness';
import { type ImportFixture, importFixture } from './import-fixture';

/**
 * Count, lookup and rollup fields through the API: created over a link field, computed from the
 * linked records, current after every write that can change them (in the write's transaction),
 * announced to the records that change with a record.updated event of source "dependency", read,
 * filtered and sorted as their result type, and every refusal the contract names.
 */

let h: Harness;
let f: ImportFixture;
let root: string;
let baseId: string;

const { url, newTable, addField, create, update, list } = baseClient(
  () => h,
  () => baseId,
  () => root,
);

async function added(tableId: string, field: object): Promise<FieldBody> {
  const res = await addField(tableId, field);
  if (res.status !== 201) expect(res.body.error?.message).toBe('the field created');
  return res.body as FieldBody;
}

async function read(tableId: string, id: string): Promise<TableRecord> {
  const res = await h.api.get(url(`/tables/${tableId}/records/${id}`)).set('Authorization', root);
  expect(res.status).toBe(200);
  return res.body as TableRecord;
}

async function eventsSince(seq: string) {
  const { rows } = await h.db.pool.query<{
    type: string;
    source: string;
    table_id: string;
    data: { recordIds: string[]; records: TableRecord[]; changes?: unknown[] };
  }>('SELECT type, source, table_id, data FROM outbox_events WHERE seq > $1 ORDER BY seq', [seq]);
  return rows;
}

beforeAll(async () => {
  h = await startHarness();
  f = await importFixture(h);
  f.startWorker();
  root = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Linked values',
    tables: [{ name: 'Seed', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  expect(base.status).toBe(201);
  baseId = base.body.id;
}, 60_000);
afterAll(async () => {
  await f?.close();
  await h?.close();
});

describe('count, lookup and rollup fields over a link', () => {
  let tasks: { id: string; fields: FieldBody[] };
  let projects: { id: string; fields: FieldBody[] };
  const task: Record<string, TableRecord> = {};
  const projectFieldIds = new Map<string, string>();

  beforeAll(async () => {
    tasks = await newTable('Tasks', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Hours', type: 'number' },
      { name: 'Done', type: 'checkbox' },
      {
        name: 'Tags',
        type: 'multiple_select',
        template: { options: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] },
      },
      { name: 'Due', type: 'date' },
    ]);
    projects = await newTable('Projects', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Tasks', type: 'linked_record', template: { tableId: tasks.id } },
    ]);
    task.write = await create(tasks.id, {
      Name: 'Write',
      Hours: 3,
      Done: true,
      Tags: ['a', 'b'],
      Due: '2026-03-01',
    });
    task.test = await create(tasks.id, {
      Name: 'Test',
      Hours: 5,
      Done: false,
      Tags: ['b'],
      Due: '2026-02-01',
    });
    task.ship = await create(tasks.id, { Name: 'Ship', Hours: null, Done: false, Tags: [] });
    for (const field of [
      { name: 'Task count', type: 'count', template: { linkFieldId: 'Tasks' } },
      { name: 'Task names', type: 'lookup', template: { linkFieldId: 'Tasks', fieldId: 'Name' } },
      { name: 'Task tags', type: 'lookup', template: { linkFieldId: 'Tasks', fieldId: 'Tags' } },
      {
        name: 'Hours',
        type: 'rollup',
        template: { linkFieldId: 'Tasks', fieldId: 'Hours', function: 'sum' },
      },
      {
        name: 'Average',
        type: 'rollup',
        template: { linkFieldId: 'Tasks', fieldId: 'Hours', function: 'average' },
      },
      {
        name: 'Least',
        type: 'rollup',
        template: { linkFieldId: 'Tasks', fieldId: 'Hours', function: 'min' },
      },
      {
        name: 'First due',
        type: 'rollup',
        template: { linkFieldId: 'Tasks', fieldId: 'Due', function: 'min' },
      },
      {
        name: 'Timed',
        type: 'rollup',
        template: { linkFieldId: 'Tasks', fieldId: 'Hours', function: 'count_non_empty' },
      },
      {
        name: 'Tag kinds',
        type: 'rollup',
        template: { linkFieldId: 'Tasks', fieldId: 'Tags', function: 'count_unique' },
      },
      {
        name: 'Names',
        type: 'rollup',
        template: { linkFieldId: 'Tasks', fieldId: 'Name', function: 'array_join' },
      },
      {
        name: 'Unique tags',
        type: 'rollup',
        template: { linkFieldId: 'Tasks', fieldId: 'Tags', function: 'array_unique' },
      },
      {
        name: 'All done',
        type: 'rollup',
        template: { linkFieldId: 'Tasks', fieldId: 'Done', function: 'and' },
      },
      {
        name: 'Any done',
        type: 'rollup',
        template: { linkFieldId: 'Tasks', fieldId: 'Done', function: 'or' },
      },
      { name: 'Twice', type: 'formula', template: { expression: '{Hours} * 2' } },
      { name: 'Joined', type: 'formula', template: { expression: 'ARRAYJOIN({Task names}, "|")' } },
    ]) {
      await added(projects.id, field);
    }
    const table = await h.api.get(url(`/tables/${projects.id}`)).set('Authorization', root);
    for (const field of table.body.fields as FieldBody[]) projectFieldIds.set(field.name, field.id);
  });

  test('are Field objects with their result types and templates by id', async () => {
    const res = await h.api.get(url(`/tables/${projects.id}`)).set('Authorization', root);
    const byName = new Map((res.body.fields as FieldBody[]).map((field) => [field.name, field]));
    const linkId = byName.get('Tasks')!.id;
    const hoursId = tasks.fields.find((field) => field.name === 'Hours')!.id;
    expect(byName.get('Task count')).toMatchObject({
      resultType: 'number',
      template: { linkFieldId: linkId },
    });
    expect(byName.get('Task names')).toMatchObject({ type: 'lookup', resultType: 'array' });
    expect(byName.get('Hours')).toEqual({
      id: expect.any(String),
      name: 'Hours',
      type: 'rollup',
      resultType: 'number',
      template: { linkFieldId: linkId, fieldId: hoursId, function: 'sum' },
    });
    expect(byName.get('First due')).toMatchObject({ resultType: 'date' });
    expect(byName.get('Names')).toMatchObject({ resultType: 'text' });
    expect(byName.get('Unique tags')).toMatchObject({ resultType: 'array' });
    expect(byName.get('All done')).toMatchObject({ resultType: 'checkbox' });
  });

  test('are computed for a new record from the links it is given, and empty without', async () => {
    const project = await create(projects.id, {
      Name: 'Launch',
      Tasks: [task.write!.id, task.test!.id, task.ship!.id],
    });
    expect(project.fields).toMatchObject({
      'Task count': 3,
      'Task names': ['Write', 'Test', 'Ship'],
      'Task tags': ['a', 'b', 'b'],
      Hours: 8,
      Average: 4,
      Least: 3,
      'First due': '2026-02-01',
      Timed: 2,
      'Tag kinds': 2,
      Names: 'Write, Test, Ship',
      'Unique tags': ['a', 'b'],
      'All done': false,
      'Any done': true,
      Twice: 16,
      Joined: 'Write|Test|Ship',
    });
    const empty = await create(projects.id, { Name: 'Idle' });
    expect(empty.fields).toMatchObject({
      'Task count': 0,
      'Task names': [],
      Hours: 0,
      Timed: 0,
      'Unique tags': [],
      Twice: 0,
    });
    // The others are null over no records, and null values are left out of `fields`.
    expect(empty.data).toMatchObject({});
    for (const name of ['Average', 'Least', 'First due', 'Names', 'All done', 'Any done']) {
      const id = (await h.api.get(url(`/tables/${projects.id}`)).set('Authorization', root)).body.fields.find(
        (field: FieldBody) => field.name === name,
      ).id;
      expect([name, empty.data[id] ?? null]).toEqual([name, null]);
    }
  });

  test('follow links added, removed and reordered, on every write path', async () => {
    const project = await create(projects.id, { Name: 'Paths', Tasks: [task.ship!.id] });
    const reordered = await update(projects.id, project.id, { Tasks: [task.test!.id, task.write!.id] });
    expect(reordered.fields).toMatchObject({ 'Task names': ['Test', 'Write'], Hours: 8, 'Task count': 2 });
    // Bulk create and upsert run as one statement each.
    const bulk = await h.api
      .post(url(`/tables/${projects.id}/records/bulk`))
      .set('Authorization', root)
      .send({ records: [{ Name: 'Bulk', Tasks: [task.write!.id] }, { Name: 'Bulk 2' }] });
    expect([bulk.status, bulk.body.error?.message]).toEqual([201, undefined]);
    expect(bulk.body.records.map((record: TableRecord) => record.fields['Task names'])).toEqual([
      ['Write'],
      [],
    ]);
    const upsert = await h.api
      .post(url(`/tables/${projects.id}/records/bulk`))
      .set('Authorization', root)
      .send({
        matchOn: [projects.fields[0]!.id],
        records: [{ Name: 'Bulk', Tasks: [task.test!.id, task.ship!.id] }, { Name: 'Bulk 2' }],
      });
    expect([upsert.status, upsert.body.error?.message]).toEqual([200, undefined]);
    expect(upsert.body.records.map((record: TableRecord) => record.fields['Task count'])).toEqual([2, 0]);
    const many = await h.api
      .patch(url(`/tables/${projects.id}/records/bulk`))
      .set('Authorization', root)
      .send({ records: [{ id: project.id, fields: { Tasks: [] } }] });
    expect([many.status, many.body.error?.message]).toEqual([200, undefined]);
    expect(many.body.records[0].fields).toMatchObject({ 'Task count': 0, Hours: 0, 'Task names': [] });
    expect((await read(projects.id, project.id)).fields).toMatchObject({ 'Task count': 0 });
  });

  test("follow a linked record's change, with a dependency event for each table's records that changed", async () => {
    const a = await create(projects.id, { Name: 'Dep A', Tasks: [task.test!.id] });
    const b = await create(projects.id, { Name: 'Dep B', Tasks: [task.test!.id, task.write!.id] });
    const seq = await lastOutboxSeq(h.db);
    await update(tasks.id, task.test!.id, { Hours: 7, Name: 'Test more' });
    expect((await read(projects.id, a.id)).fields).toMatchObject({
      Hours: 7,
      'Task names': ['Test more'],
      Twice: 14,
    });
    expect((await read(projects.id, b.id)).fields).toMatchObject({ Hours: 10, Names: 'Test more, Write' });
    const events = await eventsSince(seq);
    expect(events.map((event) => [event.type, event.source, event.table_id])).toEqual([
      ['record.updated', 'public_api', tasks.id],
      ['record.updated', 'dependency', projects.id],
    ]);
    // What webhooks with fieldIds are matched against: the computed fields that changed.
    const { rows } = await h.db.pool.query<{ changed: string[] }>(
      'SELECT changed_field_ids AS changed FROM outbox_events WHERE seq > $1 AND source = $2',
      [seq, 'dependency'],
    );
    const fieldIdOf = (name: string) => projectFieldIds.get(name)!;
    // The values reading the Name and Hours written, and the formulas reading those; not the rest.
    const moved = ['Task names', 'Hours', 'Average', 'Least', 'Names', 'Twice', 'Joined'];
    expect(new Set(rows[0]!.changed)).toEqual(new Set(moved.map(fieldIdOf)));
    const dependency = events[1]!.data;
    expect(new Set(dependency.recordIds)).toEqual(
      new Set(
        (await list(projects.id, { filter: { field: 'Tasks', contains: task.test!.id } })).map(
          (record) => record.id,
        ),
      ),
    );
    const changeOfA = (
      dependency.changes as {
        recordId: string;
        changedFieldIds: string[];
        previous: Record<string, unknown>;
      }[]
    ).find((change) => change.recordId === a.id)!;
    const fieldId = (name: string) =>
      dependency.records[0]!.data &&
      Object.keys(dependency.records[0]!.data).find((id) =>
        projects.fields.some((field) => field.id === id && field.name === name),
      );
    expect(changeOfA.changedFieldIds).toEqual(moved.map(fieldIdOf));
    expect(changeOfA.previous).toEqual({
      [fieldIdOf('Task names')]: ['Test'],
      [fieldIdOf('Hours')]: 5,
      [fieldIdOf('Average')]: 5,
      [fieldIdOf('Least')]: 5,
      [fieldIdOf('Names')]: 'Test',
      [fieldIdOf('Twice')]: 10,
      [fieldIdOf('Joined')]: 'Test',
    });
    expect(dependency.records.find((record: TableRecord) => record.id === a.id)).toEqual(
      await read(projects.id, a.id),
    );
    expect(fieldId('Name')).toBeDefined();
    await update(tasks.id, task.test!.id, { Hours: 5, Name: 'Test' });
  });

  test('one write changing the rollups of many records announces them in one dependency event', async () => {
    const [x, y] = [
      await create(tasks.id, { Name: 'x', Hours: 1 }),
      await create(tasks.id, { Name: 'y', Hours: 2 }),
    ];
    const many: TableRecord[] = [];
    for (let n = 0; n < 12; n += 1) {
      many.push(
        await create(projects.id, {
          Name: `Many ${n}`,
          Tasks: n % 3 === 0 ? [x.id, y.id] : [n % 2 ? x.id : y.id],
        }),
      );
    }
    const seq = await lastOutboxSeq(h.db);
    const res = await h.api
      .patch(url(`/tables/${tasks.id}/records/bulk`))
      .set('Authorization', root)
      .send({
        records: [
          { id: x.id, fields: { Hours: 10 } },
          { id: y.id, fields: { Hours: 20 } },
        ],
      });
    expect(res.status).toBe(200);
    const events = await eventsSince(seq);
    expect(events.map((event) => [event.source, event.table_id])).toEqual([
      ['public_api', tasks.id],
      ['dependency', projects.id],
    ]);
    expect([...events[1]!.data.recordIds].sort()).toEqual(many.map((record) => record.id).sort());
    const hours = new Map(events[1]!.data.records.map((record) => [record.id, record.fields.Hours]));
    many.forEach((record, n) => {
      expect(hours.get(record.id)).toBe(n % 3 === 0 ? 30 : n % 2 ? 10 : 20);
    });
    // In id order, records and changes beside their ids; each record as a read renders it, its
    // links (two of them, in link order, for every third) included.
    const { recordIds, records, changes } = events[1]!.data;
    expect(recordIds).toEqual([...recordIds].sort());
    expect(records.map((record) => record.id)).toEqual(recordIds);
    expect((changes as { recordId: string }[]).map((change) => change.recordId)).toEqual(recordIds);
    for (const record of records) expect(record).toEqual(await read(projects.id, record.id));
    expect(records.find((record) => record.id === many[0]!.id)?.fields.Tasks).toEqual([x.id, y.id]);
  });

  test('a record linked by more records than a request holds announces them in batches of 100', async () => {
    const popular = await create(tasks.id, { Name: 'Popular', Hours: 1 });
    const bulk = async (from: number) =>
      h.api
        .post(url(`/tables/${projects.id}/records/bulk`))
        .set('Authorization', root)
        .send({
          records: Array.from({ length: 100 }, (_, n) => ({ Name: `Fan ${from + n}`, Tasks: [popular.id] })),
        })
        .expect(201);
    for (const from of [0, 100, 200]) await bulk(from);
    const seq = await lastOutboxSeq(h.db);
    await update(tasks.id, popular.id, { Hours: 2 });
    const dependency = (await eventsSince(seq)).filter((event) => event.source === 'dependency');
    expect(dependency.map((event) => event.data.recordIds.length)).toEqual([100, 100, 100]);
    expect(new Set(dependency.flatMap((event) => event.data.recordIds)).size).toBe(300);
    const fans = await list(projects.id, { filter: { field: 'Task names', contains: 'Popular' }, limit: 1 });
    expect(fans[0]!.fields.Hours).toBe(2);
  });

  test('read a linked record that another transaction is changing only once it commits', async () => {
    const racing = await create(tasks.id, { Name: 'Racing', Hours: 1 });
    const hoursColumn = tasks.fields.find((field) => field.name === 'Hours')!.id;
    // Another writer holds the linked record changed but not yet committed, as an update of it does
    // between its statement and its refresh of the records linking to it.
    const other = await h.db.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(
        `UPDATE "${schemaNameOf(baseId)}"."${tasks.id}" SET "${hoursColumn}" = 42 WHERE id = $1`,
        [racing.id],
      );
      let answered = false;
      const linking = create(projects.id, { Name: 'Race', Tasks: [racing.id] }).then((record) => {
        answered = true;
        return record;
      });
      await new Promise((done) => setTimeout(done, 300));
      // The write linking it waits: computed now, its rollup would hold 1 for good.
      expect(answered).toBe(false);
      await other.query('COMMIT');
      expect((await linking).fields.Hours).toBe(42);
    } finally {
      other.release();
    }
  });

  test('writes at once to two records the same records link to all succeed, and the last one counts', async () => {
    const [left, right] = [
      await create(tasks.id, { Name: 'Left', Hours: 0 }),
      await create(tasks.id, { Name: 'Right', Hours: 0 }),
    ];
    const both = await h.api
      .post(url(`/tables/${projects.id}/records/bulk`))
      .set('Authorization', root)
      .send({
        records: Array.from({ length: 40 }, (_, n) => ({
          Name: `Both ${n}`,
          Tasks: n % 2 ? [left.id, right.id] : [right.id, left.id],
        })),
      });
    expect(both.status).toBe(201);
    // Each write refreshes the same 40 records while the other holds its own linked record changed.
    // Were a refresh to wait on the other's linked record, each would wait for the other: a
    // deadlock PostgreSQL breaks by failing one of them.
    for (let round = 1; round <= 6; round += 1) {
      const answers = await Promise.all([
        h.api
          .patch(url(`/tables/${tasks.id}/records/${left.id}`))
          .set('Authorization', root)
          .send({ record: { Hours: round } }),
        h.api
          .patch(url(`/tables/${tasks.id}/records/${right.id}`))
          .set('Authorization', root)
          .send({ record: { Hours: 100 * round } }),
      ]);
      expect(answers.map((res) => [res.status, res.body.error?.message])).toEqual([
        [200, undefined],
        [200, undefined],
      ]);
    }
    const records = await list(projects.id, {
      filter: { field: 'Name', starts_with: 'Both ' },
      fields: ['Hours'],
    });
    expect(records.map((record) => record.fields.Hours)).toEqual(Array(40).fill(606));
  });

  test('relinking records while a record they link to changes: all succeed, and the values hold both', async () => {
    const [kept, added] = [
      await create(tasks.id, { Name: 'Kept', Hours: 0 }),
      await create(tasks.id, { Name: 'Added', Hours: 1000 }),
    ];
    const relinked = [];
    for (let n = 0; n < 6; n += 1)
      relinked.push(await create(projects.id, { Name: `Relinked ${n}`, Tasks: [kept.id] }));
    // The update of Kept refreshes the projects linking it while each project's write reads Kept
    // for its new links: were either to hold what the other waits for, PostgreSQL would fail one.
    for (let round = 1; round <= 4; round += 1) {
      const answers = await Promise.all([
        h.api
          .patch(url(`/tables/${tasks.id}/records/${kept.id}`))
          .set('Authorization', root)
          .send({ record: { Hours: round } }),
        ...relinked.map((project, n) =>
          h.api
            .patch(url(`/tables/${projects.id}/records/${project.id}`))
            .set('Authorization', root)
            .send({ record: { Tasks: (n + round) % 2 ? [kept.id, added.id] : [added.id, kept.id] } }),
        ),
      ]);
      expect(answers.map((res) => res.status)).toEqual(Array(relinked.length + 1).fill(200));
    }
    for (const project of relinked) expect((await read(projects.id, project.id)).fields.Hours).toBe(1004);
  });

  test('a write with metadata older than a lookup of its table is refused, to run again', async () => {
    // As a process whose cache the schema change's notification has not reached yet would hold it.
    const cached = await loadTableMeta(h.db.pool, baseId, tasks.id);
    await added(projects.id, {
      name: 'Later lookup',
      type: 'lookup',
      template: { linkFieldId: 'Tasks', fieldId: 'Done' },
    });
    const client = await h.db.pool.connect();
    try {
      await expect(lockExisting(client, cached, [task.write!.id])).rejects.toBeInstanceOf(StaleTableMeta);
      await expect(lockKeys(client, cached, ['k'])).rejects.toBeInstanceOf(StaleTableMeta);
      const fresh = await loadTableMeta(h.db.pool, baseId, tasks.id);
      expect(fresh.linkedReaders).toContainEqual({ tableId: projects.id, fieldId: expect.any(String) });
      expect(await lockExisting(client, fresh, [task.write!.id])).toEqual(new Set([task.write!.id]));
    } finally {
      client.release();
    }
  });

  test('a typecast write after a lookup of its table came learns of it in its transaction', async () => {
    const colours = await newTable('Colours', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Kind', type: 'single_select', template: { options: [{ name: 'warm' }] } },
    ]);
    const palettes = await newTable('Palettes', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Colours', type: 'linked_record', template: { tableId: colours.id } },
    ]);
    const cached = await loadTableMeta(h.db.pool, baseId, colours.id);
    expect(cached.linkedReaders).toBeUndefined();
    await added(palettes.id, {
      name: 'Kinds',
      type: 'lookup',
      template: { linkFieldId: 'Colours', fieldId: 'Kind' },
    });
    const client = await h.db.pool.connect();
    try {
      await client.query('BEGIN');
      const current = await addSelectOptions(
        client,
        new TransactionEvents(client),
        cached,
        new Map([[colours.fields[1]!.id, ['cold']]]),
      );
      expect(current.linkedReaders).toEqual([{ tableId: palettes.id, fieldId: colours.fields[1]!.id }]);
      // With it, the write's own checks agree with the version it holds.
      expect(await lockExisting(client, current, [])).toEqual(new Set());
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  test("follow a linked record's deletion", async () => {
    const doomed = await create(tasks.id, { Name: 'Doomed', Hours: 100 });
    const project = await create(projects.id, { Name: 'Loses one', Tasks: [task.write!.id, doomed.id] });
    expect(project.fields).toMatchObject({ Hours: 103, 'Task count': 2 });
    const seq = await lastOutboxSeq(h.db);
    const res = await h.api
      .delete(url(`/tables/${tasks.id}/records/${doomed.id}`))
      .set('Authorization', root);
    expect(res.status).toBe(200);
    expect((await read(projects.id, project.id)).fields).toMatchObject({
      Hours: 3,
      'Task count': 1,
      'Task names': ['Write'],
    });
    expect((await eventsSince(seq)).map((event) => [event.type, event.source])).toEqual([
      ['record.deleted', 'public_api'],
      ['record.updated', 'dependency'],
    ]);
  });

  test('are computed for imported records of either table', async () => {
    const key = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', root)
      .send({ name: 'Importer', scopes: ['records:read', 'records:write', 'schema:read'] })
      .expect(201);
    const run = async (table: string, csv: string) => {
      const s3Key = await f.upload('rows.csv', csv, 'text/csv', key.body.id);
      const started = await h.api
        .post(url('/imports'))
        .set('Authorization', h.bearer(key.body.key))
        .send({ s3Key, tableId: table });
      expect(started.status).toBe(202);
      return f.finished(baseId, started.body.id);
    };
    // Links are not imported: a project arrives with none, and its values are those of no records.
    expect(await run(projects.id, 'Name,Hours\nImported,99\n')).toMatchObject({
      status: 'succeeded',
      rowsImported: 1,
      skippedColumns: ['Hours'],
    });
    const [imported] = await list(projects.id, { filter: { field: 'Name', equals: 'Imported' } });
    expect(imported!.fields).toMatchObject({ 'Task count': 0, Hours: 0, 'Task names': [], Twice: 0 });
    // New tasks are linked by nobody yet; linking one reads its imported values.
    expect(await run(tasks.id, 'Name,Hours\nImported task,6\n')).toMatchObject({ status: 'succeeded' });
    const [importedTask] = await list(tasks.id, { filter: { field: 'Name', equals: 'Imported task' } });
    const linked = await update(projects.id, imported!.id, { Tasks: [importedTask!.id] });
    expect(linked.fields).toMatchObject({ 'Task count': 1, Hours: 6, 'Task names': ['Imported task'] });
  });

  test('filter and sort as their result type', async () => {
    const records = await list(projects.id, {
      filter: { field: 'Hours', greater_than: 7 },
      sort: [
        { field: 'Hours', direction: 'desc' },
        { field: 'Name', direction: 'asc' },
      ],
    });
    expect(records.length).toBeGreaterThan(0);
    const hours = records.map((record) => record.fields.Hours as number);
    expect(hours.every((value) => value > 7)).toBe(true);
    expect([...hours].sort((x, y) => y - x)).toEqual(hours);
    const tagged = await list(projects.id, { filter: { field: 'Task names', contains: 'Ship' } });
    expect(tagged.every((record) => (record.fields['Task names'] as string[]).includes('Ship'))).toBe(true);
    expect(tagged.length).toBeGreaterThan(0);
  });

  test('show in read-only SQL views, in the schema, and in aggregations', async () => {
    const sql = await h.api.post(url('/sql')).set('Authorization', root).send({
      query: `SELECT "Task count", "Task names", "Hours", "All done" FROM "Projects" WHERE "Name" = 'Launch'`,
    });
    expect([sql.status, sql.body.error?.message]).toEqual([200, undefined]);
    expect(sql.body.rows).toEqual([[3, ['Write', 'Test', 'Ship'], 8, false]]);
    const schema = await h.api.get(url('/sql/schema')).set('Authorization', root);
    const columns = schema.body.tables.find((table: { name: string }) => table.name === 'Projects').columns;
    expect(columns.find((column: { name: string }) => column.name === 'Task names')).toMatchObject({
      fieldType: 'lookup',
    });
    const grouped = await h.api
      .post(url(`/tables/${projects.id}/records/aggregate`))
      .set('Authorization', root)
      .send({ groupBy: ['Task count'], aggregations: [{ fn: 'count' }, { field: 'Hours', fn: 'sum' }] });
    expect([grouped.status, grouped.body.error?.message]).toEqual([200, undefined]);
    const three = grouped.body.groups.find(
      (group: { key: Record<string, unknown> }) => group.key['Task count'] === 3,
    );
    expect(three.values[1]).toBeGreaterThanOrEqual(8);
  });

  test('are refused in a record body and as matchOn', async () => {
    const res = await h.api
      .post(url(`/tables/${projects.id}/records`))
      .set('Authorization', root)
      .send({ record: { Name: 'x', Hours: 3 } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('Hours');
  });

  test('refuse templates that name no link, no field, or a function the values do not take', async () => {
    const cases: [object, string][] = [
      [{ type: 'count', template: { linkFieldId: 'Nope' } }, 'no field "Nope"'],
      [{ type: 'count', template: { linkFieldId: 'Name' } }, 'reads a linked_record field'],
      [
        { type: 'lookup', template: { linkFieldId: 'Tasks', fieldId: 'Nope' } },
        'no field "Nope" in the linked table',
      ],
      [
        { type: 'rollup', template: { linkFieldId: 'Tasks', fieldId: 'Name', function: 'sum' } },
        'sum needs numbers',
      ],
      [
        { type: 'rollup', template: { linkFieldId: 'Tasks', fieldId: 'Name', function: 'median' } },
        'must be one of',
      ],
    ];
    for (const [field, message] of cases) {
      const res = await addField(projects.id, { name: 'Bad', ...field });
      expect([res.status, res.body.error?.message]).toEqual([400, expect.stringContaining(message)]);
    }
  });

  test('keep the fields they read: deleting the link or the looked-up field is refused', async () => {
    const link = await h.api.delete(url(`/tables/${projects.id}/fields/Tasks`)).set('Authorization', root);
    expect(link.status).toBe(400);
    expect(link.body.error.message).toContain('Task count');
    const hours = await h.api.delete(url(`/tables/${tasks.id}/fields/Hours`)).set('Authorization', root);
    expect(hours.status).toBe(400);
    expect(hours.body.error.message).toContain('"Hours"');
    const table = await h.api.delete(url(`/tables/${tasks.id}`)).set('Authorization', root);
    expect(table.status).toBe(400);
  });

  test("follow the looked-up field's type conversion", async () => {
    const res = await h.api
      .patch(url(`/tables/${tasks.id}/fields/Name`))
      .set('Authorization', root)
      .send({ type: 'long_text' });
    expect(res.status).toBe(200);
    const project = await create(projects.id, { Name: 'After', Tasks: [task.write!.id] });
    expect(project.fields).toMatchObject({ 'Task names': ['Write'], Names: 'Write' });
    // Text that no longer adds up: the sum over it is refused, naming the rollups.
    const refused = await h.api
      .patch(url(`/tables/${tasks.id}/fields/Hours`))
      .set('Authorization', root)
      .send({ type: 'single_line_text' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('"Hours"');
  });
});

describe("a rollup's template changed", () => {
  test('from sum to max: the column holds nulls now, and the formula reading it follows', async () => {
    const parts = await newTable('Parts', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Weight', type: 'number' },
    ]);
    const kits = await newTable('Kits', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Parts', type: 'linked_record', template: { tableId: parts.id } },
    ]);
    await added(kits.id, {
      name: 'Weight',
      type: 'rollup',
      template: { linkFieldId: 'Parts', fieldId: 'Weight', function: 'sum' },
    });
    await added(kits.id, { name: 'Heavy', type: 'formula', template: { expression: '{Weight} > 10' } });
    const [a, b] = [
      await create(parts.id, { Name: 'a', Weight: 4 }),
      await create(parts.id, { Name: 'b', Weight: 8 }),
    ];
    const full = await create(kits.id, { Name: 'full', Parts: [a.id, b.id] });
    const empty = await create(kits.id, { Name: 'empty' });
    expect([full.fields.Weight, full.fields.Heavy, empty.fields.Weight]).toEqual([12, true, 0]);
    const res = await h.api
      .patch(url(`/tables/${kits.id}/fields/Weight`))
      .set('Authorization', root)
      .send({ template: { linkFieldId: 'Parts', fieldId: 'Weight', function: 'max' } });
    expect([res.status, res.body.error?.message]).toEqual([200, undefined]);
    expect((await read(kits.id, full.id)).fields).toMatchObject({ Weight: 8, Heavy: false });
    expect((await read(kits.id, empty.id)).fields.Weight ?? null).toBeNull();
    // To a text result, which a sum of another table reads: refused, naming it.
    const shipments = await newTable('Shipments', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Kits', type: 'linked_record', template: { tableId: kits.id } },
    ]);
    await added(shipments.id, {
      name: 'Total weight',
      type: 'rollup',
      template: { linkFieldId: 'Kits', fieldId: 'Weight', function: 'sum' },
    });
    const refused = await h.api
      .patch(url(`/tables/${kits.id}/fields/Weight`))
      .set('Authorization', root)
      .send({ template: { linkFieldId: 'Parts', fieldId: 'Name', function: 'array_join' } });
    expect([refused.status, refused.body.error?.message]).toEqual([
      400,
      expect.stringContaining('"Total weight"'),
    ]);
    expect((await read(kits.id, full.id)).fields.Weight).toBe(8);
  });
});

describe('chains of computed fields across tables', () => {
  test('a rollup of a formula of a lookup follows the record at the end of the chain, one event per table', async () => {
    const c = await newTable('Chain C', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Points', type: 'number' },
    ]);
    const b = await newTable('Chain B', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Cs', type: 'linked_record', template: { tableId: c.id } },
    ]);
    const a = await newTable('Chain A', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Bs', type: 'linked_record', template: { tableId: b.id } },
    ]);
    await added(b.id, { name: 'C names', type: 'lookup', template: { linkFieldId: 'Cs', fieldId: 'Name' } });
    await added(b.id, {
      name: 'Label',
      type: 'formula',
      template: { expression: 'ARRAYJOIN({C names}, "+")' },
    });
    await added(b.id, {
      name: 'Points',
      type: 'rollup',
      template: { linkFieldId: 'Cs', fieldId: 'Points', function: 'sum' },
    });
    await added(a.id, {
      name: 'Labels',
      type: 'rollup',
      template: { linkFieldId: 'Bs', fieldId: 'Label', function: 'array_join' },
    });
    await added(a.id, {
      name: 'Points',
      type: 'rollup',
      template: { linkFieldId: 'Bs', fieldId: 'Points', function: 'max' },
    });
    const c1 = await create(c.id, { Name: 'x', Points: 1 });
    const c2 = await create(c.id, { Name: 'y', Points: 2 });
    const b1 = await create(b.id, { Name: 'b1', Cs: [c1.id, c2.id] });
    const b2 = await create(b.id, { Name: 'b2', Cs: [c2.id] });
    const a1 = await create(a.id, { Name: 'a1', Bs: [b1.id, b2.id] });
    expect(a1.fields).toMatchObject({ Labels: 'x+y, y', Points: 3 });

    const seq = await lastOutboxSeq(h.db);
    await update(c.id, c2.id, { Name: 'z', Points: 10 });
    expect((await read(a.id, a1.id)).fields).toMatchObject({ Labels: 'x+z, z', Points: 11 });
    expect((await read(b.id, b2.id)).fields).toMatchObject({ Label: 'z', Points: 10 });
    const events = await eventsSince(seq);
    expect(events.map((event) => [event.source, event.table_id, event.data.recordIds.length])).toEqual([
      ['public_api', c.id, 1],
      ['dependency', b.id, 2],
      ['dependency', a.id, 1],
    ]);
    const [change] = events[2]!.data.changes as {
      changedFieldIds: string[];
      previous: Record<string, unknown>;
    }[];
    expect(Object.values(change!.previous).sort()).toEqual([3, 'x+y, y']);

    // A rollup may not come to read itself through a lookup of another table.
    await added(b.id, { name: 'As', type: 'linked_record', template: { tableId: a.id } });
    await added(b.id, {
      name: 'A points',
      type: 'lookup',
      template: { linkFieldId: 'As', fieldId: 'Points' },
    });
    const loop = await h.api
      .patch(url(`/tables/${a.id}/fields/Points`))
      .set('Authorization', root)
      .send({ template: { linkFieldId: 'Bs', fieldId: 'A points', function: 'max' } });
    expect([loop.status, loop.body.error?.message]).toEqual([400, expect.stringContaining('read itself')]);
  });

  test('a link to the same table: a lookup of the manager follows the manager', async () => {
    const people = await newTable('People', [{ name: 'Name', type: 'single_line_text' }]);
    const link = await added(people.id, {
      name: 'Manager',
      type: 'linked_record',
      template: { tableId: people.id },
    });
    await added(people.id, {
      name: 'Manager name',
      type: 'lookup',
      template: { linkFieldId: link.id, fieldId: 'Name' },
    });
    const boss = await create(people.id, { Name: 'Ada' });
    const report = await create(people.id, { Name: 'Bob', Manager: [boss.id] });
    expect(report.fields['Manager name']).toEqual(['Ada']);
    await update(people.id, boss.id, { Name: 'Ada L.' });
    expect((await read(people.id, report.id)).fields['Manager name']).toEqual(['Ada L.']);
    // A field no lookup reads changes no one else: no dependency event.
    await added(people.id, { name: 'Note', type: 'long_text' });
    const seq = await lastOutboxSeq(h.db);
    await update(people.id, boss.id, { Note: 'on leave' });
    expect((await eventsSince(seq)).map((event) => event.source)).toEqual(['public_api']);
    // Looking up its own lookup through the same link reads the manager's manager's name.
    const refused = await addField(people.id, {
      name: 'Loop',
      type: 'lookup',
      template: { linkFieldId: link.id, fieldId: 'Loop' },
    });
    expect(refused.status).toBe(400);
  });

  test("a select option taken out of the looked-up field's template leaves the lookups", async () => {
    const items = await newTable('Items', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Tags', type: 'multiple_select', template: { options: [{ name: 'red' }, { name: 'blue' }] } },
    ]);
    const boxes = await newTable('Boxes', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Items', type: 'linked_record', template: { tableId: items.id } },
    ]);
    await added(boxes.id, {
      name: 'Tags',
      type: 'lookup',
      template: { linkFieldId: 'Items', fieldId: 'Tags' },
    });
    const item = await create(items.id, { Name: 'i', Tags: ['red', 'blue'] });
    const box = await create(boxes.id, { Name: 'b', Items: [item.id] });
    expect(box.fields.Tags).toEqual(['red', 'blue']);
    const res = await h.api
      .patch(url(`/tables/${items.id}/fields/Tags`))
      .set('Authorization', root)
      .send({ template: { options: [{ name: 'blue' }] } });
    expect(res.status).toBe(200);
    expect((await read(boxes.id, box.id)).fields.Tags).toEqual(['blue']);
  });

  test('a lookup of single values leaves the empty ones out, in link order, and follows a retype into lists', async () => {
    const parts = await newTable('Kit parts', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Weight', type: 'number' },
      { name: 'Colour', type: 'single_line_text' },
    ]);
    const kits = await newTable('Part kits', [
      { name: 'Name', type: 'single_line_text' },
      { name: 'Parts', type: 'linked_record', template: { tableId: parts.id } },
    ]);
    for (const fieldId of ['Weight', 'Colour']) {
      await added(kits.id, {
        name: `${fieldId}s`,
        type: 'lookup',
        template: { linkFieldId: 'Parts', fieldId },
      });
    }
    const [bolt, nut, washer] = [
      await create(parts.id, { Name: 'bolt', Weight: 2.5, Colour: 'red, blue' }),
      await create(parts.id, { Name: 'nut', Weight: null, Colour: null }),
      await create(parts.id, { Name: 'washer', Weight: 0, Colour: 'blue' }),
    ];
    const kit = await create(kits.id, { Name: 'k', Parts: [washer.id, nut.id, bolt.id] });
    expect([kit.fields.Weights, kit.fields.Colours]).toEqual([
      [0, 2.5],
      ['blue', 'red, blue'],
    ]);
    // As a multiple select the same cells are lists, which the lookup takes apart into one list.
    const retyped = await h.api
      .patch(url(`/tables/${parts.id}/fields/Colour`))
      .set('Authorization', root)
      .send({ type: 'multiple_select' });
    expect([retyped.status, retyped.body.error?.message]).toEqual([200, undefined]);
    expect((await read(kits.id, kit.id)).fields.Colours).toEqual(['blue', 'red', 'blue']);
  });
});
