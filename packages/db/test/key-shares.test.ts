import { createKeyShares, HEAVY_SPENDER_FRACTION, KeyShareBusy, requestShare } from '../src/key-shares';

const settle = <T>(promise: Promise<T>) =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('key shares', () => {
  it("admits a key's requests up to its share, then in order as places free, never another key's", async () => {
    const shares = createKeyShares({ perKey: 2, waitMs: 10_000 });
    const first = await shares.acquire('a');
    await shares.acquire('a');
    const order: string[] = [];
    const third = shares.acquire('a').then((release) => {
      order.push('third');
      return release;
    });
    const fourth = shares.acquire('a').then((release) => {
      order.push('fourth');
      return release;
    });
    // Another key is not behind them.
    await shares.acquire('b');
    await tick();
    expect(order).toEqual([]);
    first();
    first();
    await tick();
    expect(order).toEqual(['third']);
    (await third)();
    await tick();
    expect(order).toEqual(['third', 'fourth']);
    await fourth;
  });

  it('fails a request that waited past waitMs with KeyShareBusy, and one whose client left', async () => {
    const shares = createKeyShares({ perKey: 1, waitMs: 50 });
    const held = await shares.acquire('a');
    const waited = await settle(shares.acquire('a'));
    expect((waited as { error: unknown }).error).toBeInstanceOf(KeyShareBusy);
    const left = new AbortController();
    const leaving = settle(shares.acquire('a', left.signal));
    left.abort(new Error('gone'));
    expect(((await leaving) as { error: Error }).error.message).toBe('gone');
    // Neither took the place: it goes to the next request once released.
    held();
    await shares.acquire('a');
  });

  it('takes one place per request however many connections it holds at once, and frees it with the last', async () => {
    const shares = createKeyShares({ perKey: 1, waitMs: 10_000 });
    const request = requestShare(shares, 'a');
    await request.enter();
    await request.enter();
    let other = false;
    const next = shares.acquire('a').then((release) => {
      other = true;
      return release;
    });
    request.leave();
    await tick();
    expect(other).toBe(false);
    request.leave();
    await tick();
    expect(other).toBe(true);
    await next;
  });

  it('asks the budget again when a queued request gets its place, so a queue cannot run past it', async () => {
    // A budget of one place's time: spent as soon as any place is given back.
    let spent = false;
    const budget = {
      async check() {
        if (spent) throw new Error('budget spent');
        return 0;
      },
      spend() {
        spent = true;
      },
    };
    const shares = createKeyShares({ perKey: 1, waitMs: 10_000, budget });
    const first = await shares.acquire('a');
    // Both queue while the budget is still whole.
    const second = settle(shares.acquire('a'));
    const third = settle(shares.acquire('a'));
    await tick();
    first();
    expect(((await second) as { error: Error }).error.message).toBe('budget spent');
    expect(((await third) as { error: Error }).error.message).toBe('budget spent');
    // The places they were refused are free again, not leaked.
    spent = false;
    const again = await Promise.race([shares.acquire('a'), tick().then(() => 'still waiting')]);
    expect(typeof again).toBe('function');
  });

  it('gives a key that has spent half its budget one place at a time, and its places back once it refills', async () => {
    const spentOf = new Map<string, number>();
    const budget = {
      async check(key: string) {
        return spentOf.get(key) ?? 0;
      },
      spend() {},
    };
    const shares = createKeyShares({ perKey: 2, waitMs: 10_000, budget });
    const holding = async (key: string) => {
      const places: Array<() => void> = [];
      const waiting: Array<Promise<() => void>> = [];
      for (let i = 0; i < 3; i += 1) {
        const place = shares.acquire(key);
        const got = await Promise.race([place, tick().then(() => null)]);
        if (got) places.push(got);
        else waiting.push(place);
      }
      return { places, waiting };
    };

    spentOf.set('heavy', HEAVY_SPENDER_FRACTION);
    spentOf.set('light', HEAVY_SPENDER_FRACTION - 0.01);
    const heavy = await holding('heavy');
    expect([heavy.places.length, heavy.waiting.length]).toEqual([1, 2]);
    const light = await holding('light');
    expect([light.places.length, light.waiting.length]).toEqual([2, 1]);

    // Still heavy: each release passes its one place on.
    heavy.places[0]!();
    heavy.places[0] = await heavy.waiting.shift()!;
    // Refilled: the next request may hold a second place beside the first.
    spentOf.set('heavy', 0);
    const second = await Promise.race([shares.acquire('heavy'), tick().then(() => null)]);
    expect(typeof second).toBe('function');

    // A key that turns heavy while holding two gives one up before passing a place on.
    spentOf.set('light', 1);
    const queued = shares.acquire('light');
    await tick();
    let granted: (() => void) | undefined;
    void light.waiting[0]!.then((release) => {
      granted = release;
    });
    light.places[0]!();
    await tick();
    expect(granted).toBeUndefined();
    light.places[1]!();
    await tick();
    expect(granted).toBeDefined();
    // The rest, in order, one at a time.
    granted!();
    (await queued)();
    for (const release of [...heavy.places, second!]) release();
  });
});
