import { createBatcher } from '../src/batcher';

describe('createBatcher', () => {
  it('serves the items submitted in one tick with one call, each caller getting its own answer', async () => {
    const calls: number[][] = [];
    const double = createBatcher<number, number>(async (items) => {
      calls.push(items);
      return items.map((item) => item * 2);
    });
    expect(await Promise.all([1, 2, 3].map(double))).toEqual([2, 4, 6]);
    expect(calls).toEqual([[1, 2, 3]]);
  });

  it('gathers what arrives while the calls in flight run into the next call, up to maxBatch', async () => {
    const calls: number[][] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const echo = createBatcher<number, number>(
      async (items) => {
        calls.push(items);
        if (calls.length === 1) await gate;
        return items;
      },
      { maxBatch: 2, maxInFlight: 1 },
    );
    const first = echo(0);
    await new Promise((resolve) => setImmediate(resolve));
    const rest = [1, 2, 3, 4, 5].map(echo);
    release();
    expect(await Promise.all([first, ...rest])).toEqual([0, 1, 2, 3, 4, 5]);
    expect(calls).toEqual([[0], [1, 2], [3, 4], [5]]);
  });

  it('rejects every caller of a failed call, and serves later callers again', async () => {
    let fail = true;
    const flaky = createBatcher<number, number>(async (items) => {
      if (fail) throw new Error('database away');
      return items;
    });
    const results = await Promise.allSettled([flaky(1), flaky(2)]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await flaky(3)).toBe(3);
  });
});
