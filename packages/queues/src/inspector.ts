import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { openEveryQueue, producerConnection } from './queues';

/**
 * Read access to every queue of the system (events, webhook-deliveries, imports) for the
 * operators' dashboard and the `queue_jobs` metric. Opened at first use, so a process nobody
 * asks about its queues holds no extra Redis connection.
 */
export interface QueueInspector {
  queues(): readonly Queue[];
  close(): Promise<void>;
}

export function createQueueInspector(settings: { redisUrl: string; prefix: string }): QueueInspector {
  let opened: { connection: Redis; queues: Queue[] } | null = null;
  const open = () => {
    // Fail at once while Redis is away: a scrape or a dashboard page should not hang on it.
    const connection = producerConnection(settings.redisUrl, 'records-api:queue-inspector');
    connection.on('error', () => {});
    const queues = openEveryQueue(connection, settings.prefix);
    for (const queue of queues) queue.on('error', () => {});
    return { connection, queues };
  };
  return {
    queues() {
      opened ??= open();
      return opened.queues;
    },
    async close() {
      if (!opened) return;
      const { connection, queues } = opened;
      opened = null;
      await Promise.all(queues.map((queue) => queue.close().catch(() => {})));
      connection.disconnect();
    },
  };
}
