import { Transform } from 'node:stream';

/** Bytes kept from the start of a file: every signature the detector reads lies in them. */
export const HEAD_BYTES = 64 * 1024;
/** Bytes kept from the end: a ZIP's end record and, for most archives, its whole central directory. */
export const TAIL_BYTES = 256 * 1024;

/** What the detector sees of one file: its two ends, its size and a verdict over all its bytes. */
export interface ContentSample {
  /** The first min(size, HEAD_BYTES) bytes. */
  readonly head: Buffer;
  /** The last min(size, TAIL_BYTES) bytes; it overlaps the head when the file is small. */
  readonly tail: Buffer;
  /** Every byte of the file, counted. */
  readonly size: number;
  /** The whole file is valid UTF-8 and holds no NUL byte (a UTF-8 BOM is allowed). */
  readonly isText: boolean;
}

/** A buffer that doubles as it fills, up to a capacity, so small files cost little. */
class GrowingBuffer {
  bytes = Buffer.alloc(0);

  constructor(private readonly capacity: number) {}

  /** Makes room for `needed` bytes (at most the capacity), keeping the first `kept`. */
  reserve(needed: number, kept: number): void {
    if (needed <= this.bytes.length) return;
    const size = Math.min(this.capacity, Math.max(needed, this.bytes.length * 2, 4096));
    const next = Buffer.alloc(size);
    this.bytes.copy(next, 0, 0, kept);
    this.bytes = next;
  }
}

/** Keeps the first `capacity` bytes written and ignores the rest. */
class Prefix {
  private readonly store: GrowingBuffer;
  private length = 0;

  constructor(private readonly capacity: number) {
    this.store = new GrowingBuffer(capacity);
  }

  add(chunk: Uint8Array): void {
    const piece = chunk.subarray(0, this.capacity - this.length);
    if (piece.length === 0) return;
    this.store.reserve(this.length + piece.length, this.length);
    this.store.bytes.set(piece, this.length);
    this.length += piece.length;
  }

  get allocated(): number {
    return this.store.bytes.length;
  }

  contents(): Buffer {
    return this.store.bytes.subarray(0, this.length);
  }
}

/**
 * Keeps the last `capacity` bytes written: a ring once full, so each chunk costs its own length
 * and never a copy of the window (one-byte chunks stay linear).
 */
class Suffix {
  private readonly store: GrowingBuffer;
  /** Index of the oldest byte kept; non-zero only once the ring has wrapped. */
  private start = 0;
  private length = 0;

  constructor(private readonly capacity: number) {
    this.store = new GrowingBuffer(capacity);
  }

  add(chunk: Uint8Array): void {
    const piece = chunk.subarray(Math.max(0, chunk.length - this.capacity));
    if (piece.length === 0) return;
    // Growth happens only before the first wrap, while the kept bytes sit at 0..length.
    this.store.reserve(Math.min(this.capacity, this.length + piece.length), this.length);
    const ring = this.store.bytes;
    const size = ring.length;
    const write = (this.start + this.length) % size;
    const first = Math.min(piece.length, size - write);
    ring.set(piece.subarray(0, first), write);
    ring.set(piece.subarray(first), 0);
    const overflow = Math.max(0, this.length + piece.length - size);
    this.start = (this.start + overflow) % size;
    this.length = Math.min(size, this.length + piece.length);
  }

  get allocated(): number {
    return this.store.bytes.length;
  }

  contents(): Buffer {
    const ring = this.store.bytes;
    if (this.start === 0) return ring.subarray(0, this.length);
    return Buffer.concat([ring.subarray(this.start), ring.subarray(0, this.start)]);
  }
}

/**
 * Whether every byte so far is UTF-8 without NUL. The streaming decoder carries a character split
 * across chunks into the next one; its output is dropped, only its refusal matters.
 */
class Utf8Check {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  private valid = true;

  add(chunk: Uint8Array): void {
    if (!this.valid) return;
    if (chunk.indexOf(0) !== -1) {
      this.valid = false;
      return;
    }
    this.valid = this.decodes(() => this.decoder.decode(chunk, { stream: true }));
  }

  /** The verdict; a character left unfinished at the end makes the file not text. */
  finish(): boolean {
    if (this.valid) this.valid = this.decodes(() => this.decoder.decode());
    return this.valid;
  }

  private decodes(step: () => string): boolean {
    try {
      step();
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * Watches a file's chunks as they stream past and keeps only what detection needs: the head, the
 * tail, the byte count and the running UTF-8 verdict. Its buffers never exceed HEAD_BYTES +
 * TAIL_BYTES (320 KB) whatever the file's size. Feed it with `push` for each chunk, in order, then
 * call `finish` once the stream has ended; `sniffingStream` does both for a piped stream.
 */
export class ContentCollector {
  private readonly head = new Prefix(HEAD_BYTES);
  private readonly tail = new Suffix(TAIL_BYTES);
  private readonly utf8 = new Utf8Check();
  private bytes = 0;
  private sample: ContentSample | undefined;

  push(chunk: Uint8Array): void {
    if (this.sample) throw new Error('ContentCollector: push after finish');
    this.head.add(chunk);
    this.tail.add(chunk);
    this.utf8.add(chunk);
    this.bytes += chunk.length;
  }

  /** The sample of everything pushed; later calls return the same one. */
  finish(): ContentSample {
    this.sample ??= {
      head: this.head.contents(),
      tail: this.tail.contents(),
      size: this.bytes,
      isText: this.utf8.finish(),
    };
    return this.sample;
  }

  /** Bytes pushed so far. */
  get size(): number {
    return this.bytes;
  }

  /** Bytes the collector's buffers hold allocated: the bound on its memory. */
  get retainedBytes(): number {
    return this.head.allocated + this.tail.allocated;
  }
}

/**
 * A pass-through stream that shows every chunk to `collector` on its way, for
 * `pipeline(upload, sniffingStream(collector), storage)`; call `collector.finish()` once the
 * pipeline has ended.
 */
export function sniffingStream(collector: ContentCollector): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      collector.push(chunk);
      callback(null, chunk);
    },
  });
}

/** The sample of a file already in memory (tests, small payloads). */
export function sampleOf(bytes: Uint8Array): ContentSample {
  const collector = new ContentCollector();
  collector.push(bytes);
  return collector.finish();
}
