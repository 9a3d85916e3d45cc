import { Redis } from 'ioredis';

/** A client of a Redis that is not there: every command fails at once, as when Redis is away. */
export function unreachableRedis(): Redis {
  return new Redis('redis://127.0.0.1:1', {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
}
