import {
  type ClaimedDelivery,
  claimDelivery,
  closeDeliveryOfInactiveWebhook,
  closeUnsubscribedDelivery,
  deliveredData,
  postponeClaimedDelivery,
  type ScheduledDelivery,
  subscriptionOf,
  whyNoLongerHeard,
} from '@recordbase/db';
import type { Logger } from '@recordbase/server-kit/logger';
import type pg from 'pg';
import { type AttemptSettings, outcomeOfAttempt, sendAttempt } from './attempt';
import type { DispatcherMetrics } from './metrics';
import type { ReceiverLimits } from './receiver-limits';
import type { Recorder } from './recorder';
import type { SigningKeys } from './subscriptions';

/**
 * A later attempt of a delivery that has a row (a retry, a delivery put off, one the API asked to
 * retry): claim it (a single UPDATE that counts the attempt and leases it past its deadline, so
 * two jobs cannot both attempt it), end it unsent if its webhook no longer hears the event, send
 * it within the receiver's limit, and record the outcome through the same batched recorder as
 * first attempts.
 */

export interface DeliverDeps {
  pool: Pick<pg.Pool, 'query'>;
  limits: ReceiverLimits;
  record: Recorder;
  attempts: AttemptSettings;
  signingKeys: SigningKeys;
  enqueue(deliveries: ScheduledDelivery[]): Promise<void>;
  /** How long a delivery whose receiver is at its limit waits before it is tried again. */
  postponeMs: number;
  logger: Logger;
  metrics: DispatcherMetrics;
}

/** How far past its deadline a claimed attempt may run before the delivery is due again. */
export const LEASE_MARGIN_MS = 5000;
/** Clock difference tolerated between this process (BullMQ delays) and PostgreSQL (due times). */
const DUE_TOLERANCE_MS = 2000;

/** Processes one delivery job. Throws only when the database cannot be reached. */
export async function deliverOnce(deps: DeliverDeps, deliveryId: string): Promise<void> {
  const row = await claimDelivery(deps.pool, deliveryId, {
    leaseMs: deps.attempts.timeoutMs + LEASE_MARGIN_MS,
    toleranceMs: DUE_TOLERANCE_MS,
  });
  if (!row) {
    if (await closeDeliveryOfInactiveWebhook(deps.pool, deliveryId)) {
      deps.metrics.deliveries.inc({ outcome: 'skipped' });
    }
    // Otherwise: already delivered, not yet due, or claimed by another job. Nothing to do.
    return;
  }
  // The webhook may have changed since the event was matched (a PATCH to other events, another
  // table, another url): an event it no longer hears is never sent, whatever address it has now.
  const unheard = noLongerHeard(row);
  if (unheard !== null) {
    if (await closeUnsubscribedDelivery(deps.pool, row, unheard)) {
      deps.metrics.deliveries.inc({ outcome: 'skipped' });
      deps.logger.info(
        { deliveryId: row.id, webhookId: row.webhook_id, eventId: row.event_id, reason: unheard },
        'delivery ended unsent: its webhook no longer hears the event',
      );
    }
    return;
  }
  const release = await deps.limits.admit(row.webhook_id);
  if (release === null) {
    // Not an attempt: given back uncounted, due again once a slot may have freed.
    const next = await postponeClaimedDelivery(deps.pool, row, deps.postponeMs);
    deps.metrics.deliveries.inc({ outcome: 'postponed' });
    if (next) {
      await deps.enqueue([next]).catch((error: unknown) => {
        deps.logger.warn(
          { err: error, deliveryId },
          'could not enqueue a postponed delivery; the sweep will',
        );
      });
    }
    return;
  }
  const eventGone = row.type === null || row.data_json === null || row.created_at === null;
  let result: Awaited<ReturnType<typeof sendAttempt>>;
  try {
    result = await sendAttempt(
      deps.attempts,
      eventGone
        ? null
        : {
            eventId: row.event_id,
            type: row.type!,
            createdAt: row.created_at!,
            // A webhook with a view receives only the records inside it before or after.
            dataJson: deliveredData(
              row.data_json!,
              {
                type: row.type!,
                tableId: row.event_table_id,
                changedFieldIds: [],
                viewMembers: row.view_members,
              },
              row.webhook_view_id,
            ),
            databaseId: row.database_id ?? '',
            source: row.source ?? 'public_api',
          },
      {
        webhookId: row.webhook_id,
        url: row.url,
        signingKey: deps.signingKeys.of(row.webhook_id, row.secret_ciphertext),
      },
      row.attempts,
    );
  } finally {
    release();
  }
  deps.metrics.deliveryDuration.observe(
    { outcome: result.ok ? 'success' : 'failure' },
    result.durationMs / 1000,
  );
  const outcome = outcomeOfAttempt(
    deps.attempts,
    { deliveryId: row.id, eventId: row.event_id, webhookId: row.webhook_id, eventType: row.type ?? '' },
    row.attempts,
    result,
    eventGone,
  );
  await deps.record({ outcomes: [outcome], dispatchedEventIds: [] });
  const context = {
    deliveryId: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    attempt: row.attempts,
    statusCode: result.statusCode,
    durationMs: result.durationMs,
    errorKind: result.errorKind,
    outcome: outcome.status,
  };
  if (result.ok) deps.logger.debug(context, 'webhook delivered');
  else deps.logger.info({ ...context, error: result.error }, 'webhook attempt failed');
}

/** Why the claimed delivery's webhook no longer hears its event, or null. A gone event is failed by its attempt. */
function noLongerHeard(row: ClaimedDelivery): string | null {
  if (row.type === null) return null;
  return whyNoLongerHeard(
    subscriptionOf({
      events: row.webhook_events,
      tableId: row.webhook_table_id,
      fieldIds: row.webhook_field_ids,
      viewId: row.webhook_view_id,
    }),
    {
      type: row.type,
      tableId: row.event_table_id,
      changedFieldIds: row.changed_field_ids ?? [],
      viewMembers: row.view_members,
    },
  );
}
