import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import type { RecordbaseClient } from '@recordbase/client';
import { clientOf } from './client';
import { type Stack, startStack } from './stack';

/**
 * An attachment from upload to download, across the services as a user runs them: uploaded to
 * the upload-service, written into a record through records-api, listed with its metadata and a
 * signed link, and downloaded byte for byte with the key and with the link.
 */

let stack: Stack;
let client: RecordbaseClient;
let baseId: string;
let filesFieldId: string;
let tableId: string;
const LINK_TTL_SECONDS = 3;

beforeAll(async () => {
  stack = await startStack({ env: { FILE_LINK_TTL_SECONDS: String(LINK_TTL_SECONDS) } });
  client = clientOf(stack);
  const base = await client.bases.create({
    name: 'E2E uploads',
    tables: [
      {
        name: 'Docs',
        fields: [
          { name: 'Title', type: 'single_line_text' },
          { name: 'Files', type: 'attachments' },
        ],
      },
    ],
  });
  baseId = base.id;
  tableId = base.tables[0]!.id;
  filesFieldId = base.tables[0]!.fields[1]!.id;
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

/** A real PNG of `size` by `size` pixels, so that ranges have bytes to cut. */
function png(size: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const check = Buffer.alloc(4);
    check.writeUInt32BE(crc(body));
    return Buffer.concat([length, body, check]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.concat(
    Array.from({ length: size }, (_, y) =>
      Buffer.concat([
        Buffer.from([0]),
        Buffer.from(Array.from({ length: size * 3 }, (_, x) => (x * 7 + y * 13) & 0xff)),
      ]),
    ),
  );
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows, { level: 0 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const sha256 = (bytes: Buffer | ArrayBuffer) =>
  createHash('sha256')
    .update(Buffer.from(bytes as ArrayBuffer))
    .digest('hex');
describe('an attachment, end to end', () => {
  it('uploads, attaches, lists with a signed link, and downloads byte for byte', async () => {
    const image = png(64);
    const file = await client.uploads.attachment(new File([image], 'chart.png', { type: 'image/png' }), {
      baseId,
      tableId,
      fieldId: filesFieldId,
    });
    expect(file).toEqual({
      url: expect.stringContaining('/files/attachments/'),
      fileName: 'chart.png',
      size: image.length,
      mimeType: 'image/png',
    });

    const created = await client.records.create(baseId, 'Docs', { Title: 'Q3', Files: [{ url: file.url }] });
    expect(created.fields.Title).toBe('Q3');
    const listed = await client.records.list(baseId, 'Docs');
    const [attachment] = listed.records[0]!.fields.Files as { signedUrl: string }[];
    expect(attachment).toEqual({ ...file, signedUrl: expect.stringContaining(`${file.url}?token=`) });
    expect(listed.records[0]!.data[filesFieldId]).toEqual([attachment]);

    // With the key through the client; with the signed link by a plain fetch, as a browser would.
    const withKey = await client.uploads.download(file.url);
    expect(withKey.status).toBe(200);
    expect(sha256(await withKey.arrayBuffer())).toBe(sha256(image));
    const withLink = await fetch(attachment!.signedUrl);
    expect(withLink.status).toBe(200);
    expect(withLink.headers.get('content-disposition')).toBe('attachment; filename=chart.png');
    expect(sha256(await withLink.arrayBuffer())).toBe(sha256(image));
    const range = await fetch(attachment!.signedUrl, { headers: { range: 'bytes=100-1099' } });
    expect(range.status).toBe(206);
    expect(range.headers.get('content-range')).toBe(`bytes 100-1099/${image.length}`);
    expect(Buffer.from(await range.arrayBuffer()).equals(image.subarray(100, 1100))).toBe(true);

    const token = new URL(attachment!.signedUrl).searchParams.get('token')!;
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const tampered = Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 3600 })).toString('base64url');
    // A link that opens nothing is the same 404 as a file that does not exist, whatever was wrong.
    const forged = await fetch(`${file.url}?token=${header}.${tampered}.${signature}`);
    expect(forged.status).toBe(404);
    const refusal = await forged.text();
    expect(await fetch(file.url)).toHaveProperty('status', 401);

    await new Promise((done) => setTimeout(done, (LINK_TTL_SECONDS + 1.5) * 1000));
    const expired = await fetch(attachment!.signedUrl);
    expect(expired.status).toBe(404);
    expect(await expired.text()).toBe(refusal);
  }, 60_000);
});
