import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Readable } from 'node:stream';
import S3rver from 's3rver';
import { LocalDiskStorage, S3Storage, type StorageDriver } from '../src';

/** A storage driver on throwaway ground, with a look behind the interface where tests need one. */
export interface StorageFixture {
  storage: StorageDriver;
  /** Bytes already stored by puts still in progress: temporary files, or uploaded parts. */
  bytesInFlight(): Promise<number>;
  /** What a failed put could leave behind: temporary files, or multipart uploads never aborted. */
  leftovers(): Promise<string[]>;
  /** Every file beside the storage (next to the root, or outside the bucket) with its size. */
  surroundings(): Promise<string[]>;
  close(): Promise<void>;
}

/** Files below `dir` (relative paths), skipping `exclude`. */
async function filesBelow(dir: string, exclude?: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((path) => !exclude || (path !== exclude && !path.startsWith(`${exclude}/`)))
    .map((path) => relative(dir, path))
    .sort();
}

async function withSizes(dir: string, paths: string[]): Promise<string[]> {
  return Promise.all(paths.map(async (path) => `${path} ${(await stat(join(dir, path))).size}`));
}

async function totalSize(dir: string, paths: string[]): Promise<number> {
  let total = 0;
  for (const path of paths)
    total += await stat(join(dir, path)).then(
      (info) => info.size,
      () => 0,
    );
  return total;
}

/** The disk driver rooted at `<scratch>/root`, with `<scratch>/outside/secret.txt` beside it. */
export async function localDiskFixture(): Promise<StorageFixture & { root: string; outside: string }> {
  const scratch = await mkdtemp(join(tmpdir(), 'storage-local-'));
  const root = join(scratch, 'root');
  const outside = join(scratch, 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'not for the storage');
  const storage = new LocalDiskStorage(root);
  await storage.prepare();
  const temporaries = async () =>
    (await filesBelow(root)).filter((path) => path.split('/').at(-1)!.startsWith('.upload-'));
  return {
    storage,
    root,
    outside,
    bytesInFlight: async () => totalSize(root, await temporaries()),
    leftovers: temporaries,
    surroundings: async () => withSizes(scratch, await filesBelow(scratch, root)),
    close: () => rm(scratch, { recursive: true, force: true }),
  };
}

export const S3_BUCKET = 'recordbase-test';

/** The S3 driver against s3rver on an ephemeral port, storing under a temporary directory. */
export async function s3Fixture(): Promise<
  StorageFixture & { endpoint: string; server: S3rver; options: ConstructorParameters<typeof S3Storage>[0] }
> {
  const directory = await mkdtemp(join(tmpdir(), 'storage-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  // s3rver's one account.
  const options = {
    endpoint,
    bucket: S3_BUCKET,
    accessKey: 'S3RVER',
    secretKey: 'S3RVER',
    region: 'us-east-1',
  };
  const storage = new S3Storage(options);
  await storage.prepare();
  // s3rver keeps each unfinished multipart upload as a directory of numbered part files here.
  const uploads = join(directory, S3_BUCKET, '._S3rver_uploads');
  return {
    storage,
    endpoint,
    server,
    options,
    bytesInFlight: async () =>
      totalSize(
        uploads,
        (await filesBelow(uploads)).filter((path) => /\/\d+$/.test(path)),
      ),
    leftovers: async () => (await readdir(uploads).catch(() => [])).sort(),
    surroundings: async () => withSizes(directory, await filesBelow(directory, join(directory, S3_BUCKET))),
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

export const CHUNK = 64 * 1024;

/** Chunk `index` of the bodies named `seed`: recomputable anywhere, so bodies need not be kept. */
function chunkOf(seed: string, index: number): Buffer {
  return Buffer.alloc(CHUNK, createHash('sha256').update(`${seed}:${index}`).digest());
}

/** Bytes `start`..`end` (inclusive) of the body named `seed`. */
export function bodyBytes(seed: string, start: number, end: number): Buffer {
  const parts: Buffer[] = [];
  for (let index = Math.floor(start / CHUNK); index * CHUNK <= end; index++) parts.push(chunkOf(seed, index));
  const from = Math.floor(start / CHUNK) * CHUNK;
  return Buffer.concat(parts).subarray(start - from, end - from + 1);
}

export interface LazyBodyOptions {
  /** Awaited before each chunk is made, with the number of bytes made so far. */
  beforeChunk?(made: number): Promise<void>;
  /** After this many bytes, the body errors with `error` (or is destroyed without one). */
  stopAt?: number;
  error?: Error;
}

/**
 * A body of `size` bytes made one chunk at a time, only when the consumer reads (`read()` is
 * called again only after the previous chunk was pushed): nothing exists before it is asked
 * for, so a driver that buffered the whole body would have made all of it.
 */
export function lazyBody(seed: string, size: number, options: LazyBodyOptions = {}) {
  const hash = createHash('sha256');
  let made = 0;
  let index = 0;
  async function produce(): Promise<void> {
    if (options.stopAt !== undefined && made >= options.stopAt) {
      // From outside a read, as when busboy destroys a file stream because the client went away.
      setImmediate(() => stream.destroy(options.error));
      return;
    }
    if (made >= size) {
      stream.push(null);
      return;
    }
    await options.beforeChunk?.(made);
    const chunk = chunkOf(seed, index++).subarray(0, Math.min(CHUNK, size - made));
    hash.update(chunk);
    made += chunk.length;
    stream.push(chunk);
  }
  const stream = new Readable({
    highWaterMark: CHUNK,
    read() {
      produce().catch((error: unknown) => stream.destroy(error as Error));
    },
  });
  return { stream, made: () => made, sha256: () => hash.digest('hex') };
}

export async function sha256Of(stream: Readable): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest('hex'), size };
}

export async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

export async function collect(keys: AsyncIterable<string>): Promise<string[]> {
  const all: string[] = [];
  for await (const key of keys) all.push(key);
  return all.sort();
}
