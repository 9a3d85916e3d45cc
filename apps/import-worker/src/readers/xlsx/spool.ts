import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { count, ImportFileError } from '../import-file-error';

/** A copy of the upload on local disk, for random access. */
export interface SpooledFile {
  path: string;
  /** Its size: what the budgets of what it may expand to are reckoned from. */
  bytes: number;
  /** Deletes the copy; safe to call more than once. */
  dispose(): Promise<void>;
}

export interface SpoolOptions {
  /** Refuse a file larger than this. */
  maxBytes: number;
  /** How many bytes `inspectHead` is given (fewer when the file is shorter). */
  headLength: number;
  /** Throws an ImportFileError when the file's first bytes show it is the wrong kind of file. */
  inspectHead(head: Buffer): void;
}

/**
 * Copies `source` to a private temporary file. A workbook's parts must be read in an order that
 * is not the zip's (shared strings and styles come after the sheets in Excel's files), and the
 * zip's central directory at the very end is the trustworthy list of what is in it: so the
 * compressed upload goes to disk, never memory, and is read from there. The first bytes are
 * checked on the way, so a file that is no zip fails before it is all copied.
 */
export async function spoolToTempFile(source: Readable, options: SpoolOptions): Promise<SpooledFile> {
  // The source can fail while the directory is made, before the pipeline listens to it: heard
  // from the start, its error rejects the copy instead of going unheard and ending the process.
  let failedEarly: { error: unknown } | null = null;
  const heardEarly = (error: unknown) => {
    failedEarly ??= { error };
  };
  source.on('error', heardEarly);
  let directory: string;
  try {
    directory = await mkdtemp(join(tmpdir(), 'recordbase-import-'));
  } finally {
    source.off('error', heardEarly);
  }
  const dispose = () => rm(directory, { recursive: true, force: true });
  const path = join(directory, 'upload');
  try {
    if (failedEarly) throw (failedEarly as { error: unknown }).error;
    const guard = new SpoolGuard(options);
    await pipeline(source, guard, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
    return { path, bytes: guard.size, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** Passes bytes through, checking the head and the size. */
class SpoolGuard extends Transform {
  size = 0;
  private head: Buffer[] | null = [];
  private headSize = 0;

  constructor(private readonly options: SpoolOptions) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.options.maxBytes) {
      callback(new ImportFileError(`the file is larger than ${count(this.options.maxBytes)} bytes`, null));
      return;
    }
    if (this.head !== null) {
      this.head.push(chunk);
      this.headSize += chunk.length;
      if (this.headSize >= this.options.headLength && !this.checkHead(callback)) return;
    }
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    if (this.head === null || this.checkHead(callback)) callback();
  }

  /** Runs the head check once; on failure passes the error to `callback` and returns false. */
  private checkHead(callback: TransformCallback): boolean {
    const head = Buffer.concat(this.head ?? []).subarray(0, this.options.headLength);
    this.head = null;
    try {
      this.options.inspectHead(head);
      return true;
    } catch (error) {
      callback(error as Error);
      return false;
    }
  }
}
