import { createBase, type Harness, startHarness } from './harness';

/**
 * Record and table history (GET …/records/{id}/history, GET …/tables/{id}/history): each write's
 * revision with its action, key, source and the written fields' values before and after, newest
 * first, in pages bound to their history; refusals and what a key may see.
 */

let h: Harness;
let root: string;
let baseId: string;
let otherBaseId: string;
let writer: { id: string; auth: string };
let fieldIds: Record<string, string>;
const tableUrl = (path = '') => `/api/v1/bases/${baseId}/tables/Tasks${path}`;
const recordsUrl = (path = '') => tableUrl(`/records${path}`);

interface Revision {
  id: string;
  recordId: string;
  at: string;
  action: string;
  by: { id: string; name: string } | null;
  source: string;
  changes: Record<string, { before: unknown; after: unknown }>;
}

async function createKey(body: object): Promise<{ id: string; auth: string }> {
  const response = await h.api.post('/api/v1/api-keys').set('Authorization', root).send(body).expect(201);
  return { id: response.body.id, auth: h.bearer(response.body.key) };
}

async function history(
  recordId: string,
  query = '',
): Promise<{ revisions: Revision[]; nextCursor?: string }> {
  const response = await h.api
    .get(recordsUrl(`/${recordId}/history${query}`))
    .set('Authorization', root)
    .expect(200);
  return response.body;
}

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'History',
    tables: [
      {
        name: 'Tasks',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Hours', type: 'number', template: { decimalPlaces: 1 } },
          { name: 'Done', type: 'checkbox' },
          {
            name: 'Tags',
            type: 'multiple_select',
            template: { options: [{ name: 'red' }, { name: 'blue' }] },
          },
          { name: 'Due', type: 'date' },
          { name: 'Double', type: 'formula', template: { expression: '{Hours} * 2' } },
        ],
      },
      { name: 'Notes', fields: [{ name: 'Text', type: 'single_line_text' }] },
    ],
  });
  baseId = base.body.id;
  const fields = base.body.tables[0].fields as { id: string; name: string }[];
  fieldIds = Object.fromEntries(fields.map((field) => [field.name, field.id]));
  otherBaseId = (
    await createBase(h, {
      name: 'Elsewhere',
      tables: [{ name: 'T', fields: [{ name: 'N', type: 'single_line_text' }] }],
    })
  ).body.id;
  writer = await createKey({ name: 'Sync tool', scopes: ['records:read', 'records:write'] });
});
afterAll(() => h.close());

describe('a record’s history', () => {
  it('has a revision per write, newest first, with the key, the source and each written field before and after', async () => {
    const created = await h.api
      .post(recordsUrl())
      .set('Authorization', writer.auth)
      .send({ record: { Name: 'Plan', Hours: 2.5, Tags: ['red'], Due: '2026-12-01' } })
      .expect(201);
    const id: string = created.body.id;
    await h.api
      .patch(recordsUrl(`/${id}`))
      .set('Authorization', writer.auth)
      .send({ record: { Hours: 4, Done: true, Tags: ['red', 'blue'] } })
      .expect(200);
    await h.api
      .patch(recordsUrl('/bulk'))
      .set('Authorization', root)
      .send({ records: [{ id, fields: { Name: 'Plan B', Due: null } }] })
      .expect(200);

    const page = await history(id);
    expect(page.nextCursor).toBeUndefined();
    expect(page.revisions.map((revision) => revision.action)).toEqual(['updated', 'updated', 'created']);
    const [second, first, creation] = page.revisions as [Revision, Revision, Revision];
    expect(creation).toEqual({
      id: expect.stringMatching(/^\d+-1$/),
      recordId: id,
      at: expect.any(String),
      action: 'created',
      by: { id: writer.id, name: 'Sync tool' },
      source: 'public_api',
      // Blank fields (Done false) and the formula are not written values.
      changes: {
        [fieldIds.Name!]: { before: null, after: 'Plan' },
        [fieldIds.Hours!]: { before: null, after: 2.5 },
        [fieldIds.Tags!]: { before: null, after: ['red'] },
        [fieldIds.Due!]: { before: null, after: '2026-12-01' },
      },
    });
    expect(first.by).toEqual({ id: writer.id, name: 'Sync tool' });
    expect(first.changes).toEqual({
      [fieldIds.Hours!]: { before: 2.5, after: 4 },
      [fieldIds.Done!]: { before: false, after: true },
      [fieldIds.Tags!]: { before: ['red'], after: ['red', 'blue'] },
    });
    expect(second.by).toEqual({ id: 'root', name: expect.any(String) });
    expect(second.changes).toEqual({
      [fieldIds.Name!]: { before: 'Plan', after: 'Plan B' },
      [fieldIds.Due!]: { before: '2026-12-01', after: null },
    });
    expect(Date.parse(second.at)).toBeGreaterThanOrEqual(Date.parse(creation.at));
  });

  it('keeps a deleted record’s history, ending in its deletion with the values it had', async () => {
    const created = await h.api
      .post(recordsUrl('/bulk'))
      .set('Authorization', root)
      .send({ records: [{ Name: 'Gone', Hours: 1 }, { Name: 'Stays' }] })
      .expect(201);
    const id: string = created.body.records[0].id;
    await h.api
      .delete(recordsUrl(`/${id}`))
      .set('Authorization', root)
      .expect(200);
    const page = await history(id);
    expect(page.revisions.map((revision) => [revision.action, revision.changes])).toEqual([
      [
        'deleted',
        { [fieldIds.Name!]: { before: 'Gone', after: null }, [fieldIds.Hours!]: { before: 1, after: null } },
      ],
      [
        'created',
        { [fieldIds.Name!]: { before: null, after: 'Gone' }, [fieldIds.Hours!]: { before: null, after: 1 } },
      ],
    ]);
  });

  it('records an upsert’s update of a matched record and its creation of a new one', async () => {
    const body = {
      records: [{ Name: 'Upserted', Hours: 1 }],
      matchOn: [fieldIds.Name],
    };
    const first = await h.api.post(recordsUrl('/bulk')).set('Authorization', root).send(body).expect(200);
    const id: string = first.body.records[0].id;
    await h.api
      .post(recordsUrl('/bulk'))
      .set('Authorization', root)
      .send({ ...body, records: [{ Name: 'Upserted', Hours: 3 }] })
      .expect(200);
    const page = await history(id);
    expect(page.revisions.map((revision) => [revision.action, revision.changes])).toEqual([
      ['updated', { [fieldIds.Hours!]: { before: 1, after: 3 } }],
      [
        'created',
        {
          [fieldIds.Name!]: { before: null, after: 'Upserted' },
          [fieldIds.Hours!]: { before: null, after: 1 },
        },
      ],
    ]);
  });

  it('has the writes that asked webhooks not to hear of them', async () => {
    const created = await h.api
      .post(recordsUrl('/bulk'))
      .set('Authorization', root)
      .send({ records: [{ Name: 'Quiet' }], suppressWebhooks: true })
      .expect(201);
    const id: string = created.body.records[0].id;
    await h.api
      .patch(recordsUrl(`/${id}`))
      .set('Authorization', root)
      .send({ record: { Name: 'Still quiet' }, suppressWebhooks: true })
      .expect(200);
    await h.api
      .delete(recordsUrl(`/${id}?suppressWebhooks=true`))
      .set('Authorization', root)
      .expect(200);
    const page = await history(id);
    expect(page.revisions.map((revision) => [revision.action, revision.changes[fieldIds.Name!]])).toEqual([
      ['deleted', { before: 'Still quiet', after: null }],
      ['updated', { before: 'Quiet', after: 'Still quiet' }],
      ['created', { before: null, after: 'Quiet' }],
    ]);
  });

  it('pages with a cursor bound to the record', async () => {
    const created = await h.api
      .post(recordsUrl())
      .set('Authorization', root)
      .send({ record: { Hours: 0 } })
      .expect(201);
    const id: string = created.body.id;
    for (let hours = 1; hours <= 4; hours++) {
      await h.api
        .patch(recordsUrl(`/${id}`))
        .set('Authorization', root)
        .send({ record: { Hours: hours } })
        .expect(200);
    }
    const seen: unknown[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await history(id, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.revisions.map((revision) => revision.changes[fieldIds.Hours!]?.after));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([4, 3, 2, 1, 0]);

    const other = await h.api
      .post(recordsUrl())
      .set('Authorization', root)
      .send({ record: { Hours: 9 } })
      .expect(201);
    const firstPage = await history(id, '?limit=1');
    const refused = await h.api
      .get(recordsUrl(`/${other.body.id}/history?cursor=${firstPage.nextCursor}`))
      .set('Authorization', root)
      .expect(400);
    expect(refused.body.error.message).toMatch(/cursor/);
  });

  it('leaves computed values that moved with a write out, and writes no revision for them', async () => {
    const created = await h.api
      .post(recordsUrl())
      .set('Authorization', root)
      .send({ record: { Hours: 1 } })
      .expect(201);
    await h.api
      .patch(recordsUrl(`/${created.body.id}`))
      .set('Authorization', root)
      .send({ record: { Hours: 5 } });
    const [update] = (await history(created.body.id)).revisions as [Revision];
    expect(Object.keys(update.changes)).toEqual([fieldIds.Hours]);
  });

  it('answers 404 for a record that never existed and for one in a database the key cannot reach', async () => {
    await h.api
      .get(recordsUrl('/018f0000-0000-7000-8000-000000000000/history'))
      .set('Authorization', root)
      .expect(404);
    await h.api.get(recordsUrl('/not-an-id/history')).set('Authorization', root).expect(404);
    const created = await h.api
      .post(recordsUrl())
      .set('Authorization', root)
      .send({ record: { Name: 'x' } })
      .expect(201);
    const elsewhere = await createKey({
      name: 'Elsewhere',
      scopes: ['records:read'],
      databaseIds: [otherBaseId],
    });
    await h.api
      .get(recordsUrl(`/${created.body.id}/history`))
      .set('Authorization', elsewhere.auth)
      .expect(404);
    await h.api.get(tableUrl('/history')).set('Authorization', elsewhere.auth).expect(404);
    const writeOnly = await createKey({ name: 'Write only', scopes: ['records:write'] });
    await h.api
      .get(recordsUrl(`/${created.body.id}/history`))
      .set('Authorization', writeOnly.auth)
      .expect(403);
  });
});

describe('every field type', () => {
  const file = (name: string) => ({
    url: `https://cdn.example.com/${name}.pdf`,
    fileName: `${name}.pdf`,
    size: 10,
    mimeType: 'application/pdf',
  });
  // Per type: the field, a first value and a second one, as written and as answered.
  const cases: [string, object, unknown, unknown][] = [
    ['single_line_text', {}, 'one', 'two'],
    ['long_text', {}, 'line one\nline two', 'é 🙂'],
    ['email', {}, 'a@example.com', 'b@example.org'],
    ['url', {}, 'https://example.com/a', 'https://example.org/b?c=d'],
    ['phone_number', {}, '+1 555 0100', '+44 20 7946 0000'],
    ['number', { decimalPlaces: 2 }, 1.25, -7.5],
    ['currency', {}, 10.5, 99.99],
    ['percent', {}, 0.25, 0.75],
    ['rating', { max: 5 }, 2, 5],
    ['duration', {}, 90, 3600],
    ['date', {}, '2026-01-31', '2026-02-28'],
    ['datetime', {}, '2026-01-31T10:15:00.000Z', '2026-03-01T23:59:59.000Z'],
    ['single_select', { options: [{ name: 'A' }, { name: 'B' }] }, 'A', 'B'],
    ['multiple_select', { options: [{ name: 'x' }, { name: 'y' }] }, ['x'], ['y', 'x']],
    ['checkbox', {}, true, false],
    ['attachments', {}, [file('a')], [file('b'), file('a')]],
  ];

  it('shows each type’s values before and after as the API answers them, through create, update and delete', async () => {
    const base = await createBase(h, {
      name: 'Every type',
      tables: [
        { name: 'Targets', fields: [{ name: 'Name', type: 'single_line_text' }] },
        {
          name: 'Things',
          fields: [
            { name: 'Title', type: 'single_line_text' },
            ...cases.map(([type, template]) => ({ name: `F ${type}`, type, template })),
            { name: 'F linked_record', type: 'linked_record', template: { tableId: 'Targets' } },
          ],
        },
      ],
    });
    const things = base.body.tables.find((table: { name: string }) => table.name === 'Things');
    const idOf = (name: string): string =>
      things.fields.find((field: { name: string }) => field.name === name).id;
    const url = (table: string, path = '') => `/api/v1/bases/${base.body.id}/tables/${table}/records${path}`;
    const targets = await h.api
      .post(url('Targets', '/bulk'))
      .set('Authorization', root)
      .send({ records: [{ Name: 't1' }, { Name: 't2' }] })
      .expect(201);
    const [t1, t2] = targets.body.records.map((record: { id: string }) => record.id);
    const first = Object.fromEntries([
      ...cases.map(([type, , value]) => [`F ${type}`, value]),
      ['F linked_record', [t1]],
    ]);
    const second = Object.fromEntries([
      ...cases.map(([type, , , value]) => [`F ${type}`, value]),
      ['F linked_record', [t2, t1]],
    ]);
    const created = await h.api
      .post(url('Things'))
      .set('Authorization', root)
      .send({ record: first })
      .expect(201);
    const id: string = created.body.id;
    const updated = await h.api
      .patch(url('Things', `/${id}`))
      .set('Authorization', root)
      .send({ record: second })
      .expect(200);
    await h.api
      .delete(url('Things', `/${id}`))
      .set('Authorization', root)
      .expect(200);

    // The answers' own renderings, without the links an answer signs afresh.
    const rendered = (fields: Record<string, unknown>, name: string) => {
      const value = fields[name];
      return Array.isArray(value)
        ? value.map((item) => (item && typeof item === 'object' ? { ...item, signedUrl: undefined } : item))
        : value;
    };
    const page = await h.api
      .get(url('Things', `/${id}/history`))
      .set('Authorization', root)
      .expect(200);
    const [deletion, update, creation] = page.body.revisions as [Revision, Revision, Revision];
    for (const name of [...cases.map(([type]) => `F ${type}`), 'F linked_record']) {
      const fieldId = idOf(name);
      const before = rendered(created.body.fields, name);
      const after = rendered(updated.body.fields, name);
      expect({ name, change: creation.changes[fieldId] }).toEqual({
        name,
        change: before === false ? undefined : { before: null, after: before },
      });
      expect({ name, change: update.changes[fieldId] }).toEqual({ name, change: { before, after } });
      expect({ name, change: deletion.changes[fieldId] }).toEqual({
        name,
        change: after === false ? undefined : { before: after, after: null },
      });
    }
  });
});

describe('restoring a record to a revision', () => {
  it('writes the record’s fields back to their values after it, as a revision of its own', async () => {
    const created = await h.api
      .post(recordsUrl())
      .set('Authorization', root)
      .send({ record: { Name: 'First', Hours: 1, Tags: ['red'], Due: '2026-01-01' } })
      .expect(201);
    const id: string = created.body.id;
    await h.api
      .patch(recordsUrl(`/${id}`))
      .set('Authorization', root)
      .send({ record: { Name: 'Second', Hours: 8, Tags: [], Done: true } })
      .expect(200);
    const [, creation] = (await history(id)).revisions as [Revision, Revision];

    const restored = await h.api
      .post(recordsUrl(`/${id}/history/${creation.id}/restore`))
      .set('Authorization', writer.auth)
      .expect(200);
    expect(restored.body.fields).toEqual(
      expect.objectContaining({ Name: 'First', Hours: 1, Tags: ['red'], Due: '2026-01-01', Double: 2 }),
    );
    expect(restored.body.fields.Done ?? false).toBe(false);
    const [latest] = (await history(id)).revisions as [Revision];
    expect(latest).toEqual(
      expect.objectContaining({
        action: 'restored',
        source: 'restore',
        by: { id: writer.id, name: 'Sync tool' },
        changes: {
          [fieldIds.Name!]: { before: 'Second', after: 'First' },
          [fieldIds.Hours!]: { before: 8, after: 1 },
          [fieldIds.Done!]: { before: true, after: false },
          [fieldIds.Tags!]: { before: [], after: ['red'] },
        },
      }),
    );
  });

  it('refuses a deletion, and answers 404 for a revision of another record or none', async () => {
    const created = await h.api
      .post(recordsUrl('/bulk'))
      .set('Authorization', root)
      .send({ records: [{ Name: 'x' }, { Name: 'y' }] });
    const [x, y] = created.body.records as { id: string }[];
    const [xCreation] = (await history(x!.id)).revisions as [Revision];
    await h.api
      .post(recordsUrl(`/${y!.id}/history/${xCreation.id}/restore`))
      .set('Authorization', root)
      .expect(404);
    await h.api
      .post(recordsUrl(`/${x!.id}/history/99999999-1/restore`))
      .set('Authorization', root)
      .expect(404);
    await h.api
      .post(recordsUrl(`/${x!.id}/history/latest/restore`))
      .set('Authorization', root)
      .expect(404);
    await h.api
      .delete(recordsUrl(`/${x!.id}`))
      .set('Authorization', root)
      .expect(200);
    const [deletion] = (await history(x!.id)).revisions as [Revision];
    const refused = await h.api
      .post(recordsUrl(`/${x!.id}/history/${deletion.id}/restore`))
      .set('Authorization', root)
      .expect(400);
    expect(refused.body.error.message).toMatch(/trash/);
    // A deleted record comes back from the trash, not from a revision.
    await h.api
      .post(recordsUrl(`/${x!.id}/history/${xCreation.id}/restore`))
      .set('Authorization', root)
      .expect(404);
    const reader = await createKey({ name: 'Reader', scopes: ['records:read'] });
    await h.api
      .post(recordsUrl(`/${y!.id}/history/1-1/restore`))
      .set('Authorization', reader.auth)
      .expect(403);
  });
});

describe('dependency refreshes', () => {
  it('give the records whose counts and lookups moved no revision of their own', async () => {
    const base = await createBase(h, {
      name: 'History links',
      tables: [
        { name: 'Projects', fields: [{ name: 'Name', type: 'single_line_text' }] },
        {
          name: 'Tasks',
          fields: [
            { name: 'Title', type: 'single_line_text' },
            { name: 'Project', type: 'linked_record', template: { tableId: 'Projects' } },
          ],
        },
      ],
    });
    await h.api
      .post(`/api/v1/bases/${base.body.id}/tables/Tasks/fields`)
      .set('Authorization', root)
      .send({ name: 'Project names', type: 'lookup', template: { linkFieldId: 'Project', fieldId: 'Name' } })
      .expect(201);
    const url = (table: string, path = '') => `/api/v1/bases/${base.body.id}/tables/${table}/records${path}`;
    const project = await h.api
      .post(url('Projects'))
      .set('Authorization', root)
      .send({ record: { Name: 'Old' } });
    const task = await h.api
      .post(url('Tasks'))
      .set('Authorization', root)
      .send({ record: { Title: 't', Project: [project.body.id] } })
      .expect(201);
    await h.api
      .patch(url('Projects', `/${project.body.id}`))
      .set('Authorization', root)
      .send({ record: { Name: 'New' } })
      .expect(200);
    const read = await h.api
      .get(url('Tasks', `/${task.body.id}`))
      .set('Authorization', root)
      .expect(200);
    expect(read.body.fields['Project names']).toEqual(['New']);

    const taskHistory = await h.api.get(url('Tasks', `/${task.body.id}/history`)).set('Authorization', root);
    expect(taskHistory.body.revisions.map((revision: Revision) => revision.action)).toEqual(['created']);
    const projectHistory = await h.api
      .get(url('Projects', `/${project.body.id}/history`))
      .set('Authorization', root);
    expect(projectHistory.body.revisions.map((revision: Revision) => revision.action)).toEqual([
      'updated',
      'created',
    ]);
  });
});

describe('a table’s history', () => {
  it('lists every record’s revisions newest first, in pages that neither repeat nor skip', async () => {
    await h.api
      .post(`/api/v1/bases/${baseId}/tables/Notes/records/bulk`)
      .set('Authorization', root)
      .send({ records: [{ Text: 'a' }, { Text: 'b' }, { Text: 'c' }] })
      .expect(201);
    const listed = await h.api
      .post(`/api/v1/bases/${baseId}/tables/Notes/records/list`)
      .set('Authorization', root)
      .send({})
      .expect(200);
    const [a] = listed.body.records as { id: string }[];
    await h.api
      .patch(`/api/v1/bases/${baseId}/tables/Notes/records/${a!.id}`)
      .set('Authorization', root)
      .send({ record: { Text: 'a2' } })
      .expect(200);

    const revisions: Revision[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.api
        .get(`/api/v1/bases/${baseId}/tables/Notes/history?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
        .set('Authorization', root)
        .expect(200);
      revisions.push(...page.body.revisions);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(revisions.map((revision) => [revision.action, Object.values(revision.changes)[0]?.after])).toEqual(
      [
        ['updated', 'a2'],
        ['created', 'c'],
        ['created', 'b'],
        ['created', 'a'],
      ],
    );
    expect(new Set(revisions.map((revision) => revision.id)).size).toBe(4);
  });

  it('refuses a limit out of range and a cursor of another history', async () => {
    for (const limit of ['0', '101', 'x', '1.5']) {
      const response = await h.api
        .get(tableUrl(`/history?limit=${limit}`))
        .set('Authorization', root)
        .expect(400);
      expect(JSON.stringify(response.body)).toMatch(/limit/);
    }
    const page = await h.api.get(tableUrl('/history?limit=1')).set('Authorization', root).expect(200);
    await h.api
      .get(`/api/v1/bases/${baseId}/tables/Notes/history?cursor=${page.body.nextCursor}`)
      .set('Authorization', root)
      .expect(400);
    await h.api.get(tableUrl('/history?cursor=bm9wZQ')).set('Authorization', root).expect(400);
  });
});
