import { ReceiverLimits } from '../src/receiver-limits';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('receiver limits', () => {
  it('admits up to the per-receiver limit, queues as many more, and refuses beyond', async () => {
    const limits = new ReceiverLimits(2, 2, 100);
    const running = [limits.admit(1), limits.admit(1)];
    const waiting = [limits.admit(1), limits.admit(1)];
    expect(limits.admit(1)).toBeNull();
    const releases = await Promise.all(running.map((admitted) => admitted!));
    expect(limits.load(1)).toEqual({ inFlight: 2, waiting: 2 });

    // Another receiver is not affected.
    const other = await limits.admit(2)!;
    other();

    let started = 0;
    for (const admitted of waiting) void admitted!.then(() => started++);
    releases[0]!();
    await tick();
    expect(started).toBe(1);
    expect(limits.load(1)).toEqual({ inFlight: 2, waiting: 1 });
  });

  it('bounds the attempts in flight across receivers, handing freed slots on in order', async () => {
    const limits = new ReceiverLimits(10, 10, 2);
    const a = await limits.admit(1)!;
    await limits.admit(2)!;
    let third = false;
    void limits.admit(3)!.then(() => {
      third = true;
    });
    await tick();
    expect(third).toBe(false);
    a();
    a(); // Releasing twice frees one slot only.
    await tick();
    expect(third).toBe(true);
    expect(limits.load(1)).toEqual({ inFlight: 0, waiting: 0 });
  });
});
