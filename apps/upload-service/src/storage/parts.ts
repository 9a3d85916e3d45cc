import type { Readable } from 'node:stream';

export interface Part {
  data: Buffer;
  /** The body ended with this part (which may then be empty). */
  last: boolean;
}

/**
 * Cuts a stream into parts of exactly `size` bytes (the last one shorter). It pulls from `body`
 * only when asked for the next part, so at most one part (plus one chunk) is in memory, and the
 * body's backpressure reaches its producer while a part is being sent. A body that errors or is
 * destroyed (Premature close) makes the iteration throw; leaving the loop early destroys `body`.
 */
export async function* partsOf(body: Readable, size: number): AsyncGenerator<Part> {
  let pending: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    pending.push(buffer);
    length += buffer.length;
    while (length >= size) {
      const joined = Buffer.concat(pending, length);
      yield { data: joined.subarray(0, size), last: false };
      const rest = joined.subarray(size);
      // A copy, so that the part just sent is not kept alive by its small remainder.
      pending = rest.length > 0 ? [Buffer.from(rest)] : [];
      length = rest.length;
    }
  }
  yield { data: Buffer.concat(pending, length), last: true };
}
