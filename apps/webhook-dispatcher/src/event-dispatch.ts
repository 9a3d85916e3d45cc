import { type DeliveryOutcome, deliveredData, type OutboxEvent, readEventsForDispatch } from '@recordbase/db';
import { createBatcher } from '@recordbase/server-kit/batcher';
import type { Logger } from '@recordbase/server-kit/logger';
import type pg from 'pg';
import { type AttemptSettings, outcomeOfAttempt, postponedOutcome, sendAttempt } from './attempt';
import type { DispatcherMetrics } from './metrics';
import type { ReceiverLimits } from './receiver-limits';
import type { Recorder } from './recorder';
import type { Subscription, SubscriptionCache } from './subscriptions';

/**
 * Dispatch of one event: read it (batched with the events other workers are reading), match it
 * against the subscriptions in memory, send its first attempts concurrently (within the
 * receivers' limits), then record every outcome and mark the event dispatched in one batched
 * statement. Nothing is written before sending: should the process die before the record, the
 * event is still undispatched and the sweep sends it again (at least once, never lost).
 */

export interface EventDispatchDeps {
  pool: Pick<pg.Pool, 'query'>;
  subscriptions: SubscriptionCache;
  limits: ReceiverLimits;
  record: Recorder;
  attempts: AttemptSettings;
  /** How long a first attempt put off (receiver at its limit) waits before it is tried. */
  postponeMs: number;
  logger: Logger;
  metrics: DispatcherMetrics;
}

export type EventDispatch = (eventId: string) => Promise<void>;

export function createEventDispatch(deps: EventDispatchDeps): EventDispatch {
  const load = createBatcher<string, OutboxEvent | null>(
    async (ids) => {
      const byId = await readEventsForDispatch(deps.pool, ids);
      return ids.map((id) => byId.get(id) ?? null);
    },
    { maxBatch: 500, maxInFlight: 2 },
  );

  async function deliverFirst(event: OutboxEvent, subscription: Subscription): Promise<DeliveryOutcome> {
    const delivery = {
      eventId: event.eventId,
      webhookId: subscription.webhookId,
      eventType: event.type,
    };
    const release = await deps.limits.admit(subscription.webhookId);
    if (release === null) return postponedOutcome(delivery, deps.postponeMs);
    let result: Awaited<ReturnType<typeof sendAttempt>>;
    try {
      // A webhook with a view receives only the records inside it before or after.
      const dataJson = deliveredData(event.dataJson, event, subscription.viewId);
      result = await sendAttempt(deps.attempts, { ...event, dataJson }, subscription, 1);
    } finally {
      release();
    }
    deps.metrics.deliveryDuration.observe(
      { outcome: result.ok ? 'success' : 'failure' },
      result.durationMs / 1000,
    );
    const outcome = outcomeOfAttempt(deps.attempts, { deliveryId: null, ...delivery }, 1, result, false);
    const context = {
      webhookId: subscription.webhookId,
      eventId: event.eventId,
      attempt: 1,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      errorKind: result.errorKind,
    };
    if (result.ok) deps.logger.debug(context, 'webhook delivered');
    else deps.logger.info({ ...context, error: result.error }, 'webhook attempt failed');
    return outcome;
  }

  return async (eventId) => {
    const event = await load(eventId);
    if (!event || event.dispatched) return;
    deps.metrics.eventLag.observe(Math.max(0, (Date.now() - event.createdAt.getTime()) / 1000));
    await deps.subscriptions.ensure(event.subscriptionsVersion);
    const matching = deps.subscriptions.match(event);
    const outcomes = await Promise.all(matching.map((subscription) => deliverFirst(event, subscription)));
    await deps.record({ outcomes, dispatchedEventIds: [event.eventId] });
  };
}
