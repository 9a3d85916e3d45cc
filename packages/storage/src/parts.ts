import type { Readable } from 'node:stream';
import type { PartPool } from './part-pool';

export interface Part {
  /**
   * The part's bytes: a span of a buffer lent by the pool, valid until the next part is asked
   * for or the iteration ends (the buffer is then given back and reused by another upload).
   */
  data: Buffer;
  /** The body ended with this part (which may then be empty). */
  last: boolean;
}

const asBuffer = (chunk: unknown): Buffer =>
  Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array | string);

/**
 * Cuts a stream into parts of exactly `pool.partSize` bytes (the last one shorter), copying the
 * body's chunks into buffers borrowed from `pool`, one part at a time: the buffer of a part is
 * given back when the next part is asked for, and the next buffer is borrowed only once the body
 * has a byte for it (an empty last part borrows none). It pulls from `body` only while filling
 * a part, so the body's backpressure reaches its producer while a part is sent or a buffer is
 * awaited. A body that errors or is destroyed (Premature close) makes the iteration throw;
 * leaving the loop early destroys `body`. Either way the buffer goes back to the pool.
 */
export async function* partsOf(body: Readable, pool: PartPool): AsyncGenerator<Part> {
  const size = pool.partSize;
  const chunks = body[Symbol.asyncIterator]();
  // The rest of a chunk that straddled the end of the previous part (a view, not a copy).
  let carry: Buffer | undefined;
  const nextChunk = async (): Promise<Buffer | undefined> => {
    if (carry) {
      const chunk = carry;
      carry = undefined;
      return chunk;
    }
    for (;;) {
      const next = await chunks.next();
      if (next.done) return undefined;
      const chunk = asBuffer(next.value);
      if (chunk.length > 0) return chunk;
    }
  };
  let buffer: Buffer | undefined;
  try {
    for (;;) {
      let chunk = await nextChunk();
      if (chunk === undefined) {
        yield { data: Buffer.alloc(0), last: true };
        return;
      }
      buffer = await pool.acquire();
      let filled = 0;
      while (chunk !== undefined) {
        const copied = chunk.copy(buffer, filled);
        filled += copied;
        if (copied < chunk.length) carry = chunk.subarray(copied);
        if (filled === size) break;
        chunk = await nextChunk();
      }
      const last = chunk === undefined;
      yield { data: buffer.subarray(0, filled), last };
      pool.release(buffer);
      buffer = undefined;
      if (last) return;
    }
  } finally {
    if (buffer) pool.release(buffer);
    // Leaving early (or failing): the body is not read any further.
    await chunks.return?.();
  }
}
