import { type ExportFormat, exportMediaTypes } from '@recordbase/contracts/records';
import type { RecordExport } from '@recordbase/domain/records/export/export-records';
import { requestIdOf } from '@recordbase/server-kit/http';
import type { Logger } from '@recordbase/server-kit/logger';
import type { Response } from 'express';

/**
 * Sends an opened export (domain records/export) as the answer: headers first, then the file as
 * the client takes it. Once a byte is out the status cannot change, so a failure after it destroys
 * the connection: the client sees a transfer cut short (no final chunk), never a file that looks
 * complete.
 */

/**
 * How long a client may take no bytes at all before its export is ended: it holds a connection of
 * its key's share and a transaction's snapshot all the while.
 */
export const EXPORT_STALL_MS = 60_000;

const EXTENSIONS: Readonly<Record<ExportFormat, string>> = { csv: 'csv', xlsx: 'xlsx', ndjson: 'ndjson' };

/** RFC 5987's attr-char: what `filename*` may hold unencoded. */
const encodeRfc5987 = (text: string) =>
  encodeURIComponent(text).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * `attachment` named after the table: a plain ASCII `filename` (other characters, quotes,
 * backslashes and controls as `_`) for every client, and `filename*` (RFC 6266) with the UTF-8
 * name for those that read it, when the name is not plain ASCII.
 */
export function contentDisposition(tableName: string, format: ExportFormat): string {
  const name = `${tableName}.${EXTENSIONS[format]}`;
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return ascii === name
    ? `attachment; filename="${name}"`
    : `attachment; filename="${ascii}"; filename*=UTF-8''${encodeRfc5987(name)}`;
}

class ClientStalled extends Error {
  constructor() {
    super(`the client took no bytes for ${EXPORT_STALL_MS / 1000} s`);
    this.name = 'ClientStalled';
  }
}

class ClientLeft extends Error {
  constructor() {
    super('the client closed the connection');
    this.name = 'ClientLeft';
  }
}

/** Resolves when the response's buffer has room again; rejects when the client leaves or stalls. */
function drained(res: Response, stallMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new ClientLeft());
    const timer = setTimeout(() => done(new ClientStalled()), stallMs);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

export async function sendExport(
  res: Response,
  opened: RecordExport,
  logger: Logger,
  stallMs = EXPORT_STALL_MS,
): Promise<void> {
  try {
    res.status(200);
    res.setHeader('Content-Type', exportMediaTypes[opened.format]);
    res.setHeader('Content-Disposition', contentDisposition(opened.table.name, opened.format));
    res.setHeader('Cache-Control', 'no-store');
    // The gateway passes each chunk on as it comes rather than buffering the file.
    res.setHeader('X-Accel-Buffering', 'no');
    for await (const chunk of opened.chunks()) {
      if (res.destroyed) throw new ClientLeft();
      if (!res.write(chunk)) await drained(res, stallMs);
    }
    res.end();
  } catch (error) {
    const left = error instanceof ClientLeft || res.destroyed;
    if (!left) {
      logger.error(
        { err: error, requestId: requestIdOf(res), tableId: opened.table.id, format: opened.format },
        'an export failed after its answer started; its connection is cut',
      );
    }
    res.destroy();
  } finally {
    await opened.close();
  }
}
