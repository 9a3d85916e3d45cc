import { Redis } from 'ioredis';

/**
 * Deletes every Redis key under `prefix:` (a BullMQ prefix, a rate limiter's): how tests and
 * benchmarks clean up the queues of a run. Returns how many keys went.
 */
export async function deleteKeysUnder(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}
