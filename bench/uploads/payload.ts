import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { UPLOAD_FORM_FIELD } from '@recordbase/contracts/uploads';

/**
 * The attachment: a PNG signature and IHDR chunk (what the service's sniffer looks for, so it is
 * accepted and stored as image/png) followed by random bytes, which no layer can compress. It is
 * made once per run, kept in memory for the HTTP cases and written to disk for `cp`.
 */

export const FILE_NAME = 'bench.png';
export const MIME_TYPE = 'image/png';

function pngHead(): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(4096, 0); // width
  ihdr.writeUInt32BE(4096, 4); // height
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    Buffer.from([0, 0, 0, 13]),
    Buffer.from('IHDR', 'ascii'),
    ihdr,
    Buffer.alloc(4), // CRC: nothing on the way checks it
  ]);
}

export interface Payload {
  /** The file's bytes. */
  file: Buffer;
  sha256: string;
  /** The file written to disk (for `cp`). */
  path: string;
  /** A whole multipart/form-data body with the file in the `filepond` field, and its type. */
  multipart: Buffer;
  multipartType: string;
}

export async function makePayload(bytes: number, path: string): Promise<Payload> {
  const head = pngHead();
  if (bytes < head.length) throw new Error(`BENCH_FILE_BYTES must be at least ${head.length}`);
  const file = Buffer.concat([head, randomBytes(bytes - head.length)]);
  await writeFile(path, file, { flush: true });
  const boundary = `----recordbase-bench-${randomBytes(12).toString('hex')}`;
  // One buffer for the whole body, built once: every request sends the same bytes, uncopied.
  const multipart = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\n` +
        `Content-Disposition: form-data; name="${UPLOAD_FORM_FIELD}"; filename="${FILE_NAME}"\r\n` +
        `Content-Type: ${MIME_TYPE}\r\n\r\n`,
    ),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return {
    file,
    sha256: createHash('sha256').update(file).digest('hex'),
    path,
    multipart,
    multipartType: `multipart/form-data; boundary=${boundary}`,
  };
}
