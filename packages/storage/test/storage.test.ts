import { Readable } from 'node:stream';
import { InvalidStorageKeyError, type ObjectStorage, StorageNotFoundError } from '../src';
import { DEFAULT_PART_SIZE } from '../src/s3';
import {
  bodyBytes,
  bytesOf,
  collect,
  lazyBody,
  localDiskFixture,
  type StorageFixture,
  s3Fixture,
  sha256Of,
} from './storage-fixtures';

const MiB = 1024 * 1024;
const BIG = 25 * MiB;

/** Resolves when `condition` holds, checking as often as the event loop allows (no clock involved). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}

const drivers: Array<[name: string, start: () => Promise<StorageFixture>]> = [
  ['local', localDiskFixture],
  ['s3', s3Fixture],
];

describe.each(drivers)('%s storage', (_name, start) => {
  let f: StorageFixture;
  let storage: ObjectStorage;
  beforeAll(async () => {
    f = await start();
    storage = f.storage;
  });
  afterAll(() => f.close());

  it('streams a 25 MiB body in and back out intact, holding only a bounded part of it at a time', async () => {
    // The body makes each chunk only when read; every MiB it compares what it has made with
    // what storage has already received. A driver holding the whole body would be 25 MiB ahead.
    let mostAhead = 0;
    const body = lazyBody('big', BIG, {
      async beforeChunk(made) {
        if (made % MiB === 0) mostAhead = Math.max(mostAhead, made - (await f.bytesInFlight()));
      },
    });
    await expect(storage.put('big/body.bin', body.stream, 'application/octet-stream')).resolves.toEqual({
      size: BIG,
    });
    expect(mostAhead).toBeLessThan(BIG / 2);
    expect(await storage.stat('big/body.bin')).toEqual({ size: BIG });
    expect(await sha256Of(await storage.get('big/body.bin'))).toEqual({ sha256: body.sha256(), size: BIG });
    // A range across the boundary between the first two parts of a multipart upload.
    const across = { start: DEFAULT_PART_SIZE - 3, end: DEFAULT_PART_SIZE + 2 };
    expect(await bytesOf(await storage.get('big/body.bin', across))).toEqual(
      bodyBytes('big', across.start, across.end),
    );
    expect(await f.leftovers()).toEqual([]);
  });

  it('round-trips an empty body, one byte, and a body of exactly one part size', async () => {
    for (const size of [0, 1, DEFAULT_PART_SIZE]) {
      const body = lazyBody(`sized-${size}`, size);
      await expect(storage.put(`sized/${size}`, body.stream, 'application/octet-stream')).resolves.toEqual({
        size,
      });
      expect(await storage.stat(`sized/${size}`)).toEqual({ size });
      expect(await sha256Of(await storage.get(`sized/${size}`))).toEqual({ sha256: body.sha256(), size });
    }
    expect(await f.leftovers()).toEqual([]);
  });

  it('serves byte ranges: the first byte, a middle span, the last byte, an end past the last byte', async () => {
    const size = 1000;
    await storage.put('ranges/file', lazyBody('ranges', size).stream, 'text/plain');
    const expectRange = async (start: number, end: number) =>
      expect(await bytesOf(await storage.get('ranges/file', { start, end }))).toEqual(
        bodyBytes('ranges', start, Math.min(end, size - 1)),
      );
    await expectRange(0, 0);
    await expectRange(100, 599);
    await expectRange(size - 1, size - 1);
    await expectRange(990, 5000);
    expect((await bytesOf(await storage.get('ranges/file', { start: 0, end: 0 }))).length).toBe(1);
  });

  it('refuses with RangeError a range that starts past the end or is malformed', async () => {
    await storage.put('ranges/small', Readable.from([Buffer.from('0123456789')]), 'text/plain');
    await expect(storage.get('ranges/small', { start: 10, end: 20 })).rejects.toThrow(RangeError);
    for (const range of [
      { start: 5, end: 4 },
      { start: -1, end: 3 },
      { start: 0.5, end: 3 },
      { start: 0, end: Number.NaN },
    ])
      await expect(storage.get('ranges/small', range)).rejects.toThrow(RangeError);
  });

  it('stats an object, and answers null for a missing key or a key that is only a prefix', async () => {
    await storage.put('stat/dir/file.txt', Readable.from([Buffer.from('12345')]), 'text/plain');
    expect(await storage.stat('stat/dir/file.txt')).toEqual({ size: 5 });
    expect(await storage.stat('stat/dir/missing.txt')).toBeNull();
    expect(await storage.stat('stat/nowhere/at/all')).toBeNull();
    expect(await storage.stat('stat/dir')).toBeNull();
  });

  it('deletes, and deleting again or deleting what never existed is fine', async () => {
    await storage.put('delete/me.txt', Readable.from([Buffer.from('bye')]), 'text/plain');
    await storage.delete('delete/me.txt');
    expect(await storage.stat('delete/me.txt')).toBeNull();
    await expect(storage.delete('delete/me.txt')).resolves.toBeUndefined();
    await expect(storage.delete('delete/never/existed')).resolves.toBeUndefined();
    await expect(storage.get('delete/me.txt')).rejects.toThrow(StorageNotFoundError);
  });

  it('lists every key under a prefix, and nothing else', async () => {
    const keys = ['list/a/1', 'list/a/2', 'list/a/deep/3', 'list/ab/4', 'list/b'];
    for (const key of keys) await storage.put(key, Readable.from([Buffer.from(key)]), 'text/plain');
    expect(await collect(storage.list('list/a/'))).toEqual(['list/a/1', 'list/a/2', 'list/a/deep/3']);
    expect(await collect(storage.list('list/a'))).toEqual([
      'list/a/1',
      'list/a/2',
      'list/a/deep/3',
      'list/ab/4',
    ]);
    expect(await collect(storage.list('list/'))).toEqual(keys);
    expect(await collect(storage.list('list/zzz/'))).toEqual([]);
    expect(await collect(storage.list(''))).toEqual(expect.arrayContaining(keys));
  });

  it('get of a missing key rejects with StorageNotFoundError', async () => {
    await expect(storage.get('missing/key')).rejects.toThrow(StorageNotFoundError);
    await expect(storage.get('missing/key', { start: 0, end: 0 })).rejects.toThrow(StorageNotFoundError);
    await expect(storage.get('never-a-directory/missing/key')).rejects.toThrow(StorageNotFoundError);
  });

  it('a put whose body errors midway rejects with that error and leaves nothing behind', async () => {
    // Past the first part, so that the S3 driver has a multipart upload to abort.
    const body = lazyBody('fails', BIG, { stopAt: 7 * MiB, error: new Error('client went away') });
    await expect(storage.put('failed/errored.bin', body.stream, 'application/pdf')).rejects.toThrow(
      'client went away',
    );
    expect(body.made()).toBe(7 * MiB);
    expect(await storage.stat('failed/errored.bin')).toBeNull();
    expect(await collect(storage.list('failed/'))).toEqual([]);
    expect(await f.leftovers()).toEqual([]);
  });

  it('a put whose body is destroyed midway rejects and leaves nothing behind', async () => {
    for (const stopAt of [0, MiB, 6 * MiB]) {
      const body = lazyBody('destroyed', BIG, { stopAt });
      await expect(storage.put(`failed/destroyed-${stopAt}`, body.stream, 'text/csv')).rejects.toThrow(
        /premature close/i,
      );
      expect(await storage.stat(`failed/destroyed-${stopAt}`)).toBeNull();
    }
    expect(await collect(storage.list('failed/'))).toEqual([]);
    expect(await f.leftovers()).toEqual([]);
  });

  it('a put whose body errors before the driver reads it rejects with that error', async () => {
    const already = Readable.from([Buffer.from('x')]);
    already.destroy(new Error('errored before put'));
    await expect(storage.put('failed/early', already, 'text/plain')).rejects.toThrow('errored before put');
    // While the driver is still preparing (directories, a first request): the error must reach
    // put's rejection, not crash the process as an unhandled 'error' event.
    const meanwhile = lazyBody('meanwhile', MiB);
    const put = storage.put('failed/meanwhile', meanwhile.stream, 'text/plain');
    meanwhile.stream.destroy(new Error('errored while preparing'));
    await expect(put).rejects.toThrow('errored while preparing');
    expect(await collect(storage.list('failed/'))).toEqual([]);
    expect(await f.leftovers()).toEqual([]);
  });

  it('a failed put over an existing key leaves the old bytes whole', async () => {
    await storage.put('replace/me', Readable.from([Buffer.from('old bytes')]), 'text/plain');
    const body = lazyBody('replacement', BIG, { stopAt: 6 * MiB, error: new Error('aborted') });
    await expect(storage.put('replace/me', body.stream, 'text/plain')).rejects.toThrow('aborted');
    expect((await bytesOf(await storage.get('replace/me'))).toString()).toBe('old bytes');
  });

  it('keeps a put in progress invisible until its body has ended', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const size = 7 * MiB;
    const body = lazyBody('slow', size, {
      async beforeChunk(made) {
        if (made === 6 * MiB) await released;
      },
    });
    const put = storage.put('slow/upload.bin', body.stream, 'application/octet-stream');
    // Storage has received bytes (a temporary file, or a first part) before we look.
    await until(async () => (await f.bytesInFlight()) > 0);
    expect(await storage.stat('slow/upload.bin')).toBeNull();
    await expect(storage.get('slow/upload.bin')).rejects.toThrow(StorageNotFoundError);
    expect(await collect(storage.list('slow/'))).toEqual([]);
    release();
    await expect(put).resolves.toEqual({ size });
    expect(await sha256Of(await storage.get('slow/upload.bin'))).toEqual({ sha256: body.sha256(), size });
  });

  it('stores concurrent puts of different keys intact', async () => {
    const sizes = [1, 3 * MiB, 6 * MiB, 11 * MiB, 64 * 1024, 5 * MiB + 1];
    const bodies = sizes.map((size, index) => ({
      key: `concurrent/${index}`,
      size,
      body: lazyBody(`c${index}`, size),
    }));
    const results = await Promise.all(
      bodies.map(({ key, body }) => storage.put(key, body.stream, 'image/png')),
    );
    expect(results).toEqual(sizes.map((size) => ({ size })));
    for (const { key, size, body } of bodies)
      expect(await sha256Of(await storage.get(key))).toEqual({ sha256: body.sha256(), size });
    expect(await f.leftovers()).toEqual([]);
  });

  const badKeys = [
    '../x',
    'a/../../etc/passwd',
    '/abs',
    'a//b',
    'a\\b',
    'a%2F..',
    'a\u0000b',
    '.hidden',
    'a/.hidden',
    'a/',
    '',
    '..',
    'a/b/c/d/e/f/g/h/i',
    `${'a'.repeat(129)}`,
    'k'.repeat(600),
    `${'a'.repeat(100)}/`.repeat(6).slice(0, -1),
    'a b',
    'ä',
  ];

  it.each(badKeys.map((key) => [JSON.stringify(key).slice(0, 40), key]))(
    'refuses the key %s in put, get, stat and delete, touching nothing',
    async (_shown, key) => {
      const before = await f.surroundings();
      const body = Readable.from([Buffer.from('must not be stored')]);
      await expect(storage.put(key, body, 'text/plain')).rejects.toThrow(InvalidStorageKeyError);
      expect(body.readableDidRead).toBe(false);
      await expect(storage.get(key)).rejects.toThrow(InvalidStorageKeyError);
      await expect(storage.get(key, { start: 0, end: 0 })).rejects.toThrow(InvalidStorageKeyError);
      await expect(storage.stat(key)).rejects.toThrow(InvalidStorageKeyError);
      await expect(storage.delete(key)).rejects.toThrow(InvalidStorageKeyError);
      expect(await f.surroundings()).toEqual(before);
    },
  );

  it.each(['../', '/', 'a//', '.x', 'a/../'])('refuses the list prefix %j', async (prefix) => {
    await expect(collect(storage.list(prefix))).rejects.toThrow(InvalidStorageKeyError);
  });

  it('accepts keys at the limits: 8 segments, 128-character segments, 512 characters', async () => {
    const keys = ['a/b/c/d/e/f/g/h', 'Z'.repeat(128), `${'x'.repeat(127)}/`.repeat(4).slice(0, -1) + 'y'];
    expect(keys[2]!.length).toBe(512);
    for (const key of keys) {
      await storage.put(key, Readable.from([Buffer.from('ok')]), 'text/plain');
      expect(await storage.stat(key)).toEqual({ size: 2 });
      await storage.delete(key);
    }
  });

  it('check() writes and removes its probe, leaving no key behind', async () => {
    const before = await collect(storage.list(''));
    await expect(storage.check()).resolves.toBeUndefined();
    expect(await collect(storage.list(''))).toEqual(before);
    expect(await f.leftovers()).toEqual([]);
  });
});
