import { Readable } from 'node:stream';
import { PartPool } from '../src/part-pool';
import { partsOf } from '../src/parts';

/** The parts of `chunks` cut by a pool of `capacity` buffers of `size` bytes, copied out. */
async function cut(chunks: string[], size: number, capacity = 1) {
  const pool = new PartPool(size, capacity);
  const parts: Array<{ data: string; last: boolean; lent: number }> = [];
  for await (const part of partsOf(Readable.from(chunks.map((chunk) => Buffer.from(chunk))), pool))
    parts.push({ data: part.data.toString(), last: part.last, lent: pool.stats().lent });
  return { parts, stats: pool.stats() };
}

describe('PartPool', () => {
  it('makes buffers only when needed, never more than its capacity, and reuses them', async () => {
    const pool = new PartPool(8, 2);
    expect(pool.stats()).toMatchObject({ created: 0, lent: 0 });
    const a = await pool.acquire();
    const b = await pool.acquire();
    expect(a.length).toBe(8);
    expect(a).not.toBe(b);
    pool.release(a);
    expect(await pool.acquire()).toBe(a);
    expect(pool.stats()).toMatchObject({ created: 2, lent: 2, mostLent: 2 });
  });

  it('makes a borrower wait for a buffer given back, first come first served', async () => {
    const pool = new PartPool(8, 1);
    const held = await pool.acquire();
    const order: string[] = [];
    const first = pool.acquire().then((buffer) => {
      order.push('first');
      return buffer;
    });
    const second = pool.acquire().then((buffer) => {
      order.push('second');
      return buffer;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    expect(pool.stats()).toMatchObject({ lent: 1, waiting: 2, mostWaiting: 2 });
    pool.release(held);
    expect(await first).toBe(held);
    expect(order).toEqual(['first']);
    pool.release(held);
    expect(await second).toBe(held);
    pool.release(held);
    expect(pool.stats()).toEqual({ created: 1, lent: 0, mostLent: 1, waiting: 0, mostWaiting: 2 });
  });

  it('refuses a size or capacity that is not a positive integer', () => {
    expect(() => new PartPool(0, 1)).toThrow(RangeError);
    expect(() => new PartPool(5, 0)).toThrow(RangeError);
    expect(() => new PartPool(5, 1.5)).toThrow(RangeError);
  });
});

describe('partsOf', () => {
  it('cuts parts of exactly the pool size across chunk boundaries, the last one shorter', async () => {
    const { parts, stats } = await cut(['abc', 'defgh', '', 'ijklmnopq', 'r'], 4);
    expect(parts).toEqual([
      { data: 'abcd', last: false, lent: 1 },
      { data: 'efgh', last: false, lent: 1 },
      { data: 'ijkl', last: false, lent: 1 },
      { data: 'mnop', last: false, lent: 1 },
      { data: 'qr', last: true, lent: 1 },
    ]);
    // One buffer for all five parts, given back at the end.
    expect(stats).toMatchObject({ created: 1, lent: 0, mostLent: 1 });
  });

  it('ends a body of whole parts with an empty last part, for which it borrows nothing', async () => {
    const { parts, stats } = await cut(['abcd', 'efgh'], 4);
    expect(parts).toEqual([
      { data: 'abcd', last: false, lent: 1 },
      { data: 'efgh', last: false, lent: 1 },
      { data: '', last: true, lent: 0 },
    ]);
    expect(stats.lent).toBe(0);
  });

  it('gives an empty body one empty last part without making a buffer', async () => {
    const { parts, stats } = await cut([], 4);
    expect(parts).toEqual([{ data: '', last: true, lent: 0 }]);
    expect(stats.created).toBe(0);
  });

  it('gives the buffer back and destroys the body when the loop is left early', async () => {
    const pool = new PartPool(4, 1);
    const body = Readable.from([Buffer.from('abcdefghijkl')]);
    for await (const part of partsOf(body, pool)) {
      expect(part.data.toString()).toBe('abcd');
      break;
    }
    expect(pool.stats().lent).toBe(0);
    expect(body.destroyed).toBe(true);
  });

  it('gives the buffer back when the body errors midway', async () => {
    const pool = new PartPool(4, 1);
    async function* failing() {
      yield Buffer.from('abcdef');
      throw new Error('client went away');
    }
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const part of partsOf(Readable.from(failing()), pool)) seen.push(part.data.toString());
      })(),
    ).rejects.toThrow('client went away');
    expect(seen).toEqual(['abcd']);
    expect(pool.stats().lent).toBe(0);
  });
});
