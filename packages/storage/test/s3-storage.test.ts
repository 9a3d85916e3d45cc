import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import { PartPool, S3Storage } from '../src';
import { DEFAULT_PART_SIZE } from '../src/s3';
import { bytesOf, CHUNK, collect, lazyBody, s3Fixture, sha256Of } from './storage-fixtures';

type Fixture = Awaited<ReturnType<typeof s3Fixture>>;

const MiB = 1024 * 1024;

/** A port on which nothing listens: one just released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Resolves when `condition` holds, checking as often as the event loop allows; fails after 10 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('S3 storage', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await s3Fixture();
  });
  afterAll(() => f.close());

  it('creates a missing bucket at start-up, and does so idempotently', async () => {
    const other = new S3Storage({ ...f.options, bucket: 'made-at-start' });
    await expect(other.check()).rejects.toThrow('object storage is not writable (NoSuchBucket)');
    await other.prepare();
    await other.prepare();
    await other.put('k', Readable.from([Buffer.from('in the new bucket')]), 'text/plain');
    expect((await bytesOf(await other.get('k'))).toString()).toBe('in the new bucket');
    expect(await collect(f.storage.list(''))).not.toContain('k');
  });

  it('stores the content type given to put', async () => {
    await f.storage.put('typed/file.pdf', Readable.from([Buffer.from('%PDF-')]), 'application/pdf');
    const response = (await f.storage.get('typed/file.pdf')) as Readable & {
      headers: Record<string, string>;
    };
    expect(response.headers['content-type']).toBe('application/pdf');
    response.resume();
  });

  // s3rver does not verify V4 signatures, so a wrong secret key cannot be shown here; an
  // access key it does not know stands for bad credentials.
  it('names the readiness problem without the keys or the endpoint', async () => {
    const secretKey = 'wrong-secret-0123456789';
    const cases: Array<[S3Storage, RegExp]> = [
      [
        new S3Storage({ ...f.options, accessKey: 'UNKNOWNKEYID', secretKey }),
        /^object storage is not writable \(InvalidAccessKeyId\)$/,
      ],
      [
        new S3Storage({ ...f.options, bucket: 'no-such-bucket' }),
        /^object storage is not writable \(NoSuchBucket\)$/,
      ],
      [
        new S3Storage({ ...f.options, endpoint: `http://127.0.0.1:${await closedPort()}` }),
        /^object storage is not writable \(ECONNREFUSED\)$/,
      ],
    ];
    for (const [storage, expected] of cases) {
      const error = await storage.check().then(
        () => new Error('check passed'),
        (caught: Error) => caught,
      );
      expect(error.message).toMatch(expected);
      expect(error.message).not.toContain(secretKey);
      expect(error.message).not.toContain('127.0.0.1');
    }
  });

  it('fails at start-up naming the bucket, but not the keys, when the bucket cannot be used', async () => {
    const secretKey = 'wrong-secret-0123456789';
    const storage = new S3Storage({
      ...f.options,
      bucket: 'another-bucket',
      accessKey: 'UNKNOWNKEYID',
      secretKey,
    });
    const error = await storage.prepare().then(
      () => new Error('prepare passed'),
      (caught: Error) => caught,
    );
    expect(error.message).toMatch(
      /^Cannot use S3 bucket another-bucket \((AccessDenied|InvalidAccessKeyId)\)/,
    );
    expect(error.message).not.toContain(secretKey);
  });
});

describe('S3 storage: the part pool', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await s3Fixture();
  });
  afterAll(() => f.close());

  it('keeps concurrent uploads within the pool, every object stored byte for byte', async () => {
    const pool = new PartPool(DEFAULT_PART_SIZE, 2);
    const storage = new S3Storage({ ...f.options, partPool: pool });
    // Single-part, multipart, exact multiples and an empty body, all at once: 7 uploads, 2 buffers.
    const sizes = [11 * MiB, 7 * MiB, DEFAULT_PART_SIZE, 2 * DEFAULT_PART_SIZE, 3 * MiB, 1, 0];
    const bodies = sizes.map((size, index) => ({
      key: `pooled/${index}`,
      size,
      body: lazyBody(`p${index}`, size),
    }));
    const results = await Promise.all(
      bodies.map(({ key, body }) => storage.put(key, body.stream, 'image/png')),
    );
    expect(results).toEqual(sizes.map((size) => ({ size })));
    for (const { key, size, body } of bodies)
      expect(await sha256Of(await storage.get(key))).toEqual({ sha256: body.sha256(), size });
    // Uploads waited for buffers rather than making more; all were given back.
    expect(pool.stats()).toMatchObject({ created: 2, lent: 0, mostLent: 2, waiting: 0 });
    expect(pool.stats().mostWaiting).toBeGreaterThan(0);
    expect(await f.leftovers()).toEqual([]);
  });

  it('does not read the body of an upload waiting for a buffer', async () => {
    const pool = new PartPool(DEFAULT_PART_SIZE, 1);
    const storage = new S3Storage({ ...f.options, partPool: pool });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The first upload holds the only buffer while its client is slow ...
    const slow = lazyBody('holder', 7 * MiB, {
      async beforeChunk(made) {
        if (made === MiB) await released;
      },
    });
    const holding = storage.put('waits/holder', slow.stream, 'application/pdf');
    await until(() => slow.made() === MiB, 'the first upload read 1 MiB');
    // ... so the second one waits, having read no more than the chunk it waits with.
    const waiter = lazyBody('waiter', 3 * MiB);
    const waiting = storage.put('waits/waiter', waiter.stream, 'application/pdf');
    await until(() => pool.stats().waiting === 1, 'the second upload waits for a buffer');
    for (let tick = 0; tick < 20; tick++) await new Promise((resolve) => setImmediate(resolve));
    expect(waiter.made()).toBeLessThanOrEqual(2 * CHUNK);
    release();
    await expect(holding).resolves.toEqual({ size: 7 * MiB });
    await expect(waiting).resolves.toEqual({ size: 3 * MiB });
    expect(await sha256Of(await storage.get('waits/waiter'))).toEqual({
      sha256: waiter.sha256(),
      size: 3 * MiB,
    });
    expect(pool.stats()).toMatchObject({ created: 1, lent: 0, mostLent: 1 });
  });
});
