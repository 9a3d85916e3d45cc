import { randomUUID } from 'node:crypto';
import { verifyFileToken } from '@recordbase/server-kit/file-tokens';
import { createBase, type Harness, schemaNameOf, startHarness } from './harness';

/**
 * Which attachment urls are files of our upload service. Only those get an
 * upload's metadata and a `signedUrl`, whose token opens the file for the key that read it: a url
 * of another host that merely mimics the path `/files/{key}` must never be sent a reader's token.
 */

interface Fixture {
  h: Harness;
  baseId: string;
  tableId: string;
  filesFieldId: string;
  /** The storage key of a file uploaded to the base. */
  key: string;
}

async function fixture(options: { uploadPublicUrl?: string } = {}): Promise<Fixture> {
  const h = await startHarness(options);
  const base = await createBase(h, {
    name: 'Attachments',
    tables: [
      {
        name: 'Docs',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Files', type: 'attachments' },
        ],
      },
    ],
  });
  const baseId = base.body.id as string;
  const table = base.body.tables[0];
  const key = `attachments/${baseId}/${randomUUID()}/contract.pdf`;
  await h.db.pool.query(
    `INSERT INTO uploaded_files (id, key, kind, database_id, file_name, size, mime_type, sha256)
     VALUES ($1, $2, 'attachment', $3, 'contract.pdf', 4321, 'application/pdf', '')`,
    [randomUUID(), key, baseId],
  );
  return { h, baseId, tableId: table.id, filesFieldId: table.fields[1].id, key };
}

const records = (f: Fixture) => `/api/v1/bases/${f.baseId}/tables/Docs/records`;

function create(f: Fixture, files: object[]) {
  return f.h.api
    .post(records(f))
    .set('Authorization', f.h.bearer(f.h.rootKey))
    .send({ record: { Name: 'x', Files: files } });
}

/** The attachments of a record as a reader gets them back. */
async function readBack(f: Fixture, id: string) {
  const read = await f.h.api
    .get(`${records(f)}/${id}`)
    .set('Authorization', f.h.bearer(f.h.rootKey))
    .expect(200);
  return read.body.fields.Files as Array<Record<string, unknown>>;
}

const external = { fileName: 'given.pdf', size: 7, mimeType: 'application/pdf' };

describe('without UPLOAD_PUBLIC_URL: files of the host the request reached', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
  });
  afterAll(() => f.h.close());

  it('takes a url of that host, on any port (the gateway, or upload-service on its own), as an uploaded file', async () => {
    const url = `http://127.0.0.1:3001/files/${f.key}`;
    const created = await create(f, [{ url }]).expect(201);
    const [file] = created.body.fields.Files;
    expect(file).toEqual({
      url,
      fileName: 'contract.pdf',
      size: 4321,
      mimeType: 'application/pdf',
      signedUrl: expect.stringContaining(`${url}?token=`),
    });
    const token = new URL(file.signedUrl).searchParams.get('token')!;
    expect(verifyFileToken(f.h.fileTokenSecret, token, f.key)).toEqual({ ok: true, keyId: null });
  });

  it("treats another host's url that mimics our file path as external: it must bring its metadata", async () => {
    for (const url of [
      `https://evil.example/files/${f.key}`,
      `http://127.0.0.1.evil.example/files/${f.key}`,
      `http://127.0.0.1@evil.example/files/${f.key}`,
    ]) {
      const refused = await create(f, [{ url }]).expect(400);
      expect(refused.body.error.message).toContain('Files[0].url');
      // With its metadata it is kept as given, as any external url is, with no link signed.
      const created = await create(f, [{ url, ...external }]).expect(201);
      expect(created.body.fields.Files).toEqual([{ url, ...external }]);
      expect(await readBack(f, created.body.id)).toEqual([{ url, ...external }]);
    }
  });

  it('signs no link for an external url whose path merely holds /files/', async () => {
    const url = 'https://cdn.example.com/static/files/report.pdf';
    const created = await create(f, [{ url, ...external }]).expect(201);
    expect(created.body.fields.Files).toEqual([{ url, ...external }]);
    expect(await readBack(f, created.body.id)).toEqual([{ url, ...external }]);
  });

  it('sends no token to a foreign url already stored (written before this check)', async () => {
    const created = await create(f, []).expect(201);
    const foreign = { url: `https://evil.example/files/${f.key}`, ...external };
    await f.h.db.pool.query(
      `UPDATE "${schemaNameOf(f.baseId)}"."${f.tableId}" SET "${f.filesFieldId}" = $1::jsonb WHERE id = $2`,
      [JSON.stringify([foreign]), created.body.id],
    );
    expect(await readBack(f, created.body.id)).toEqual([foreign]);
    const listed = await f.h.api
      .post(`${records(f)}/list`)
      .set('Authorization', f.h.bearer(f.h.rootKey))
      .send({})
      .expect(200);
    const stored = listed.body.records.find((record: { id: string }) => record.id === created.body.id);
    expect(stored.fields.Files).toEqual([foreign]);
  });
});

describe('with UPLOAD_PUBLIC_URL: that address only', () => {
  let f: Fixture;
  const publicUrl = 'https://files.example.com/uploads';
  beforeAll(async () => {
    f = await fixture({ uploadPublicUrl: publicUrl });
  });
  afterAll(() => f.h.close());

  it('takes {UPLOAD_PUBLIC_URL}/files/{key} as an uploaded file, and signs its link', async () => {
    const url = `${publicUrl}/files/${f.key}`;
    const created = await create(f, [{ url }]).expect(201);
    expect(created.body.fields.Files).toEqual([
      {
        url,
        fileName: 'contract.pdf',
        size: 4321,
        mimeType: 'application/pdf',
        signedUrl: expect.stringContaining(`${url}?token=`),
      },
    ]);
  });

  it('takes no other origin or path as ours, the host the request reached included', async () => {
    for (const url of [
      `http://127.0.0.1:3001/files/${f.key}`,
      `https://files.example.com/files/${f.key}`,
      `http://files.example.com/uploads/files/${f.key}`,
      `https://files.example.com:8443/uploads/files/${f.key}`,
      `https://files.example.com.evil.example/uploads/files/${f.key}`,
      `https://files.example.com@evil.example/uploads/files/${f.key}`,
      `https://evil.example/uploads/files/${f.key}`,
    ]) {
      const refused = await create(f, [{ url }]).expect(400);
      expect([url, refused.body.error.message]).toEqual([url, expect.stringContaining('Files[0].url')]);
      const created = await create(f, [{ url, ...external }]).expect(201);
      expect(created.body.fields.Files).toEqual([{ url, ...external }]);
    }
  });
});
