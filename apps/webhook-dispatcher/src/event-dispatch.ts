import type { DeliveryOutcome } from '@recordbase/db';
import { createBatcher } from '@recordbase/server-kit/batcher';
import type { Logger } from '@recordbase/server-kit/logger';
import type pg from 'pg';
import {
  type AttemptSettings,
  type EventToSend,
  outcomeOfAttempt,
  postponedOutcome,
  sendAttempt,
} from './attempt';
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

interface LoadedEvent extends EventToSend {
  tableId: string | null;
  changedFieldIds: string[];
  dispatched: boolean;
  /** The subscriptions version of the snapshot the event was read in. */
  version: bigint;
}

interface EventRow {
  id: string;
  type: string;
  source: string;
  database_id: string;
  table_id: string | null;
  changed_field_ids: string[];
  created_at: Date;
  data_json: string;
  dispatched: boolean;
  version: string;
}

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
  const load = createBatcher<string, LoadedEvent | null>(
    async (ids) => {
      const result = await deps.pool.query<EventRow>(
        `SELECT e.id, e.type, e.source, e.database_id, e.table_id, e.changed_field_ids, e.created_at, e.data::text AS data_json,
                e.dispatched_at IS NOT NULL AS dispatched, v.version::text AS version
           FROM outbox_events e CROSS JOIN webhook_subscriptions_version v
          WHERE e.id = ANY ($1::uuid[])`,
        [ids],
      );
      const byId = new Map(result.rows.map((row) => [row.id, row]));
      return ids.map((id) => {
        const row = byId.get(id);
        if (!row) return null;
        return {
          eventId: row.id,
          type: row.type,
          source: row.source,
          databaseId: row.database_id,
          tableId: row.table_id,
          changedFieldIds: row.changed_field_ids,
          createdAt: row.created_at,
          dataJson: row.data_json,
          dispatched: row.dispatched,
          version: BigInt(row.version),
        };
      });
    },
    { maxBatch: 500, maxInFlight: 2 },
  );

  async function deliverFirst(event: LoadedEvent, subscription: Subscription): Promise<DeliveryOutcome> {
    const delivery = {
      eventId: event.eventId,
      webhookId: subscription.webhookId,
      eventType: event.type,
    };
    const release = await deps.limits.admit(subscription.webhookId);
    if (release === null) return postponedOutcome(delivery, deps.postponeMs);
    let result: Awaited<ReturnType<typeof sendAttempt>>;
    try {
      result = await sendAttempt(deps.attempts, event, subscription, 1);
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
    await deps.subscriptions.ensure(event.version);
    const matching = deps.subscriptions.match(event);
    const outcomes = await Promise.all(matching.map((subscription) => deliverFirst(event, subscription)));
    await deps.record({ outcomes, dispatchedEventIds: [event.eventId] });
  };
}
