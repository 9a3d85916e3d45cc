import type { Logger } from '@recordbase/server-kit/logger';
import { addImportJob, openQueue, producerConnection } from './queues';

/**
 * The queue import jobs wait in: records-api adds one per import it accepts, the worker takes
 * them. The import's id is the job's, so an import queued twice runs once. Redis away at that
 * moment loses nothing: the import stays `queued` in PostgreSQL and the worker's sweep queues it.
 */
export interface ImportQueue {
  enqueue(importId: string): Promise<void>;
  /** Takes a waiting import off the queue (a cancel); a running one stops on its own. */
  remove(importId: string): Promise<void>;
  close(): Promise<void>;
}

export function createImportQueue(settings: {
  redisUrl: string;
  prefix: string;
  logger: Logger;
}): ImportQueue {
  const connection = producerConnection(settings.redisUrl, 'records-api:imports');
  connection.on('error', () => {});
  const queue = openQueue('imports', connection, settings.prefix);
  queue.on('error', () => {});
  return {
    async enqueue(importId) {
      try {
        await addImportJob(queue, importId);
      } catch (error) {
        settings.logger.warn(
          { err: error, importId },
          'import not queued now; the worker sweep will queue it',
        );
      }
    },
    async remove(importId) {
      await queue.remove(importId).catch(() => 0);
    },
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
}
