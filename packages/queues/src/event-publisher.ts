import { createBatcher } from '@recordbase/server-kit/batcher';
import type { Logger } from '@recordbase/server-kit/logger';
import { addEventJobs, openQueue, producerConnection } from './queues';

/**
 * Hands committed events to the webhook dispatcher's events queue, right after the transaction
 * that wrote them commits. The outbox row is the guarantee, not this: a publish lost to a Redis
 * outage or a crash after the commit is found by the dispatcher's sweep (an undispatched event).
 * So publishing never fails a request; it is logged, and events published in the same tick go to
 * Redis in one call.
 */
export interface EventPublisher {
  /** Fire and forget: call only after the commit. */
  publish(eventIds: readonly string[]): void;
  close(): Promise<void>;
}

export function createEventPublisher(settings: {
  redisUrl: string;
  prefix: string;
  logger: Logger;
}): EventPublisher {
  const { logger } = settings;
  let lastWarning = 0;
  const warn = (error: unknown, message: string) => {
    // An outage raises an error per attempt; one line every 10 s says enough.
    const now = Date.now();
    if (now - lastWarning < 10_000) return;
    lastWarning = now;
    logger.warn({ err: error }, message);
  };
  // Fails at once while Redis is away rather than queue; the sweep sends what was not published.
  const connection = producerConnection(settings.redisUrl, 'records-api:events');
  connection.on('error', (error) => warn(error, 'events queue: redis connection error'));
  const queue = openQueue('events', connection, settings.prefix);
  queue.on('error', (error) => warn(error, 'events queue error'));
  const add = createBatcher<string, void>(
    async (eventIds) => {
      await addEventJobs(queue, eventIds);
      return eventIds.map(() => undefined);
    },
    { maxBatch: 500, maxInFlight: 4 },
  );
  let closed = false;

  return {
    publish(eventIds) {
      if (closed) return;
      for (const eventId of eventIds) {
        add(eventId).catch((error: unknown) =>
          warn(error, 'could not publish an event; the dispatcher will find it in the outbox'),
        );
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await queue.close().catch(() => {});
      if (connection.status === 'ready') await connection.quit().catch(() => connection.disconnect());
      else connection.disconnect();
    },
  };
}
