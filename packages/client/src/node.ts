import { openAsBlob } from 'node:fs';
import { basename } from 'node:path';
import type { Readable } from 'node:stream';
import { MAX_IMPORT_FILE_BYTES } from '@recordbase/contracts/uploads';
import { RecordbaseError } from './errors';

/**
 * Node's side of uploads: files on disk and streams become the Blobs the client uploads. Kept
 * apart from the main entry so that browsers never load a Node module.
 */

export interface NodeFileOptions {
  /** The name stored with the file; the path's last part by default. */
  fileName?: string;
  /** The declared MIME type (the service also reads the bytes). */
  type?: string;
}

/** A file on disk as a File backed by the disk: read as it is sent, not loaded into memory first. */
export async function fileFromPath(path: string, options: NodeFileOptions = {}): Promise<File> {
  const blob = await openAsBlob(path, options.type ? { type: options.type } : undefined);
  return new File([blob], options.fileName ?? basename(path), { type: options.type ?? '' });
}

/**
 * A Readable (an HTTP request, an S3 object, a generated CSV) as a File. Its bytes are held in
 * memory, so that the upload declares its length and can be sent again on a 429 or 503; a stream
 * longer than `maxBytes` (the import routes' 50 MB by default) is refused once it passes it.
 */
export async function fileFromStream(
  stream: Readable,
  fileName: string,
  options: Omit<NodeFileOptions, 'fileName'> & { maxBytes?: number } = {},
): Promise<File> {
  const maxBytes = options.maxBytes ?? MAX_IMPORT_FILE_BYTES;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes: Uint8Array = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
    size += bytes.byteLength;
    if (size > maxBytes) {
      stream.destroy();
      throw new RecordbaseError(
        'INVALID_INPUT',
        `The stream holds more than ${maxBytes} bytes, the most an upload takes`,
      );
    }
    chunks.push(bytes);
  }
  return new File(chunks, fileName, { type: options.type ?? '' });
}
