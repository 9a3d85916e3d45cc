import { newRecordId } from '../src/ids';

describe('newRecordId', () => {
  it('makes distinct version 7 UUIDs across batches of random bytes, ordered by their time', () => {
    const ids = Array.from({ length: 2_000 }, (_, i) => newRecordId(1_700_000_000_000 + i));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    // The random parts differ even between ids of the same millisecond.
    const sameTime = Array.from({ length: 600 }, () => newRecordId(1_700_000_000_000).slice(14));
    expect(new Set(sameTime).size).toBe(sameTime.length);
  });
});
