/**
 * Whether a webhook hears an event: the one definition, used by the dispatcher to match a new
 * event, again before every later attempt of a delivery (the webhook may have changed since its
 * event was matched: other events, another table, other fields), and by records-api before it
 * reopens a delivery. The database and the webhook's creation time are matched by the dispatcher
 * alone: neither changes once a delivery exists.
 */

export interface WebhookSubscription {
  events: ReadonlySet<string>;
  /** null: events of every table. */
  tableId: string | null;
  /** record.updated only when the event changed one of these fields; null: any change. */
  fieldIds: ReadonlySet<string> | null;
}

export interface SubscribedEvent {
  type: string;
  tableId: string | null;
  /** record.updated: the fields its records changed. */
  changedFieldIds: readonly string[];
}

/** A webhook row's filters (an empty `field_ids` stores "no field filter") as a subscription. */
export function subscriptionOf(webhook: {
  events: readonly string[];
  tableId: string | null;
  fieldIds: readonly string[] | null;
}): WebhookSubscription {
  return {
    events: new Set(webhook.events),
    tableId: webhook.tableId,
    fieldIds: webhook.fieldIds && webhook.fieldIds.length > 0 ? new Set(webhook.fieldIds) : null,
  };
}

type Unheard = 'type' | 'table' | 'fields';

function unheard(webhook: WebhookSubscription, event: SubscribedEvent): Unheard | null {
  if (!webhook.events.has(event.type)) return 'type';
  if (webhook.tableId !== null && webhook.tableId !== event.tableId) return 'table';
  const watched = webhook.fieldIds;
  if (
    watched !== null &&
    event.type === 'record.updated' &&
    !event.changedFieldIds.some((fieldId) => watched.has(fieldId))
  ) {
    return 'fields';
  }
  return null;
}

export function hearsEvent(webhook: WebhookSubscription, event: SubscribedEvent): boolean {
  return unheard(webhook, event) === null;
}

/** Why a webhook no longer hears a delivery's event, as the delivery log and the API say it; null if it does. */
export function whyNoLongerHeard(webhook: WebhookSubscription, event: SubscribedEvent): string | null {
  switch (unheard(webhook, event)) {
    case null:
      return null;
    case 'type':
      return `the webhook no longer subscribes to ${event.type}`;
    case 'table':
      return event.tableId === null
        ? `the webhook now subscribes to events of table ${webhook.tableId} only`
        : `the webhook no longer subscribes to events of table ${event.tableId}`;
    case 'fields':
      return 'the webhook no longer watches the fields this record.updated changed';
  }
}
