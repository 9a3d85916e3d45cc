/**
 * Each API key's share of a process's database connections. PostgreSQL gives every backend an
 * equal share of the CPU, so a key running many slow statements at once (listings past an index,
 * read-only SQL) takes the machine from every other key, and one holding the pool takes its
 * connections too. A key holds at most `perKey` connections of a process at once; its further
 * requests wait their turn among its own (first come, first served), never ahead of other keys,
 * and one that waits past `waitMs` fails with KeyShareBusy (a 429 for its key alone). A `budget`
 * of database time, when given, is asked before a request queues and again when a place it waited
 * for is its turn (requests queued at once would otherwise each start on the budget they all saw
 * whole, and one key would run past it by the length of its queue), and is told how long each
 * place was held. A key that has spent half its budget or more holds one place at a time: its
 * work then runs at most one backend's turn of the CPU while it keeps running at its budget's
 * edge, and a key working in short bursts keeps its parallel places.
 */

/** The part of its budget a key has spent from which it holds one place at a time. */
export const HEAVY_SPENDER_FRACTION = 0.5;

export interface DbTimeSpender {
  /** Throws when the key may not start more database work now; else the part of its budget spent (0 to 1). */
  check(key: string): Promise<number>;
  spend(key: string, ms: number): void;
}

export class KeyShareBusy extends Error {
  constructor(readonly places: number) {
    super(`this API key's requests hold their share of database connections (${places} at once)`);
    this.name = 'KeyShareBusy';
  }
}

export interface KeyShares {
  /** Waits for a place of `key`'s share; resolves to its release (idempotent). */
  acquire(key: string, signal?: AbortSignal): Promise<() => void>;
}

interface Waiter {
  grant(): void;
  fail(error: Error): void;
}

interface Share {
  held: number;
  /** Places the key may hold: `perKey`, or one once its latest check found it a heavy spender. */
  places: number;
  waiters: Waiter[];
}

export function createKeyShares(options: {
  perKey: number;
  waitMs: number;
  budget?: DbTimeSpender;
}): KeyShares {
  const shares = new Map<string, Share>();

  const releaser = (key: string, share: Share) => {
    let released = false;
    const since = performance.now();
    return () => {
      if (released) return;
      released = true;
      options.budget?.spend(key, performance.now() - since);
      // Past its places (it became a heavy spender while holding more), the place is not passed
      // on: a waiter always has a holder ahead of it whose release will grant it.
      const next = share.held <= share.places ? share.waiters.shift() : undefined;
      if (next) {
        next.grant();
        return;
      }
      share.held -= 1;
      if (share.held === 0) shares.delete(key);
    };
  };

  /** A place, and whether the request had to wait for it. */
  type Taken = { release: () => void; waited: boolean };

  const placesFor = (spent: number) => (spent >= HEAVY_SPENDER_FRACTION ? 1 : options.perKey);

  const take = (key: string, places: number, signal?: AbortSignal): Promise<Taken> => {
    // Gone while its budget was asked: it takes no place.
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('the request was aborted'));
    let share = shares.get(key);
    if (!share) {
      share = { held: 0, places, waiters: [] };
      shares.set(key, share);
    }
    const current = share;
    current.places = places;
    if (current.held < current.places) {
      current.held += 1;
      return Promise.resolve({ release: releaser(key, current), waited: false });
    }
    return new Promise<Taken>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        const index = current.waiters.indexOf(waiter);
        if (index >= 0) current.waiters.splice(index, 1);
      };
      const waiter: Waiter = {
        // The place of the request that left passes to this one: `held` is unchanged.
        grant: () => {
          leave();
          resolve({ release: releaser(key, current), waited: true });
        },
        fail: (error) => {
          leave();
          reject(error);
        },
      };
      const timer = setTimeout(() => waiter.fail(new KeyShareBusy(current.places)), options.waitMs);
      const aborted = () => waiter.fail(signal?.reason ?? new Error('the request was aborted'));
      signal?.addEventListener('abort', aborted, { once: true });
      current.waiters.push(waiter);
    });
  };

  return {
    async acquire(key, signal) {
      const spent = (await options.budget?.check(key)) ?? 0;
      const { release, waited } = await take(key, placesFor(spent), signal);
      if (waited && options.budget) {
        try {
          const share = shares.get(key);
          const spentNow = await options.budget.check(key);
          if (share) share.places = placesFor(spentNow);
        } catch (error) {
          // The place passes on at once to the next in line, which is asked in turn.
          release();
          throw error;
        }
      }
      return release;
    },
  };
}

/**
 * A request's claim on its key's share: taken by its first connection, kept while it holds any
 * (a request never waits for a second place while holding one, so two of a key's requests cannot
 * wait on each other), given back when it holds none.
 */
export function requestShare(shares: KeyShares, key: string, signal?: AbortSignal) {
  let holding = 0;
  let place: Promise<() => void> | undefined;
  return {
    async enter(): Promise<void> {
      holding += 1;
      place ??= shares.acquire(key, signal);
      try {
        await place;
      } catch (error) {
        holding -= 1;
        if (holding === 0) place = undefined;
        throw error;
      }
    },
    leave(): void {
      holding -= 1;
      if (holding > 0 || !place) return;
      const release = place;
      place = undefined;
      release.then(
        (done) => done(),
        () => {},
      );
    },
  };
}
