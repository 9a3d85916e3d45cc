/**
 * Coalesces single requests into batched calls: items submitted while a batch is being formed or
 * while `maxInFlight` batches run are sent together in the next call, so under load one round trip
 * serves many callers (group commit), and at low load an item waits for nothing but the next tick.
 */
export type Batched<I, O> = (item: I) => Promise<O>;

export function createBatcher<I, O>(
  run: (items: I[]) => Promise<O[]>,
  options: { maxBatch?: number; maxInFlight?: number } = {},
): Batched<I, O> {
  const maxBatch = options.maxBatch ?? 500;
  const maxInFlight = options.maxInFlight ?? 2;
  const queue: { item: I; resolve(value: O): void; reject(error: unknown): void }[] = [];
  let inFlight = 0;
  let scheduled = false;

  const pump = () => {
    scheduled = false;
    while (inFlight < maxInFlight && queue.length > 0) {
      const batch = queue.splice(0, maxBatch);
      inFlight++;
      run(batch.map((entry) => entry.item))
        .then(
          (results) => {
            for (const [index, entry] of batch.entries()) entry.resolve(results[index] as O);
          },
          (error: unknown) => {
            for (const entry of batch) entry.reject(error);
          },
        )
        .finally(() => {
          inFlight--;
          if (queue.length > 0) schedule();
        });
    }
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(pump);
  };

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      schedule();
    });
}
