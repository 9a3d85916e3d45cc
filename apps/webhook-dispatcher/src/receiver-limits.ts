/**
 * How many attempts run at once: at most `perReceiver` to one webhook, at most `global` in all. A
 * webhook with all its slots taken may have `queuedPerReceiver` more attempts waiting; beyond that
 * `admit` refuses, and the caller puts the delivery off (a durable row, attempted later) instead of
 * holding it in memory. So a receiver that hangs occupies at most `perReceiver` slots and
 * `queuedPerReceiver` waiters, and deliveries to every other receiver go on.
 */
export type Release = () => void;

interface Lane {
  inFlight: number;
  waiting: (() => void)[];
}

export class ReceiverLimits {
  private readonly lanes = new Map<number, Lane>();
  private globalInFlight = 0;
  private readonly globalWaiting: (() => void)[] = [];

  constructor(
    private readonly perReceiver: number,
    private readonly queuedPerReceiver: number,
    private readonly global: number,
  ) {}

  /** Resolves with a release once the attempt may start; null when the webhook's queue is full. */
  admit(receiver: number): Promise<Release> | null {
    let lane = this.lanes.get(receiver);
    if (!lane) {
      lane = { inFlight: 0, waiting: [] };
      this.lanes.set(receiver, lane);
    }
    const taken = lane;
    if (taken.inFlight < this.perReceiver) {
      taken.inFlight++;
      return this.takeGlobal().then(() => this.releaser(receiver, taken));
    }
    if (taken.waiting.length >= this.queuedPerReceiver) return null;
    return new Promise<void>((resolve) => taken.waiting.push(resolve))
      .then(() => this.takeGlobal())
      .then(() => this.releaser(receiver, taken));
  }

  /** Attempts running or waiting for a slot, for a webhook (tests, metrics). */
  load(receiver: number): { inFlight: number; waiting: number } {
    const lane = this.lanes.get(receiver);
    return { inFlight: lane?.inFlight ?? 0, waiting: lane?.waiting.length ?? 0 };
  }

  private takeGlobal(): Promise<void> {
    if (this.globalInFlight < this.global) {
      this.globalInFlight++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.globalWaiting.push(resolve));
  }

  private releaser(receiver: number, lane: Lane): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const nextGlobal = this.globalWaiting.shift();
      if (nextGlobal) nextGlobal();
      else this.globalInFlight--;
      // The slot passes to the next waiter of the same webhook, or is given back.
      const next = lane.waiting.shift();
      if (next) next();
      else if (--lane.inFlight === 0) this.lanes.delete(receiver);
    };
  }
}
