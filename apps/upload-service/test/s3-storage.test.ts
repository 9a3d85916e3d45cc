import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import { S3Storage } from '../src/storage';
import { bytesOf, collect, s3Fixture } from './storage-fixtures';

type Fixture = Awaited<ReturnType<typeof s3Fixture>>;

/** A port on which nothing listens: one just released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
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
