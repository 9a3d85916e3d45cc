import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, opendir, realpath, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { confinedDir, confinedFile, errorCode } from './confined-path';
import { assertByteRange, assertStorageKey, assertStoragePrefix, isStorageKey } from './keys';
import { type ByteRange, type StorageDriver, StorageNotFoundError } from './object-storage';

function reason(error: unknown): string {
  return errorCode(error) ?? (error instanceof Error ? error.message : String(error));
}

/** Creates the storage directory at start-up when it is missing; a failure names the directory. */
export async function ensureStorageDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw new Error(`Cannot create STORAGE_DIR ${dir} (${reason(error)}). Create it or set STORAGE_DIR.`);
  }
  await checkStorageWritable(dir).catch((error: Error) => {
    throw new Error(`${error.message}: ${dir}. Fix its permissions or set STORAGE_DIR.`);
  });
}

/**
 * Readiness of the storage: the directory exists and a file can be written to it and removed.
 * Writing a probe (rather than asking `access`) also catches read-only mounts and a root user,
 * for whom permission bits say yes. The message names the problem but not the path: it is logged
 * whenever a readiness check fails, and the operator knows the path from STORAGE_DIR.
 */
export async function checkStorageWritable(dir: string): Promise<void> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(dir);
  } catch (error) {
    throw new Error(`storage directory is missing or unreachable (${reason(error)})`);
  }
  if (!info.isDirectory()) throw new Error('storage path is not a directory');
  const probe = join(dir, `.readyz-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(probe, '');
  } catch (error) {
    throw new Error(`storage directory is not writable (${reason(error)})`);
  }
  await unlink(probe).catch(() => {});
}

/** A file removed between finding and opening it is simply absent; other errors are real. */
function absentAsNull(error: unknown): null {
  if (errorCode(error) === 'ENOENT') return null;
  throw error;
}

const ignore = (): void => {};

/** Temporary files start with a dot, which no key segment can: they never collide with a key. */
const TEMP_PREFIX = '.upload-';

/** Files under a directory (STORAGE_DIR), one per key, the key's segments as directories. */
export class LocalDiskStorage implements StorageDriver {
  readonly name = 'local' as const;

  constructor(readonly root: string) {}

  prepare(): Promise<void> {
    return ensureStorageDir(this.root);
  }

  check(): Promise<void> {
    return checkStorageWritable(this.root);
  }

  /**
   * Streams into a temporary file beside the final one and renames it into place only once the
   * body ended well: rename within a directory is atomic, so a reader sees the whole file or
   * none, and a failed put removes its temporary file.
   */
  async put(key: string, body: Readable, _contentType: string): Promise<{ size: number }> {
    assertStorageKey(key);
    const segments = key.split('/');
    // Until the pipeline listens, an error of the body (the client went away while we make
    // directories) must not be an unhandled 'error' event, which would crash the process; the
    // pipeline still sees it, as the stream's stored error.
    body.on('error', ignore);
    let temp: string | undefined;
    try {
      const dir = (await confinedDir(await realpath(this.root), segments.slice(0, -1), true))!;
      temp = join(dir, `${TEMP_PREFIX}${randomBytes(12).toString('hex')}.tmp`);
      // 'wx' fails rather than share a file with anyone; flush fsyncs before close, so a crash
      // after the rename cannot leave an empty file under the key.
      const out = createWriteStream(temp, { flags: 'wx', flush: true });
      // pipeline settles only once both streams are closed, so the rm below cannot race the write.
      await pipeline(body, out);
      await rename(temp, join(dir, segments.at(-1)!));
      return { size: out.bytesWritten };
    } catch (error) {
      body.destroy();
      if (temp) await rm(temp, { force: true });
      throw error;
    } finally {
      body.off('error', ignore);
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    assertStorageKey(key);
    if (range) assertByteRange(range);
    const file = await confinedFile(await realpath(this.root), key.split('/'));
    // Opened here, so that a missing file rejects now rather than as a stream error later.
    const handle = file === null ? null : await open(file, 'r').catch(absentAsNull);
    if (handle === null) throw new StorageNotFoundError(key);
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new StorageNotFoundError(key);
      if (range && range.start >= info.size) throw new RangeError('byte range starts past the end');
      return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async stat(key: string): Promise<{ size: number } | null> {
    assertStorageKey(key);
    const file = await confinedFile(await realpath(this.root), key.split('/'));
    const info = file === null ? null : await stat(file).catch(absentAsNull);
    return info?.isFile() ? { size: info.size } : null;
  }

  async delete(key: string): Promise<void> {
    assertStorageKey(key);
    const segments = key.split('/');
    const dir = await confinedDir(await realpath(this.root), segments.slice(0, -1), false);
    if (dir === null) return;
    // unlink removes a symlink itself, never its target. Empty directories stay: removing them
    // would race a concurrent put into the same directory.
    await unlink(join(dir, segments.at(-1)!)).catch((error: unknown) => {
      if (!['ENOENT', 'ENOTDIR', 'EISDIR'].includes(errorCode(error) ?? '')) throw error;
    });
  }

  async *list(prefix: string): AsyncIterable<string> {
    assertStoragePrefix(prefix);
    // Start at the deepest directory the prefix names; its last partial segment filters.
    const dirKey = prefix.slice(0, Math.max(0, prefix.lastIndexOf('/')));
    const start = await confinedDir(await realpath(this.root), dirKey ? dirKey.split('/') : [], false);
    if (start !== null) yield* walk(start, dirKey, prefix);
  }
}

/** Keys of the regular files below `dir`; never follows symlinks, skips dot files (temporaries, probes). */
async function* walk(dir: string, dirKey: string, prefix: string): AsyncGenerator<string> {
  const entries = await opendir(dir).catch((error: unknown) => {
    // A directory removed while we walk simply has nothing left to list.
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return null;
    throw error;
  });
  if (entries === null) return;
  for await (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const key = dirKey ? `${dirKey}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (`${key}/`.startsWith(prefix) || prefix.startsWith(`${key}/`))
        yield* walk(join(dir, entry.name), key, prefix);
    } else if (entry.isFile() && key.startsWith(prefix) && isStorageKey(key)) {
      yield key;
    }
  }
}
