import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Client } from 'minio';
import { assertByteRange, assertStorageKey, assertStoragePrefix, isStorageKey } from './keys';
import { type ByteRange, type StorageDriver, StorageNotFoundError } from './object-storage';
import { PartPool } from './part-pool';
import { partsOf } from './parts';

export interface S3StorageOptions {
  /** e.g. http://127.0.0.1:9000 */
  endpoint: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  region: string;
  /**
   * The buffers parts are assembled in, shared by every upload of this storage: their number
   * bounds the memory of all uploads in progress, and an upload waits for a free one. Its part
   * size (at least 5 MiB, S3's smallest part but the last) is the bytes sent per request. By
   * default DEFAULT_PART_BUFFERS parts of DEFAULT_PART_SIZE.
   */
  partPool?: PartPool;
}

/** 5 MiB: S3's minimum part size, and so the least memory one upload can hold. */
export const DEFAULT_PART_SIZE = 5 * 1024 * 1024;
/** Parts held at once by all uploads together: 4 x 5 MiB = 20 MiB. */
export const DEFAULT_PART_BUFFERS = 4;

const code = (error: unknown): string | undefined => (error as { code?: unknown } | null)?.code as string;

/** What went wrong, for a message: the S3 or socket error code, never the text (it can name hosts). */
const describe = (error: unknown): string =>
  code(error) ?? (error instanceof Error ? error.name : 'unknown error');

/**
 * An S3 bucket through the `minio` client. Uploads drive the multipart protocol here rather than
 * through `putObject(stream)`: minio 8.0.7's streaming upload never settles when the body is
 * destroyed (minio-js#1479), sizes its parts at up to 5 TiB/10000 for a body of unknown length,
 * and resumes any earlier unfinished upload of the same key. A part must be whole before it is
 * sent (its SHA-256 signs the request over http, and its length is its Content-Length), so parts
 * are assembled in buffers of a shared pool (`partPool`) and go one at a time: one upload holds
 * at most one part, and all uploads together at most the pool's buffers; the rest wait.
 */
export class S3Storage implements StorageDriver {
  readonly name = 's3' as const;
  readonly bucket: string;
  private readonly client: Client;
  private readonly region: string;
  /** Shared by every put of this storage; `main` makes one storage per process. */
  readonly partPool: PartPool;

  constructor(options: S3StorageOptions) {
    const url = new URL(options.endpoint);
    const useSSL = url.protocol === 'https:';
    this.bucket = options.bucket;
    this.region = options.region;
    this.partPool = options.partPool ?? new PartPool(DEFAULT_PART_SIZE, DEFAULT_PART_BUFFERS);
    this.client = new Client({
      endPoint: url.hostname,
      port: url.port ? Number(url.port) : useSSL ? 443 : 80,
      useSSL,
      accessKey: options.accessKey,
      secretKey: options.secretKey,
      // Known region: no GetBucketLocation round trip before the first request.
      region: options.region,
      pathStyle: true,
      // Bounds the client's own chunking too, should anything call putObject with a stream.
      partSize: this.partPool.partSize,
    });
  }

  prepare(): Promise<void> {
    return this.ensureBucket();
  }

  /** Creates the bucket when missing (start-up). The message names the bucket, never the keys. */
  async ensureBucket(): Promise<void> {
    try {
      if (await this.client.bucketExists(this.bucket)) return;
      await this.client.makeBucket(this.bucket, this.region);
    } catch (error) {
      // Another replica starting at the same moment made it first.
      if (code(error) === 'BucketAlreadyOwnedByYou') return;
      throw new Error(
        `Cannot use S3 bucket ${this.bucket} (${describe(error)}). Check S3_ENDPOINT, S3_BUCKET and the keys.`,
      );
    }
  }

  /** Probe keys start with a dot, which no storage key can, and `list` skips them. */
  async check(): Promise<void> {
    const probe = `.readyz/${process.pid}-${randomBytes(6).toString('hex')}`;
    try {
      await this.client.putObject(this.bucket, probe, Buffer.alloc(0), 0);
    } catch (error) {
      throw new Error(`object storage is not writable (${describe(error)})`);
    }
    await this.client.removeObject(this.bucket, probe).catch(() => {});
  }

  /**
   * A body that fits in one part is sent with one PUT; a longer one as a multipart upload, which
   * S3 makes visible only when completed (atomic), and which is aborted on any failure, so that
   * no object and no stored parts remain.
   */
  async put(key: string, body: Readable, contentType: string): Promise<{ size: number }> {
    assertStorageKey(key);
    const headers = { 'Content-Type': contentType };
    const parts: Array<{ part: number; etag: string }> = [];
    let uploadId: string | undefined;
    let size = 0;
    try {
      for await (const { data, last } of partsOf(body, this.partPool)) {
        size += data.length;
        if (last && uploadId === undefined) {
          // The request uploadPart makes, as a plain PUT: putObject would first copy the part
          // out of its pooled buffer (Buffer.from), an allocation per upload.
          await this.client.makeRequestAsyncOmit(
            { method: 'PUT', bucketName: this.bucket, objectName: key, headers },
            data,
            [200],
          );
          return { size };
        }
        // A body of exactly N parts ends with an empty "last" part, which is not sent.
        if (data.length === 0) break;
        uploadId ??= await this.client.initiateNewMultipartUpload(this.bucket, key, headers);
        const part = parts.length + 1;
        const { etag } = await this.client.uploadPart(
          // uploadPart puts the id in the query as given: escaped here, since S3's ids need not be URL-safe.
          {
            bucketName: this.bucket,
            objectName: key,
            uploadID: encodeURIComponent(uploadId),
            partNumber: part,
            headers: {},
          },
          data,
        );
        parts.push({ part, etag });
      }
      await this.client.completeMultipartUpload(this.bucket, key, uploadId!, parts);
      return { size };
    } catch (error) {
      body.destroy();
      // Best effort: a failed abort leaves only invisible parts, which a bucket lifecycle rule
      // for incomplete multipart uploads removes; the caller needs the original error.
      if (uploadId !== undefined)
        await this.client.abortMultipartUpload(this.bucket, key, uploadId).catch(() => {});
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    assertStorageKey(key);
    if (range) assertByteRange(range);
    try {
      return range
        ? await this.client.getPartialObject(this.bucket, key, range.start, range.end - range.start + 1)
        : await this.client.getObject(this.bucket, key);
    } catch (error) {
      if (isNotFound(error)) throw new StorageNotFoundError(key);
      if (code(error) === 'InvalidRange') throw new RangeError('byte range starts past the end');
      throw error;
    }
  }

  async stat(key: string): Promise<{ size: number } | null> {
    assertStorageKey(key);
    try {
      return { size: (await this.client.statObject(this.bucket, key)).size };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertStorageKey(key);
    // S3 answers 204 for a missing key too: idempotent as it is.
    await this.client.removeObject(this.bucket, key);
  }

  async *list(prefix: string): AsyncIterable<string> {
    assertStoragePrefix(prefix);
    for await (const item of this.client.listObjectsV2(this.bucket, prefix, true)) {
      // Skips readiness probes in flight, and anything else in the bucket that is not a key.
      if (item.name && isStorageKey(item.name)) yield item.name;
    }
  }
}

/** GET answers NoSuchKey with an error body; HEAD has no body, so minio reports NotFound. */
const isNotFound = (error: unknown): boolean => code(error) === 'NoSuchKey' || code(error) === 'NotFound';
