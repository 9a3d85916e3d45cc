import { PassThrough, pipeline, type Readable } from 'node:stream';
import { type Entry, openPromise, type ZipFile } from 'yauzl';
import { count, ImportFileError } from '../import-file-error';
import { damaged, messageOf, notAWorkbook } from './errors';
import type { InflateBudget } from './inflate-budget';

/** More files than any workbook has; the central directory is read in full, so it is bounded. */
const MAX_ENTRIES = 20_000;
/** Inflated bytes buffered ahead of the parser, so inflating (on the thread pool) overlaps parsing. */
const READ_AHEAD_BYTES = 1024 * 1024;

/**
 * The files of a zip on disk, found through its central directory (yauzl): each part can be read
 * when it is needed, sizes come from the directory rather than the local headers, and only what
 * is read is inflated. Every failure of the zip itself becomes an ImportFileError.
 */
export class ZipArchive {
  /** An error yauzl emitted outside a read: kept, so it is neither lost nor unhandled. */
  private failure: Error | null = null;

  private constructor(
    private readonly zip: ZipFile,
    private readonly entries: ReadonlyMap<string, Entry>,
  ) {
    zip.on('error', (error: Error) => {
      this.failure ??= error;
    });
  }

  static async open(path: string): Promise<ZipArchive> {
    let zip: ZipFile;
    try {
      zip = await openPromise(path, { autoClose: false, validateEntrySizes: true, strictFileNames: false });
    } catch (error) {
      throw notAWorkbook(messageOf(error));
    }
    try {
      if (zip.entryCount > MAX_ENTRIES) {
        throw notAWorkbook(`the zip holds more than ${count(MAX_ENTRIES)} files`);
      }
      const entries = new Map<string, Entry>();
      for await (const entry of zip.eachEntry()) {
        if (!entry.fileName.endsWith('/')) entries.set(partKey(entry.fileName), entry);
      }
      return new ZipArchive(zip, entries);
    } catch (error) {
      zip.close();
      throw error instanceof ImportFileError ? error : notAWorkbook(messageOf(error));
    }
  }

  /** Whether the zip holds the part (part names are case-insensitive in OOXML). */
  has(part: string): boolean {
    return this.entries.has(partKey(part));
  }

  /** The inflated bytes of a part, chunk by chunk, each counted against `budget`. */
  async *read(part: string, budget: InflateBudget): AsyncGenerator<Buffer, void, undefined> {
    const entry = this.entries.get(partKey(part));
    if (entry === undefined) throw damaged(`${part} is missing`);
    budget.admit(entry.uncompressedSize);
    let stream: Readable;
    try {
      if (this.failure !== null) throw this.failure;
      stream = await this.zip.openReadStreamPromise(entry);
    } catch (error) {
      throw damaged(`${part}: ${messageOf(error)}`);
    }
    const buffered = new PassThrough({ highWaterMark: READ_AHEAD_BYTES });
    // pipeline passes an error of either stream to the other, and destroys both when one is.
    pipeline(stream, buffered, () => {});
    try {
      for await (const chunk of buffered) {
        budget.spend((chunk as Buffer).length);
        yield chunk as Buffer;
      }
    } catch (error) {
      if (error instanceof ImportFileError) throw error;
      throw damaged(`${part}: ${messageOf(error)}`);
    } finally {
      buffered.destroy();
    }
  }

  close(): void {
    this.zip.close();
  }
}

function partKey(name: string): string {
  return (name.startsWith('/') ? name.slice(1) : name).toLowerCase();
}
