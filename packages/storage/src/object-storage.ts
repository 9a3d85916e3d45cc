import type { Readable } from 'node:stream';

/** An inclusive byte range, as in an HTTP `Range: bytes=start-end` header. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Where uploaded files live. Every method validates its key first (`assertStorageKey`) and
 * refuses a bad one with InvalidStorageKeyError before touching storage.
 */
export interface ObjectStorage {
  /** Which driver, for logs and /readyz. */
  readonly name: 'local' | 's3';
  /**
   * Streams `body` to `key`. Resolves once stored; on any error (including `body` erroring or
   * being destroyed) rejects, destroys `body` and leaves at `key` what was there before
   * (nothing, for a new key). Never holds the body whole in memory.
   */
  put(key: string, body: Readable, contentType: string): Promise<{ size: number }>;
  /**
   * The bytes of `key`, or the inclusive byte range (an `end` past the last byte stops at the
   * last byte). Rejects with StorageNotFoundError when absent, and with RangeError when the
   * range is malformed or starts past the last byte.
   */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** Size of `key`, or null when absent. */
  stat(key: string): Promise<{ size: number } | null>;
  /** Idempotent. */
  delete(key: string): Promise<void>;
  /** Every key under a prefix (a plain string prefix, as in S3), in no particular order. */
  list(prefix: string): AsyncIterable<string>;
  /** Readiness: can write and delete a probe. Throws with a message that names the problem but no path or secret. */
  check(): Promise<void>;
}

/** A driver plus the start-up work `main` runs once: create the storage directory or the bucket. */
export interface StorageDriver extends ObjectStorage {
  prepare(): Promise<void>;
}

export class StorageNotFoundError extends Error {
  constructor(key: string) {
    super(`no stored object at key ${key}`);
    this.name = 'StorageNotFoundError';
  }
}

export class InvalidStorageKeyError extends Error {
  constructor(reason: string) {
    super(`invalid storage key: ${reason}`);
    this.name = 'InvalidStorageKeyError';
  }
}
