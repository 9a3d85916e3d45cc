import { ReceiverLimits } from '../src/receiver-limits';

const tick = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('receiver limits', () => {
  let limits: ReceiverLimits | undefined;
  afterEach(() => limits?.close());

  it('runs up to the per-receiver limit and queues the rest of a busy receiver, in order', async () => {
    limits = new ReceiverLimits(2, 100);
    const running = await Promise.all([limits.admit(1), limits.admit(1)]);
    const order: number[] = [];
    const waiting = [3, 4].map((n) =>
      limits!.admit(1).then((release) => {
        order.push(n);
        return release;
      }),
    );
    await tick();
    expect(limits.load(1)).toEqual({ inFlight: 2, waiting: 2 });
    // Another receiver is not affected.
    const other = await limits.admit(2);
    expect(other).not.toBeNull();
    other!();

    running[0]!();
    running[1]!();
    const admitted = await Promise.all(waiting);
    expect(order).toEqual([3, 4]);
    expect(admitted.every((release) => release !== null)).toBe(true);
  });

  it('answers null, for new and waiting attempts, once a full receiver has an attempt running past the stuck time', async () => {
    limits = new ReceiverLimits(2, 100, { stuckAfterMs: 100 });
    await Promise.all([limits.admit(1), limits.admit(1)]);
    const waiter = limits.admit(1);
    await sleep(250);
    expect(await waiter).toBeNull();
    expect(await limits.admit(1)).toBeNull();
    expect(await limits.admit(2)).not.toBeNull();
  });

  it('bounds the attempts running across receivers, handing freed slots on', async () => {
    limits = new ReceiverLimits(10, 2);
    const first = (await limits.admit(1))!;
    await limits.admit(2);
    let third = false;
    void limits.admit(3).then(() => {
      third = true;
    });
    await tick();
    expect(third).toBe(false);
    first();
    first(); // Releasing twice frees one slot only.
    await tick();
    expect(third).toBe(true);
    expect(limits.load(1)).toEqual({ inFlight: 0, waiting: 0 });
  });
});
