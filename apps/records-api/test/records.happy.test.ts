import { randomUUID } from 'node:crypto';
import { verifyFileToken } from '@recordbase/server-kit/file-tokens';
import { createBase, type Harness, schemaNameOf, startHarness } from './harness';

let h: Harness;
let auth: string;
let baseId: string;
let fieldIds: Record<string, string>;
let companyIds: string[];
let dealsTableId: string;
const url = (path = '') => `/api/v1/bases/${baseId}/tables/Deals/records${path}`;

const allTypes = [
  { name: 'Name', type: 'single_line_text' },
  { name: 'Notes', type: 'long_text' },
  { name: 'Email', type: 'email' },
  { name: 'Site', type: 'url' },
  { name: 'Phone', type: 'phone_number' },
  { name: 'Count', type: 'number' },
  { name: 'Amount', type: 'currency' },
  { name: 'Share', type: 'percent' },
  { name: 'Stars', type: 'rating' },
  { name: 'Took', type: 'duration' },
  { name: 'Due', type: 'date' },
  { name: 'At', type: 'datetime' },
  { name: 'Stage', type: 'single_select', template: { options: [{ name: 'Lead' }, { name: 'Won' }] } },
  {
    name: 'Tags',
    type: 'multiple_select',
    template: { options: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] },
  },
  { name: 'Done', type: 'checkbox' },
  { name: 'Files', type: 'attachments' },
  { name: 'Company', type: 'linked_record', template: { tableId: 'Companies' } },
];

beforeAll(async () => {
  h = await startHarness();
  auth = h.bearer(h.rootKey);
  const base = await createBase(h, {
    name: 'Sales',
    tables: [
      { name: 'Companies', fields: [{ name: 'Name', type: 'single_line_text' }] },
      { name: 'Deals', fields: allTypes },
    ],
  });
  baseId = base.body.id;
  dealsTableId = base.body.tables[1].id;
  fieldIds = Object.fromEntries(
    base.body.tables[1].fields.map((f: { name: string; id: string }) => [f.name, f.id]),
  );
  const companies = await h.api
    .post(`/api/v1/bases/${baseId}/tables/Companies/records/bulk`)
    .set('Authorization', auth)
    .send({ records: [{ Name: 'Acme' }, { Name: 'Globex' }] })
    .expect(201);
  companyIds = companies.body.records.map((r: { id: string }) => r.id);
});
afterAll(() => h.close());

const post = (path: string, body: object) => h.api.post(url(path)).set('Authorization', auth).send(body);

describe('bulk create', () => {
  it('creates records in input order with every field present, ignoring incoming ids', async () => {
    const incomingId = randomUUID();
    const response = await post('/bulk', {
      records: [
        {
          id: incomingId,
          Name: 'Big deal',
          Notes: 'line one\nline two',
          Email: 'ada@example.com',
          Site: 'https://example.com/x?y=1',
          Phone: '+1 (555) 123-4567',
          Count: 3,
          Amount: 1999.5,
          Share: 0.25,
          Stars: 4,
          Took: 90,
          Due: '2024-02-29',
          At: '2024-05-01T14:30:00+02:00',
          Stage: 'Won',
          Tags: ['b', 'a', 'b'],
          Done: true,
          Company: [companyIds[1], companyIds[0]],
        },
        { [fieldIds.Name!]: 'Small deal' },
      ],
    }).expect(201);
    expect(response.body.success).toBe(true);
    const [big, small] = response.body.records;
    expect(big.id).not.toBe(incomingId);
    expect(big.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(big.fields).toEqual({
      Name: 'Big deal',
      Notes: 'line one\nline two',
      Email: 'ada@example.com',
      Site: 'https://example.com/x?y=1',
      Phone: '+1 (555) 123-4567',
      Count: 3,
      Amount: 1999.5,
      Share: 0.25,
      Stars: 4,
      Took: 90,
      Due: '2024-02-29',
      At: '2024-05-01T12:30:00.000Z',
      Stage: 'Won',
      Tags: ['b', 'a'],
      Done: true,
      Files: [],
      Company: [companyIds[1], companyIds[0]],
    });
    expect(big.data[fieldIds.Amount!]).toBe(1999.5);
    expect(Object.keys(big.data).sort()).toEqual(Object.values(fieldIds).sort());
    expect(small.fields).toMatchObject({
      Name: 'Small deal',
      Notes: null,
      Count: null,
      Tags: [],
      Done: false,
      Files: [],
      Company: [],
    });
    expect(small.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });
});

describe('single records', () => {
  it('creates, reads, patches and deletes one record', async () => {
    const created = await post('', { record: { Name: 'One', Count: 1 } }).expect(201);
    const id = created.body.id;
    const got = await h.api
      .get(url(`/${id}`))
      .set('Authorization', auth)
      .expect(200);
    expect(got.body).toEqual(created.body);
    const patched = await h.api
      .patch(url(`/${id}`))
      .set('Authorization', auth)
      .send({ record: { Count: 2, Tags: ['c'] } })
      .expect(200);
    expect(patched.body.fields).toMatchObject({ Name: 'One', Count: 2, Tags: ['c'] });
    expect(Date.parse(patched.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.body.updatedAt));
    const deleted = await h.api
      .delete(url(`/${id}`))
      .set('Authorization', auth)
      .expect(200);
    expect(deleted.body).toEqual({ success: true, message: 'Record deleted' });
    await h.api
      .get(url(`/${id}`))
      .set('Authorization', auth)
      .expect(404);
  });

  it('answers INVALID_RECORD_ID for a malformed id and 404 for a missing one', async () => {
    const malformed = await h.api.get(url('/not-a-uuid')).set('Authorization', auth).expect(400);
    expect(malformed.body.error.code).toBe('INVALID_RECORD_ID');
    await h.api.patch(url('/123')).set('Authorization', auth).send({ record: {} }).expect(400);
    await h.api.delete(url('/123')).set('Authorization', auth).expect(400);
    const missing = await h.api
      .get(url(`/${randomUUID()}`))
      .set('Authorization', auth)
      .expect(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
  });
});

describe('upsert', () => {
  it('updates records equal on matchOn and creates the rest, answering 200 in input order', async () => {
    const plain = await post('/bulk', {
      records: [
        { Email: 'u1@example.com', Count: 1 },
        { Email: 'u2@example.com', Count: 2 },
      ],
    }).expect(201);
    expect(plain.body.createdRecordIds).toEqual(
      plain.body.records.map((record: { id: string }) => record.id),
    );
    expect(plain.body.updatedRecordIds).toEqual([]);
    const response = await post('/bulk', {
      matchOn: [fieldIds.Email],
      records: [
        { Email: 'new@example.com', Count: 30 },
        { Email: 'u2@example.com', Count: 20 },
        { Email: 'u1@example.com', Name: 'first' },
      ],
    }).expect(200);
    const [created, second, first] = response.body.records;
    // What happened to each, as Airtable answers an upsert: the ids created and those updated.
    expect(response.body.createdRecordIds).toEqual([created.id]);
    expect(response.body.updatedRecordIds).toEqual([second.id, first.id]);
    expect(created.fields).toMatchObject({ Email: 'new@example.com', Count: 30 });
    expect(second.fields).toMatchObject({ Email: 'u2@example.com', Count: 20 });
    expect(first.fields).toMatchObject({ Email: 'u1@example.com', Count: 1, Name: 'first' });
    const listed = await post('/list', {
      filter: { field: 'Email', ends_with: '@example.com' },
      limit: 2000,
    }).expect(200);
    const emails = listed.body.records
      .map((r: { fields: { Email: string } }) => r.fields.Email)
      .filter((e: string) => e !== 'ada@example.com');
    expect(emails.sort()).toEqual(['new@example.com', 'u1@example.com', 'u2@example.com']);
  });
});

describe('matchOn index', () => {
  it('is built in the background after the first upsert on a set of fields', async () => {
    await post('/bulk', { matchOn: [fieldIds.Name], records: [{ Name: 'indexed' }] }).expect(200);
    const deadline = Date.now() + 10_000;
    let indexes: string[] = [];
    while (Date.now() < deadline) {
      const result = await h.db.pool.query<{ indexdef: string }>(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE '%\\_mx\\_%'`,
        [`base_${baseId.replace(/-/g, '')}`],
      );
      indexes = result.rows.map((row) => row.indexdef);
      if (indexes.some((definition) => definition.includes(fieldIds.Name!))) break;
      await new Promise((done) => setTimeout(done, 100));
    }
    expect(indexes.some((definition) => definition.includes(`(hashtextextended("${fieldIds.Name}"`))).toBe(
      true,
    );
  });
});

describe('list', () => {
  it('pages in creation order with total and hasMore', async () => {
    const before = (await post('/list', {}).expect(200)).body.total;
    await post('/bulk', {
      records: Array.from({ length: 7 }, (_, i) => ({ Name: `page-${i}`, Count: i })),
    }).expect(201);
    const all = await post('/list', { filter: { field: 'Name', starts_with: 'page-' } }).expect(200);
    expect(all.body.records.map((r: { fields: { Name: string } }) => r.fields.Name)).toEqual(
      Array.from({ length: 7 }, (_, i) => `page-${i}`),
    );
    expect(all.body).toMatchObject({ total: 7, hasMore: false });
    const page = await post('/list', {
      filter: { field: 'Name', starts_with: 'page-' },
      limit: 3,
      offset: 3,
    }).expect(200);
    expect(page.body.records.map((r: { fields: { Name: string } }) => r.fields.Name)).toEqual([
      'page-3',
      'page-4',
      'page-5',
    ]);
    expect(page.body).toMatchObject({ total: 7, hasMore: true });
    const beyond = await post('/list', { offset: 10_000 }).expect(200);
    expect(beyond.body).toEqual({ records: [], total: before + 7, hasMore: false, nextCursor: null });
    const sorted = await post('/list', {
      filter: { field: 'Name', starts_with: 'page-' },
      sort: [{ field: 'Count', direction: 'desc' }],
      limit: 2,
    }).expect(200);
    expect(sorted.body.records.map((r: { fields: { Count: number } }) => r.fields.Count)).toEqual([6, 5]);
  });

  it('accepts an absent body', async () => {
    const response = await h.api.post(url('/list')).set('Authorization', auth).expect(200);
    expect(response.body).toEqual({
      records: expect.any(Array),
      total: expect.any(Number),
      hasMore: false,
      nextCursor: null,
    });
  });
});

describe('linked records and attachments', () => {
  it('refuses unknown linked ids and drops links when the linked record is deleted', async () => {
    const bad = randomUUID();
    const refused = await post('', { record: { Name: 'x', Company: [bad] } }).expect(400);
    expect(refused.body.error.message).toContain(bad);
    const company = await h.api
      .post(`/api/v1/bases/${baseId}/tables/Companies/records`)
      .set('Authorization', auth)
      .send({ record: { Name: 'Temp' } })
      .expect(201);
    const deal = await post('', { record: { Name: 'linked', Company: [company.body.id] } }).expect(201);
    await h.api
      .delete(`/api/v1/bases/${baseId}/tables/Companies/records/${company.body.id}`)
      .set('Authorization', auth)
      .expect(200);
    const after = await h.api
      .get(url(`/${deal.body.id}`))
      .set('Authorization', auth)
      .expect(200);
    expect(after.body.fields.Company).toEqual([]);
  });

  it('fills attachment metadata from the upload record of a {url}', async () => {
    await h.db.pool.query(
      `INSERT INTO uploaded_files (id, key, kind, database_id, file_name, size, mime_type, sha256) VALUES ($1, 'att/abc.png', 'attachment', $2, 'abc.png', 1234, 'image/png', '')`,
      [randomUUID(), baseId],
    );
    // upload-service on its own port of the host the request reached (no UPLOAD_PUBLIC_URL here).
    const fileUrl = 'http://127.0.0.1:3001/files/att/abc.png';
    const created = await post('', { record: { Name: 'with file', Files: [{ url: fileUrl }] } }).expect(201);
    expect(created.body.fields.Files).toEqual([
      { url: fileUrl, fileName: 'abc.png', size: 1234, mimeType: 'image/png', signedUrl: expect.any(String) },
    ]);
    // The link opens this file, for the key that read it (root here), for a while.
    const signed = new URL(created.body.fields.Files[0].signedUrl);
    expect(`${signed.origin}${signed.pathname}`).toBe(fileUrl);
    expect(verifyFileToken(h.fileTokenSecret, signed.searchParams.get('token')!, 'att/abc.png')).toEqual({
      ok: true,
      keyId: null,
    });
    expect(created.body.data[fieldIds.Files!]).toEqual(created.body.fields.Files);
    // Writing back what was read is accepted; the stored value has no link in it.
    const rewritten = await h.api
      .patch(url(`/${created.body.id}`))
      .set('Authorization', auth)
      .send({ record: { Files: created.body.fields.Files } })
      .expect(200);
    expect(rewritten.body.fields.Files[0].fileName).toBe('abc.png');
    const stored = await h.db.pool.query(
      `SELECT "${fieldIds.Files}"::text AS files FROM "${schemaNameOf(baseId)}"."${dealsTableId}" WHERE id = $1`,
      [created.body.id],
    );
    expect(stored.rows[0].files).not.toContain('signedUrl');
    expect(stored.rows[0].files).not.toContain('token');
    const unknown = await post('', {
      record: { Files: [{ url: 'http://127.0.0.1:3001/files/nope' }] },
    }).expect(400);
    expect(unknown.body.error.message).toMatch(/Files\[0\]\.url/);
  });
});

describe('bulk delete', () => {
  it('deletes all the ids or none', async () => {
    const created = await post('/bulk', { records: [{ Name: 'd1' }, { Name: 'd2' }] }).expect(201);
    const ids = created.body.records.map((r: { id: string }) => r.id);
    const missing = randomUUID();
    await post('/bulk-delete', { ids: [...ids, missing] }).expect(404);
    await h.api
      .get(url(`/${ids[0]}`))
      .set('Authorization', auth)
      .expect(200);
    const response = await post('/bulk-delete', { ids }).expect(200);
    expect(response.body).toEqual({ success: true, deletedIds: ids });
    const malformed = await post('/bulk-delete', { ids: ['nope'] }).expect(400);
    expect(malformed.body.error.code).toBe('INVALID_RECORD_ID');
  });
});
