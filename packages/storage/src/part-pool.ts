/**
 * A process-wide memory budget for the parts of S3 uploads: at most `capacity` buffers of
 * `partSize` bytes, made on first need and then reused for ever. An upload borrows one buffer per
 * part and gives it back once the part is stored; when all are lent, the next upload waits for
 * one (first come, first served) instead of allocating, and its body is not read meanwhile, so
 * the client is slowed down by TCP's flow control rather than the process growing. However many
 * uploads run at once, their parts take at most `capacity * partSize` bytes.
 *
 * A borrower holds one buffer at a time and returns it before asking for another, so waiting
 * can never deadlock. A buffer keeps its previous bytes: users only send the span they filled.
 */
export class PartPool {
  private readonly idle: Buffer[] = [];
  private readonly waiting: Array<(buffer: Buffer) => void> = [];
  private created = 0;
  private lentNow = 0;
  private mostLentNow = 0;
  private mostWaitingNow = 0;

  constructor(
    readonly partSize: number,
    readonly capacity: number,
  ) {
    if (!Number.isSafeInteger(partSize) || partSize <= 0)
      throw new RangeError('partSize must be a positive integer');
    if (!Number.isSafeInteger(capacity) || capacity <= 0)
      throw new RangeError('capacity must be a positive integer');
  }

  /** A buffer of `partSize` bytes, now or as soon as one is given back. */
  acquire(): Promise<Buffer> {
    const buffer = this.idle.pop() ?? (this.created < this.capacity ? this.create() : undefined);
    if (buffer) {
      this.lend();
      return Promise.resolve(buffer);
    }
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.mostWaitingNow = Math.max(this.mostWaitingNow, this.waiting.length);
    });
  }

  /** Gives a buffer back: to the longest waiter, or to the idle ones. */
  release(buffer: Buffer): void {
    this.lentNow--;
    const next = this.waiting.shift();
    if (next) {
      this.lend();
      next(buffer);
    } else {
      this.idle.push(buffer);
    }
  }

  /** What the pool holds and has done, for tests and metrics. */
  stats() {
    return {
      created: this.created,
      lent: this.lentNow,
      mostLent: this.mostLentNow,
      waiting: this.waiting.length,
      mostWaiting: this.mostWaitingNow,
    };
  }

  private create(): Buffer {
    this.created++;
    // Unpooled and uninitialised: every byte sent is written first.
    return Buffer.allocUnsafeSlow(this.partSize);
  }

  private lend(): void {
    this.lentNow++;
    this.mostLentNow = Math.max(this.mostLentNow, this.lentNow);
  }
}
