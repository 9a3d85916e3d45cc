import { createBase, type Harness, lastOutboxSeq, startHarness } from './harness';

/**
 * A table's record trash: deleted records listed most recently deleted first, with who deleted them
 * and when; restored all or none, exactly as they were (ids, createdAt, values) with their links to
 * and from records that still exist, announced as record.created with source "restore".
 */

let h: Harness;
let root: string;
let baseId: string;
const url = (table: string, path = '') => `/api/v1/bases/${baseId}/tables/${table}${path}`;

interface ApiRecord {
  id: string;
  createdAt: string;
  fields: Record<string, unknown>;
}

async function create(table: string, records: Record<string, unknown>[]): Promise<ApiRecord[]> {
  const response = await h.api
    .post(url(table, '/records/bulk'))
    .set('Authorization', root)
    .send({ records })
    .expect(201);
  return response.body.records;
}
const read = async (table: string, id: string): Promise<ApiRecord> =>
  (
    await h.api
      .get(url(table, `/records/${id}`))
      .set('Authorization', root)
      .expect(200)
  ).body;
const remove = (table: string, ids: string[]) =>
  h.api.post(url(table, '/records/bulk-delete')).set('Authorization', root).send({ ids }).expect(200);
const restore = (table: string, ids: string[]) =>
  h.api.post(url(table, '/trash/restore')).set('Authorization', root).send({ ids });

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Trash',
    tables: [
      { name: 'Projects', fields: [{ name: 'Name', type: 'single_line_text' }] },
      {
        name: 'Tasks',
        fields: [
          { name: 'Title', type: 'single_line_text' },
          { name: 'Hours', type: 'number', template: { decimalPlaces: 1 } },
          { name: 'Done', type: 'checkbox' },
          { name: 'Tags', type: 'multiple_select', template: { options: [{ name: 'a' }, { name: 'b' }] } },
          { name: 'Due', type: 'datetime' },
          { name: 'Project', type: 'linked_record', template: { tableId: 'Projects' } },
        ],
      },
    ],
  });
  baseId = base.body.id;
  // The projects count and look up their tasks through a link of their own.
  await h.api
    .post(url('Projects', '/fields'))
    .set('Authorization', root)
    .send({ name: 'Tasks', type: 'linked_record', template: { tableId: 'Tasks' } })
    .expect(201);
  await h.api
    .post(url('Projects', '/fields'))
    .set('Authorization', root)
    .send({ name: 'Task count', type: 'count', template: { linkFieldId: 'Tasks' } })
    .expect(201);
  await h.api
    .post(url('Tasks', '/fields'))
    .set('Authorization', root)
    .send({ name: 'Project name', type: 'lookup', template: { linkFieldId: 'Project', fieldId: 'Name' } })
    .expect(201);
});
afterAll(() => h.close());

describe('the record trash', () => {
  it('gives a deleted record back exactly: id, createdAt, values, and its links both ways', async () => {
    const [alpha, beta] = await create('Projects', [{ Name: 'Alpha' }, { Name: 'Beta' }]);
    const [task] = await create('Tasks', [
      {
        Title: 'Write',
        Hours: 2.5,
        Done: true,
        Tags: ['b', 'a'],
        Due: '2026-03-01T10:00:00.000Z',
        Project: [alpha!.id, beta!.id],
      },
    ]);
    await h.api
      .patch(url('Projects', `/records/${alpha!.id}`))
      .set('Authorization', root)
      .send({ record: { Tasks: [task!.id] } })
      .expect(200);
    const before = await read('Tasks', task!.id);
    expect(before.fields['Project name']).toEqual(['Alpha', 'Beta']);
    expect((await read('Projects', alpha!.id)).fields['Task count']).toBe(1);

    await remove('Tasks', [task!.id]);
    await h.api
      .get(url('Tasks', `/records/${task!.id}`))
      .set('Authorization', root)
      .expect(404);
    expect((await read('Projects', alpha!.id)).fields['Task count']).toBe(0);

    const seq = await lastOutboxSeq(h.db);
    const restored = await restore('Tasks', [task!.id]).expect(200);
    expect(restored.body.records).toEqual([before]);
    expect(await read('Tasks', task!.id)).toEqual(before);
    // The link another record had to it is back, and what it counts with it.
    const project = await read('Projects', alpha!.id);
    expect(project.fields.Tasks).toEqual([task!.id]);
    expect(project.fields['Task count']).toBe(1);

    const events = await h.db.pool.query<{ type: string; source: string; data: { recordIds: string[] } }>(
      'SELECT type, source, data FROM outbox_events WHERE seq > $1 ORDER BY seq',
      [seq],
    );
    expect(events.rows.filter((event) => event.source === 'restore')).toEqual([
      expect.objectContaining({
        type: 'record.created',
        data: expect.objectContaining({ recordIds: [task!.id] }),
      }),
    ]);
    const history = await h.api.get(url('Tasks', `/records/${task!.id}/history`)).set('Authorization', root);
    expect(history.body.revisions.map((revision: { action: string }) => revision.action)).toEqual([
      'restored',
      'deleted',
      'created',
    ]);
    // Restored once: it has left the trash.
    await restore('Tasks', [task!.id]).expect(404);
  });

  it('lists deleted records most recently deleted first, with who deleted them, in pages', async () => {
    const key = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', root)
      .send({ name: 'Cleaner', scopes: ['records:read', 'records:write'] })
      .expect(201);
    const cleaner = h.bearer(key.body.key);
    const [first, second, third] = await create('Projects', [{ Name: 'p1' }, { Name: 'p2' }, { Name: 'p3' }]);
    await remove('Projects', [first!.id]);
    await h.api
      .post(url('Projects', '/records/bulk-delete'))
      .set('Authorization', cleaner)
      .send({ ids: [second!.id, third!.id] })
      .expect(200);

    const listed: { record: ApiRecord; deletedAt: string; deletedBy: { id: string; name: string } }[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.api
        .get(url('Projects', `/trash?limit=2${cursor ? `&cursor=${cursor}` : ''}`))
        .set('Authorization', root)
        .expect(200);
      listed.push(...page.body.records);
      cursor = page.body.nextCursor;
    } while (cursor);
    const ours = listed.filter((entry) => [first!.id, second!.id, third!.id].includes(entry.record.id));
    expect(ours.map((entry) => [entry.record.fields.Name, entry.deletedBy.name])).toEqual([
      ['p3', 'Cleaner'],
      ['p2', 'Cleaner'],
      ['p1', 'root'],
    ]);
    expect(ours[0]!.record).toEqual(expect.objectContaining({ id: third!.id, createdAt: third!.createdAt }));
    expect(Date.parse(ours[0]!.deletedAt)).toBeGreaterThanOrEqual(Date.parse(ours[2]!.deletedAt));
  });

  it('restores all or nothing: one id not in the trash restores none and names it', async () => {
    const [kept, gone] = await create('Tasks', [{ Title: 'kept' }, { Title: 'gone' }]);
    await remove('Tasks', [gone!.id]);
    const unknown = '018f0000-0000-7000-8000-00000000abcd';
    for (const ids of [
      [gone!.id, unknown],
      [gone!.id, kept!.id],
    ]) {
      const refused = await restore('Tasks', ids).expect(404);
      expect(refused.body.error.message).toContain(ids[1]);
      await h.api
        .get(url('Tasks', `/records/${gone!.id}`))
        .set('Authorization', root)
        .expect(404);
    }
    await restore('Tasks', [gone!.id]).expect(200);
  });

  it('restores a record without its link to a record deleted meanwhile', async () => {
    const [stays, leaves] = await create('Projects', [{ Name: 'Stays' }, { Name: 'Leaves' }]);
    const [task] = await create('Tasks', [{ Title: 'linked', Project: [leaves!.id, stays!.id] }]);
    await remove('Tasks', [task!.id]);
    await remove('Projects', [leaves!.id]);
    const restored = await restore('Tasks', [task!.id]).expect(200);
    expect(restored.body.records[0].fields.Project).toEqual([stays!.id]);
    expect(restored.body.records[0].fields['Project name']).toEqual(['Stays']);
  });

  it('restores records deleted before a field was added, which takes its default', async () => {
    const [task] = await create('Tasks', [{ Title: 'old' }]);
    await remove('Tasks', [task!.id]);
    await h.api
      .post(url('Tasks', '/fields'))
      .set('Authorization', root)
      .send({ name: 'Later', type: 'single_line_text' })
      .expect(201);
    const restored = await restore('Tasks', [task!.id]).expect(200);
    expect(restored.body.records[0].fields).toEqual(expect.objectContaining({ Title: 'old', Later: null }));
  });

  it('refuses, restoring nothing, records whose values a field retyped since cannot hold', async () => {
    const [words, number] = await create('Projects', [{ Name: 'not a number' }, { Name: '12' }]);
    await h.api
      .post(url('Projects', '/fields'))
      .set('Authorization', root)
      .send({ name: 'Code', type: 'single_line_text' })
      .expect(201);
    await h.api
      .patch(url('Projects', `/records/${words!.id}`))
      .set('Authorization', root)
      .send({ record: { Code: 'abc' } })
      .expect(200);
    await remove('Projects', [words!.id, number!.id]);
    await h.api
      .patch(url('Projects', '/fields/Code'))
      .set('Authorization', root)
      .send({ type: 'number' })
      .expect(200);
    const refused = await restore('Projects', [number!.id, words!.id]).expect(400);
    expect(refused.body.error.message).toMatch(/changed type/);
    await h.api
      .get(url('Projects', `/records/${number!.id}`))
      .set('Authorization', root)
      .expect(404);
  });

  it('keeps records deleted with suppressWebhooks too', async () => {
    const [task] = await create('Tasks', [{ Title: 'quiet' }]);
    await h.api
      .post(url('Tasks', '/records/bulk-delete'))
      .set('Authorization', root)
      .send({ ids: [task!.id], suppressWebhooks: true })
      .expect(200);
    await restore('Tasks', [task!.id]).expect(200);
  });

  it('refuses bodies that are not 1 to 100 record ids, and keys without the scope', async () => {
    for (const body of [
      {},
      { ids: [] },
      { ids: ['nope'] },
      { ids: Array.from({ length: 101 }, () => crypto.randomUUID()) },
    ]) {
      const refused = await h.api
        .post(url('Tasks', '/trash/restore'))
        .set('Authorization', root)
        .send(body)
        .expect(400);
      expect(refused.body.error.message).toMatch(/ids/);
    }
    const reader = await h.api
      .post('/api/v1/api-keys')
      .set('Authorization', root)
      .send({ name: 'Reader', scopes: ['records:read'] })
      .expect(201);
    const auth = h.bearer(reader.body.key);
    await h.api.get(url('Tasks', '/trash')).set('Authorization', auth).expect(200);
    await h.api
      .post(url('Tasks', '/trash/restore'))
      .set('Authorization', auth)
      .send({ ids: [crypto.randomUUID()] })
      .expect(403);
  });
});
