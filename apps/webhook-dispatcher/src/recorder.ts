import {
  type DeliveryOutcome,
  type RecordedDelivery,
  recordDeliveries,
  type ScheduledDelivery,
} from '@recordbase/db';
import { createBatcher } from '@recordbase/server-kit/batcher';
import type { Logger } from '@recordbase/server-kit/logger';
import type pg from 'pg';
import type { DispatcherMetrics } from './metrics';

/**
 * Writes what attempts did, for every caller at once: the outcomes submitted by concurrent
 * deliveries (and the events they complete) go to PostgreSQL in one statement
 * (`recordDeliveries`), then the attempts still due later go to the queue in one call.
 */

export interface RecordRequest {
  outcomes: DeliveryOutcome[];
  /** Events whose every delivery is among `outcomes` (or that had none): marked dispatched. */
  dispatchedEventIds: string[];
}

export type Recorder = (request: RecordRequest) => Promise<RecordedDelivery[]>;

export function createRecorder(deps: {
  pool: Pick<pg.Pool, 'query'>;
  disableAfterMs: number;
  enqueue(deliveries: ScheduledDelivery[]): Promise<void>;
  logger: Logger;
  metrics: DispatcherMetrics;
}): Recorder {
  return createBatcher<RecordRequest, RecordedDelivery[]>(
    async (requests) => {
      const outcomes = requests.flatMap((request) => request.outcomes);
      const recorded = await recordDeliveries(
        deps.pool,
        outcomes,
        requests.flatMap((request) => request.dispatchedEventIds),
        { disableAfterMs: deps.disableAfterMs },
      );
      for (const { webhookId, reason } of recorded.deactivated) {
        deps.logger.warn(
          { webhookId, reason },
          reason === 'gone'
            ? 'webhook deactivated: the receiver answered 410 Gone'
            : 'webhook deactivated: its deliveries kept failing',
        );
      }
      const next = recorded.deliveries.flatMap((delivery) => (delivery.next ? [delivery.next] : []));
      if (next.length > 0) {
        // The rows are the truth: if this enqueue fails, the sweep enqueues them when due.
        await deps.enqueue(next).catch((error: unknown) => {
          deps.logger.warn(
            { err: error, deliveries: next.length },
            'could not enqueue attempts; the sweep will',
          );
        });
      }
      for (const delivery of recorded.deliveries) {
        const outcome = outcomes[delivery.index];
        deps.metrics.deliveries.inc({ outcome: outcome?.result === null ? 'postponed' : delivery.status });
      }
      // Back to each caller, its own deliveries, indexed within its own outcomes.
      const byRequest: RecordedDelivery[][] = requests.map(() => []);
      let offset = 0;
      const owner: number[] = [];
      requests.forEach((request, requestIndex) => {
        for (let i = 0; i < request.outcomes.length; i++) owner.push(requestIndex);
      });
      const offsets = requests.map((request) => {
        const start = offset;
        offset += request.outcomes.length;
        return start;
      });
      for (const delivery of recorded.deliveries) {
        const requestIndex = owner[delivery.index]!;
        byRequest[requestIndex]!.push({ ...delivery, index: delivery.index - offsets[requestIndex]! });
      }
      return byRequest;
    },
    { maxBatch: 200, maxInFlight: 2 },
  );
}
