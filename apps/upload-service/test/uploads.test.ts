import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { XLSX_MIME_TYPE } from '@recordbase/contracts/uploads';
import { newFieldId } from '@recordbase/db';
import { signFileToken } from '@recordbase/server-kit/file-tokens';
import supertest from 'supertest';
import { insertBase, insertKey, type TestBase } from './fixtures';
import { type Harness, startHarness } from './harness';
import { buildZip, elfExecutable, excelWorkbook, onePixelPng } from './sniff-files';

/** The three upload routes and the download route against the real app, database and storage. */

let h: Harness;
let base: TestBase;
let root: string;
let xlsx: Buffer;
const png = onePixelPng(200, 10, 10);

beforeAll(async () => {
  h = await startHarness();
  root = `Bearer ${h.rootKey}`;
  base = await insertBase(h.db);
  xlsx = await excelWorkbook();
});
afterAll(() => h.close());

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const errorBody = (code: string) => ({ error: { code, message: expect.any(String) } });

function attachmentHeaders(overrides: Record<string, string> = {}) {
  return {
    'base-public-id': base.databaseId,
    'table-id': base.tableId,
    'field-id': base.filesFieldId,
    ...overrides,
  };
}

function upload(
  path: string,
  file: { bytes: Buffer; name: string; type?: string } | null,
  options: { authorization?: string; headers?: Record<string, string>; field?: string } = {},
) {
  let request = h.api.post(path).set('Authorization', options.authorization ?? root);
  for (const [name, value] of Object.entries(options.headers ?? {})) request = request.set(name, value);
  if (file) {
    request = request.attach(options.field ?? 'filepond', file.bytes, {
      filename: file.name,
      contentType: file.type ?? 'application/octet-stream',
    });
  }
  return request;
}

/** Everything uploads can leave behind: stored objects and file rows. */
async function leftovers() {
  const keys: string[] = [];
  for await (const key of h.storage.list('')) keys.push(key);
  const rows = await h.db.prisma.uploadedFile.count();
  return { keys: keys.sort(), rows };
}

async function expectRefusedLeavingNothing(
  send: () => PromiseLike<{ status: number; body: unknown }>,
  status: number,
) {
  const before = await leftovers();
  const response = await send();
  expect(response.status).toBe(status);
  expect(response.body).toEqual(errorBody(expect.any(String) as unknown as string));
  expect(await leftovers()).toEqual(before);
  return response as { status: number; body: { error: { code: string; message: string } } };
}

describe('POST /fileupload', () => {
  it('stores an image and answers 201 with url, fileName, size and mimeType', async () => {
    const response = await upload(
      '/fileupload',
      { bytes: png, name: 'dot.png', type: 'image/png' },
      {
        headers: attachmentHeaders(),
      },
    ).expect(201);
    expect(response.body).toEqual({
      url: expect.stringMatching(
        /^http:\/\/127\.0\.0\.1:\d+\/files\/attachments\/[0-9a-f-]{36}\/[0-9a-f-]{36}\/dot\.png$/,
      ),
      fileName: 'dot.png',
      size: png.length,
      mimeType: 'image/png',
    });
    const key = new URL(response.body.url).pathname.slice('/files/'.length);
    expect(key.split('/')[1]).toBe(base.databaseId);
    const row = await h.db.prisma.uploadedFile.findUnique({ where: { key } });
    expect(row).toMatchObject({
      kind: 'attachment',
      databaseId: base.databaseId,
      tableId: base.tableId,
      fieldId: base.filesFieldId,
      fileName: 'dot.png',
      mimeType: 'image/png',
      sha256: sha256(png),
      apiKeyId: null,
    });
    const stored = await h.storage.get(key);
    const chunks: Buffer[] = [];
    for await (const chunk of stored) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(png)).toBe(true);
  });

  it('stores a PNG declared as text/plain as image/png: the bytes decide', async () => {
    const response = await upload(
      '/fileupload',
      { bytes: png, name: 'notes.txt', type: 'text/plain' },
      {
        headers: attachmentHeaders(),
      },
    ).expect(201);
    expect(response.body.mimeType).toBe('image/png');
  });

  it('takes the table and field by name too, and keeps a sanitised name in the key', async () => {
    const response = await upload(
      '/fileupload',
      { bytes: Buffer.from('hello'), name: '../../résumé final?.txt', type: 'text/plain' },
      { headers: attachmentHeaders({ 'table-id': 'docs', 'field-id': 'Files' }) },
    ).expect(201);
    // The name as uploaded, without the directories a client may send.
    expect(response.body.fileName).toBe('résumé final?.txt');
    expect(response.body.url).toMatch(/\/resume_final_\.txt$/);
  });

  it("accepts FilePond's own request: a metadata part named filepond beside the file", async () => {
    const response = await h.api
      .post('/fileupload')
      .set('Authorization', root)
      .set(attachmentHeaders())
      .field('filepond', JSON.stringify({ note: 'metadata' }))
      .attach('filepond', png, { filename: 'pond.png', contentType: 'image/png' })
      .expect(201);
    expect(response.body.fileName).toBe('pond.png');
  });

  it.each(['base-public-id', 'table-id', 'field-id'])(
    'answers 400 naming a missing %s header',
    async (missing) => {
      const headers = attachmentHeaders();
      delete (headers as Record<string, string>)[missing];
      const response = await expectRefusedLeavingNothing(
        () => upload('/fileupload', { bytes: png, name: 'a.png' }, { headers }),
        400,
      );
      expect(response.body.error.message).toContain(missing);
    },
  );

  it('answers 400 for a table or field that is not an attachments field of the database', async () => {
    for (const [headers, mentions] of [
      [attachmentHeaders({ 'table-id': 'Nope' }), 'table-id'],
      [attachmentHeaders({ 'field-id': 'Nope' }), 'field-id'],
      [attachmentHeaders({ 'field-id': base.textFieldId }), 'not an attachments field'],
    ] as const) {
      const response = await expectRefusedLeavingNothing(
        () => upload('/fileupload', { bytes: png, name: 'a.png' }, { headers }),
        400,
      );
      expect(response.body.error.message).toContain(mentions);
    }
  });

  it('keeps nothing for a field changed or gone while its file was sent, and says what the headers name now', async () => {
    // Lookups that keep what they read, so the upload is checked against a field that has changed:
    // the schema change's notification is still on its way.
    const app = h.appWith({}, undefined, await h.listeningLookups());
    const sendTo = (target: TestBase) => () =>
      supertest(app)
        .post('/fileupload')
        .set('Authorization', root)
        .set({ 'base-public-id': target.databaseId, 'table-id': 'Docs', 'field-id': 'Files' })
        .attach('filepond', png, { filename: 'a.png', contentType: 'image/png' });

    const retypedBase = await insertBase(h.db);
    await sendTo(retypedBase)().expect(201);
    await h.db.pool.query(`UPDATE fields SET type = 'single_line_text' WHERE id = $1`, [
      retypedBase.filesFieldId,
    ]);
    const retyped = await expectRefusedLeavingNothing(sendTo(retypedBase), 400);
    expect(retyped.body.error.message).toBe(
      'field-id: field "Files" is a single_line_text field, not an attachments field',
    );

    const target = await insertBase(h.db);
    const send = sendTo(target);
    await send().expect(201);
    // Deleted and made anew under its name: the client is told to send the file again, which works.
    await h.db.pool.query('DELETE FROM fields WHERE id = $1', [target.filesFieldId]);
    await h.db.pool.query(
      `INSERT INTO fields (id, table_id, name, name_key, type, position)
       VALUES ($1, $2, 'Files', 'files', 'attachments', 2)`,
      [newFieldId(), target.tableId],
    );
    const remade = await expectRefusedLeavingNothing(send, 400);
    expect(remade.body.error.message).toBe(
      'field-id: the field was changed while the file was sent; send the file again',
    );
    await send().expect(201);
    await h.db.pool.query('DELETE FROM databases WHERE id = $1', [target.databaseId]);
    const deleted = await expectRefusedLeavingNothing(send, 404);
    expect(deleted.body.error.message).toBe(`Database ${target.databaseId} not found`);
  });

  it.each([
    ['a renamed executable', elfExecutable(), 'photo.png', 'image/png'],
    ['an HTML page', Buffer.from('<!DOCTYPE html><script>alert(1)</script>'), 'page.txt', 'text/plain'],
    ['text declared as an image', Buffer.from('just text'), 'a.png', 'image/png'],
  ])('refuses %s with 400, keeping nothing', async (_name, bytes, name, type) => {
    await expectRefusedLeavingNothing(
      () => upload('/fileupload', { bytes, name, type }, { headers: attachmentHeaders() }),
      400,
    );
  });

  it('answers 400 for no file, a file in another field, two files, and an empty file', async () => {
    await expectRefusedLeavingNothing(
      () => h.api.post('/fileupload').set('Authorization', root).set(attachmentHeaders()).field('other', 'x'),
      400,
    );
    await expectRefusedLeavingNothing(
      () =>
        upload('/fileupload', { bytes: png, name: 'a.png' }, { headers: attachmentHeaders(), field: 'file' }),
      400,
    );
    await expectRefusedLeavingNothing(
      () =>
        h.api
          .post('/fileupload')
          .set('Authorization', root)
          .set(attachmentHeaders())
          .attach('filepond', png, { filename: 'one.png', contentType: 'image/png' })
          .attach('filepond', png, { filename: 'two.png', contentType: 'image/png' }),
      400,
    );
    const empty = await expectRefusedLeavingNothing(
      () =>
        upload(
          '/fileupload',
          { bytes: Buffer.alloc(0), name: 'empty.png' },
          { headers: attachmentHeaders() },
        ),
      400,
    );
    expect(empty.body.error.message).toMatch(/empty/);
  });

  it('answers 415 for a body that is not multipart/form-data', async () => {
    await expectRefusedLeavingNothing(
      () => h.api.post('/fileupload').set('Authorization', root).set(attachmentHeaders()).send({ file: 'x' }),
      415,
    );
  });

  it('answers 413 past 20 MB and keeps nothing, whether or not the length was declared', async () => {
    const big = Buffer.alloc(20 * 1024 * 1024 + 1, 0x61);
    const declared = await expectRefusedLeavingNothing(
      () =>
        upload(
          '/fileupload',
          { bytes: big, name: 'big.txt', type: 'text/plain' },
          { headers: attachmentHeaders() },
        ),
      413,
    );
    expect(declared.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    // Chunked, with no content-length: the limit is met while the file streams into storage.
    const before = await leftovers();
    const streamed = await chunkedUpload(big, attachmentHeaders());
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await leftovers()).toEqual(before);
  });

  it('answers 401 without a key, 403 without files:write, 404 for a database out of reach', async () => {
    await expectRefusedLeavingNothing(
      () => h.api.post('/fileupload').set(attachmentHeaders()).attach('filepond', png, 'a.png'),
      401,
    );
    const reader = await insertKey(h.db, ['records:read', 'records:write']);
    const forbidden = await expectRefusedLeavingNothing(
      () =>
        upload(
          '/fileupload',
          { bytes: png, name: 'a.png' },
          { authorization: reader.authorization, headers: attachmentHeaders() },
        ),
      403,
    );
    expect(forbidden.body.error.message).toContain('files:write');
    const other = await insertBase(h.db);
    const elsewhere = await insertKey(h.db, ['files:write'], [other.databaseId]);
    await expectRefusedLeavingNothing(
      () =>
        upload(
          '/fileupload',
          { bytes: png, name: 'a.png' },
          { authorization: elsewhere.authorization, headers: attachmentHeaders() },
        ),
      404,
    );
    await expectRefusedLeavingNothing(
      () =>
        upload(
          '/fileupload',
          { bytes: png, name: 'a.png' },
          {
            headers: attachmentHeaders({ 'base-public-id': '00000000-0000-4000-8000-000000000000' }),
          },
        ),
      404,
    );
  });
});

/** A multipart upload sent chunked, so that no content-length tells its size in advance. */
async function chunkedUpload(
  bytes: Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const server: Server = h.appWith({}).listen(0, '127.0.0.1');
  await new Promise((done) => server.once('listening', done));
  const boundary = 'xxBOUNDARYxx';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="filepond"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  try {
    return await new Promise((resolve, reject) => {
      const request = httpRequest(
        {
          host: '127.0.0.1',
          port: (server.address() as AddressInfo).port,
          method: 'POST',
          path: '/fileupload',
          headers: {
            ...headers,
            authorization: root,
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'transfer-encoding': 'chunked',
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
          );
        },
      );
      request.on('error', reject);
      Readable.from(
        (function* () {
          yield head;
          for (let at = 0; at < bytes.length; at += 1024 * 1024) yield bytes.subarray(at, at + 1024 * 1024);
          yield tail;
        })(),
      ).pipe(request);
    });
  } finally {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
}

describe('POST /csvupload and /xlsxupload', () => {
  it('stores a CSV and answers 201 with url, fileName and s3Key', async () => {
    const csv = Buffer.from('Name,Email\nAda,ada@example.com\n');
    const byType = await upload('/csvupload', { bytes: csv, name: 'people.data', type: 'text/csv' }).expect(
      201,
    );
    expect(byType.body).toEqual({
      url: expect.stringMatching(/\/files\/imports\/[0-9a-f-]{36}\/people\.data$/),
      fileName: 'people.data',
      s3Key: expect.stringMatching(/^imports\/[0-9a-f-]{36}\/people\.data$/),
    });
    expect(byType.body.url.endsWith(byType.body.s3Key)).toBe(true);
    await upload('/csvupload', { bytes: csv, name: 'people.CSV', type: 'application/octet-stream' }).expect(
      201,
    );
    const row = await h.db.prisma.uploadedFile.findUnique({ where: { key: byType.body.s3Key } });
    expect(row).toMatchObject({
      kind: 'import',
      databaseId: null,
      mimeType: 'text/csv',
      sha256: sha256(csv),
    });
  });

  it('refuses a CSV by neither type nor name, and a binary renamed .csv', async () => {
    await expectRefusedLeavingNothing(
      () => upload('/csvupload', { bytes: Buffer.from('a,b\n'), name: 'data.txt', type: 'text/plain' }),
      400,
    );
    await expectRefusedLeavingNothing(
      () => upload('/csvupload', { bytes: png, name: 'data.csv', type: 'text/csv' }),
      400,
    );
  });

  it('stores a real workbook', async () => {
    const response = await upload('/xlsxupload', {
      bytes: xlsx,
      name: 'Contacts.xlsx',
      type: XLSX_MIME_TYPE,
    }).expect(201);
    expect(response.body.s3Key).toMatch(/Contacts\.xlsx$/);
  });

  it('refuses a renamed text file, a zip that is no workbook, and a workbook without the xlsx type or name', async () => {
    for (const [bytes, name, type] of [
      [Buffer.from('Name,Email\n'), 'fake.xlsx', XLSX_MIME_TYPE],
      [buildZip([{ name: 'readme.txt', data: Buffer.from('hi') }]), 'archive.xlsx', XLSX_MIME_TYPE],
      [xlsx, 'Contacts.zip', XLSX_MIME_TYPE],
      [xlsx, 'Contacts.xlsx', 'application/zip'],
    ] as const) {
      await expectRefusedLeavingNothing(() => upload('/xlsxupload', { bytes, name, type }), 400);
    }
  });

  it('answers 413 past 50 MB, keeping nothing', async () => {
    const big = Buffer.alloc(50 * 1024 * 1024 + 1, 0x61);
    await expectRefusedLeavingNothing(
      () => upload('/csvupload', { bytes: big, name: 'big.csv', type: 'text/csv' }),
      413,
    );
  });
});

describe('GET /files/{key}', () => {
  let url: string;
  let key: string;
  beforeAll(async () => {
    const bytes = Buffer.concat([png, Buffer.alloc(0)]);
    const response = await upload(
      '/fileupload',
      { bytes, name: 'Ünïcode "quoted".png', type: 'image/png' },
      {
        headers: attachmentHeaders(),
      },
    ).expect(201);
    url = new URL(response.body.url).pathname;
    key = url.slice('/files/'.length);
  });

  it('streams the bytes with their type, as a download, with an ETag', async () => {
    const response = await h.api.get(url).set('Authorization', root).buffer(true).expect(200);
    expect(Buffer.from(response.body).equals(png)).toBe(true);
    expect(response.headers['content-type']).toBe('image/png');
    expect(response.headers['content-length']).toBe(String(png.length));
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    // RFC 6266: an ASCII fallback (quotes escaped), and the exact name in filename*.
    expect(response.headers['content-disposition']).toBe(
      `attachment; filename="?n?code \\"quoted\\".png"; filename*=UTF-8''%C3%9Cn%C3%AFcode%20%22quoted%22.png`,
    );
    expect(response.headers.etag).toBe(`"${sha256(png)}"`);
    await h.api.get(url).set('Authorization', root).set('If-None-Match', response.headers.etag!).expect(304);
  });

  it('answers byte ranges with 206, and 416 outside the file', async () => {
    const first = await h.api
      .get(url)
      .set('Authorization', root)
      .set('Range', 'bytes=0-7')
      .buffer(true)
      .expect(206);
    expect(Buffer.from(first.body).equals(png.subarray(0, 8))).toBe(true);
    expect(first.headers['content-range']).toBe(`bytes 0-7/${png.length}`);
    const last = await h.api
      .get(url)
      .set('Authorization', root)
      .set('Range', 'bytes=-4')
      .buffer(true)
      .expect(206);
    expect(Buffer.from(last.body).equals(png.subarray(png.length - 4))).toBe(true);
    const outside = await h.api
      .get(url)
      .set('Authorization', root)
      .set('Range', `bytes=${png.length}-`)
      .expect(416);
    expect(outside.headers['content-range']).toBe(`bytes */${png.length}`);
  });

  it('is for keys that read records of the database: others get 404', async () => {
    const reader = await insertKey(h.db, ['records:read'], [base.databaseId]);
    await h.api.get(url).set('Authorization', reader.authorization).expect(200);
    const writer = await insertKey(h.db, ['files:write', 'records:write']);
    await h.api.get(url).set('Authorization', writer.authorization).expect(404);
    const other = await insertBase(h.db);
    const elsewhere = await insertKey(h.db, ['records:read'], [other.databaseId]);
    await h.api.get(url).set('Authorization', elsewhere.authorization).expect(404);
  });

  it('opens with a signed link and no key, until it expires, for that file only', async () => {
    const reader = await insertKey(h.db, ['records:read']);
    const token = signFileToken(h.fileTokenSecret, { fileKey: key, keyId: reader.id }, 60);
    const opened = await h.api.get(`${url}?token=${token}`).buffer(true).expect(200);
    expect(Buffer.from(opened.body).equals(png)).toBe(true);
    const expired = signFileToken(h.fileTokenSecret, { fileKey: key, keyId: reader.id }, -10);
    await h.api.get(`${url}?token=${expired}`).expect(404);
    const otherFile = signFileToken(
      h.fileTokenSecret,
      { fileKey: 'attachments/x/y/z.png', keyId: reader.id },
      60,
    );
    await h.api.get(`${url}?token=${otherFile}`).expect(404);
  });

  it("stops opening a revoked key's links, and a key's links that cannot read the database", async () => {
    const reader = await insertKey(h.db, ['records:read']);
    const token = signFileToken(h.fileTokenSecret, { fileKey: key, keyId: reader.id }, 60);
    await h.db.prisma.apiKey.delete({ where: { id: reader.id } });
    await h.api.get(`${url}?token=${token}`).expect(404);
    const writer = await insertKey(h.db, ['records:write']);
    const writersLink = signFileToken(h.fileTokenSecret, { fileKey: key, keyId: writer.id }, 60);
    await h.api.get(`${url}?token=${writersLink}`).expect(404);
  });

  it('answers every refused signed link with the very same 404, byte for byte, whatever was wrong', async () => {
    // Many refusals from one address: the throttle of failed links is another test's.
    const api = supertest(h.appWith({ AUTH_FAILURE_BURST: 10_000 }));
    const reader = await insertKey(h.db, ['records:read']);
    const link = (fileKey: string, keyId: string | null, ttl = 60, secret = h.fileTokenSecret) =>
      signFileToken(secret, { fileKey, keyId }, ttl);
    const good = link(key, reader.id);
    const revoked = await insertKey(h.db, ['records:read']);
    const revokedLink = link(key, revoked.id);
    await h.db.prisma.apiKey.delete({ where: { id: revoked.id } });
    const writer = await insertKey(h.db, ['records:write']);
    const gone = `attachments/${base.databaseId}/00000000-0000-4000-8000-000000000000/gone.png`;
    const refusals: Array<[what: string, path: string]> = [
      ['a malformed token', `${url}?token=not-a-token`],
      ['an empty token', `${url}?token=`],
      ['two tokens', `${url}?token=${good}&token=${good}`],
      ['a bad signature', `${url}?token=${good.slice(0, -4)}${good.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`],
      ['another secret', `${url}?token=${link(key, reader.id, 60, `${h.fileTokenSecret}x`)}`],
      ['an expired link', `${url}?token=${link(key, reader.id, -10)}`],
      ["another file's link", `${url}?token=${link('attachments/x/y/z.png', reader.id)}`],
      ['a missing file', `/files/${gone}?token=${link(gone, reader.id)}`],
      ['a key that is no key', `/files/${gone}?token=${link(gone, 'not-a-uuid')}`],
      ["a revoked key's link", `${url}?token=${revokedLink}`],
      ['a link of a key that cannot read the file', `${url}?token=${link(key, writer.id)}`],
      ['a path that is no key', `/files/..%2Fetc%2Fpasswd?token=${good}`],
    ];
    // What a key that may not see a file gets: the one 404 of the route.
    const reference = await api.get(`/files/${gone}`).set('Authorization', root);
    expect(reference.status).toBe(404);
    for (const [what, path] of refusals) {
      const response = await api.get(path);
      expect({
        what,
        status: response.status,
        type: response.headers['content-type'],
        body: response.text,
      }).toEqual({
        what,
        status: 404,
        type: reference.headers['content-type'],
        body: reference.text,
      });
    }
    // And the link that is good still opens the file.
    await api.get(`${url}?token=${good}`).expect(200);
  });

  it('throttles failed signed links per client address, as failed authentications are', async () => {
    const api = supertest(h.appWith({ AUTH_FAILURE_BURST: 3, AUTH_FAILURES_PER_MINUTE: 1 }));
    const reader = await insertKey(h.db, ['records:read']);
    const good = signFileToken(h.fileTokenSecret, { fileKey: key, keyId: reader.id }, 60);
    for (let attempt = 0; attempt < 3; attempt += 1)
      await api.get(`${url}?token=guess${attempt}`).expect(404);
    const throttled = await api.get(`${url}?token=guess3`).expect(429);
    expect(throttled.body).toEqual(errorBody('RATE_LIMITED'));
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The address waits, whatever it sends next: a good link, or a key.
    await api.get(`${url}?token=${good}`).expect(429);
    await api.get(url).set('Authorization', root).expect(429);

    // One budget with failed keys: they and failed links count together.
    const other = supertest(h.appWith({ AUTH_FAILURE_BURST: 3, AUTH_FAILURES_PER_MINUTE: 1 }));
    await other
      .get(url)
      .set('Authorization', 'Bearer rb_notARealKey0000000000000000000000000000')
      .expect(401);
    await other
      .get(url)
      .set('Authorization', 'Bearer rb_notARealKey0000000000000000000000000001')
      .expect(401);
    await other.get(`${url}?token=guess`).expect(404);
    await other.get(`${url}?token=${good}`).expect(429);
  });

  it('cannot be led outside storage: traversal and odd keys answer 404', async () => {
    for (const path of [
      '/files/..%2F..%2Fetc%2Fpasswd',
      '/files/attachments/%2e%2e/%2e%2e/etc/passwd',
      `/files/${key}%00`,
      '/files/.hidden',
      '/files/attachments//x',
    ]) {
      const response = await h.api.get(path).set('Authorization', root);
      expect([path, response.status]).toEqual([path, 404]);
    }
  });

  it('gives an import file to the key that uploaded it (and root), no one else', async () => {
    const uploader = await insertKey(h.db, ['files:write']);
    const uploaded = await upload(
      '/csvupload',
      { bytes: Buffer.from('a,b\n1,2\n'), name: 'x.csv', type: 'text/csv' },
      {
        authorization: uploader.authorization,
      },
    ).expect(201);
    const path = new URL(uploaded.body.url).pathname;
    await h.api.get(path).set('Authorization', uploader.authorization).expect(200);
    await h.api.get(path).set('Authorization', root).expect(200);
    const someoneElse = await insertKey(h.db, ['files:write', 'records:read']);
    await h.api.get(path).set('Authorization', someoneElse.authorization).expect(404);
  });
});
