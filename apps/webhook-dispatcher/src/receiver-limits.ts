/**
 * How many attempts run at once: at most `perReceiver` to one webhook, at most `global` in all.
 *
 * An attempt that finds its webhook's slots taken waits for one, unless the webhook is stuck: all
 * its slots taken and the oldest attempt running for longer than `stuckAfterMs`. Then `admit`
 * answers null, and so do the attempts already waiting (checked every `stuckAfterMs / 4`): the
 * caller puts the delivery off (a durable row, tried later) instead of holding it, and the event
 * it belongs to. So a receiver that hangs holds its own slots, never anyone else's; a receiver
 * that is merely busy keeps its queue.
 */
export type Release = () => void;

interface Lane {
  /** Start times of the attempts running (those holding a global slot too). */
  running: Set<{ startedAt: number }>;
  /** Slots taken, including attempts still waiting for a global slot. */
  taken: number;
  waiting: ((admitted: boolean) => void)[];
}

export class ReceiverLimits {
  private readonly lanes = new Map<number, Lane>();
  private globalInFlight = 0;
  private readonly globalWaiting: (() => void)[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly perReceiver: number,
    private readonly global: number,
    private readonly options: { stuckAfterMs?: number; maxWaitingPerReceiver?: number } = {},
  ) {
    this.timer = setInterval(() => this.releaseWaitersOfStuckLanes(), Math.max(50, this.stuckAfterMs / 4));
    this.timer.unref();
  }

  private get stuckAfterMs(): number {
    return this.options.stuckAfterMs ?? 1000;
  }

  /** Resolves with a release once the attempt may start, or with null: put the delivery off. */
  admit(receiver: number): Promise<Release | null> {
    let lane = this.lanes.get(receiver);
    if (!lane) {
      lane = { running: new Set(), taken: 0, waiting: [] };
      this.lanes.set(receiver, lane);
    }
    const taken = lane;
    if (taken.taken < this.perReceiver) {
      taken.taken++;
      return this.start(receiver, taken);
    }
    if (this.stuck(taken) || taken.waiting.length >= (this.options.maxWaitingPerReceiver ?? 1000)) {
      return Promise.resolve(null);
    }
    return new Promise<boolean>((resolve) => taken.waiting.push(resolve)).then((admitted) =>
      admitted ? this.start(receiver, taken) : null,
    );
  }

  /** Attempts running or waiting for a slot, for a webhook (tests, metrics). */
  load(receiver: number): { inFlight: number; waiting: number } {
    const lane = this.lanes.get(receiver);
    return { inFlight: lane?.taken ?? 0, waiting: lane?.waiting.length ?? 0 };
  }

  close(): void {
    clearInterval(this.timer);
  }

  private stuck(lane: Lane): boolean {
    if (lane.running.size < this.perReceiver) return false;
    const cutoff = Date.now() - this.stuckAfterMs;
    for (const attempt of lane.running) if (attempt.startedAt <= cutoff) return true;
    return false;
  }

  private releaseWaitersOfStuckLanes(): void {
    for (const lane of this.lanes.values()) {
      if (lane.waiting.length > 0 && this.stuck(lane)) {
        for (const resolve of lane.waiting.splice(0)) resolve(false);
      }
    }
  }

  /** Takes a global slot for an attempt that holds its lane slot, then marks it running. */
  private async start(receiver: number, lane: Lane): Promise<Release> {
    if (this.globalInFlight < this.global) this.globalInFlight++;
    else await new Promise<void>((resolve) => this.globalWaiting.push(resolve));
    const attempt = { startedAt: Date.now() };
    lane.running.add(attempt);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      lane.running.delete(attempt);
      const nextGlobal = this.globalWaiting.shift();
      if (nextGlobal) nextGlobal();
      else this.globalInFlight--;
      // The lane slot passes to the next waiter of the same webhook, or is given back.
      const next = lane.waiting.shift();
      if (next) next(true);
      else if (--lane.taken === 0) this.lanes.delete(receiver);
    };
  }
}
