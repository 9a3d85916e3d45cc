import type { ViewMembers } from '../outbox/append';

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
  /** Record events only for the records inside this view before or after the write; null: every record. */
  viewId: string | null;
}

export interface SubscribedEvent {
  type: string;
  tableId: string | null;
  /** record.updated: the fields its records changed. */
  changedFieldIds: readonly string[];
  /** Record events: the records inside each watched view before and after (null: no view watched). */
  viewMembers?: ViewMembers | null;
}

/** A webhook row's filters (an empty `field_ids` stores "no field filter") as a subscription. */
export function subscriptionOf(webhook: {
  events: readonly string[];
  tableId: string | null;
  fieldIds: readonly string[] | null;
  viewId: string | null;
}): WebhookSubscription {
  return {
    events: new Set(webhook.events),
    tableId: webhook.tableId,
    fieldIds: webhook.fieldIds && webhook.fieldIds.length > 0 ? new Set(webhook.fieldIds) : null,
    viewId: webhook.viewId,
  };
}

type Unheard = 'type' | 'table' | 'fields' | 'view';

/**
 * The records of a record event inside `viewId` before or after its write; none when the event
 * carries no members for that view (the view was not watched when it was written, or it is
 * another table's).
 */
function viewMembersOf(event: SubscribedEvent, viewId: string) {
  return event.viewMembers?.[viewId];
}

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
  if (webhook.viewId !== null && event.type.startsWith('record.')) {
    const members = viewMembersOf(event, webhook.viewId);
    if (!members || (members.before.length === 0 && members.after.length === 0)) return 'view';
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
    case 'view':
      return "none of the event's records was or is in the webhook's view";
  }
}

/**
 * An event's data as webhook `viewId` receives it: as stored without a view; for a record event
 * through a view, only the records inside it before or after the write (in `recordIds`, `records`
 * and `changes` alike), each record with `view: {before, after}`. The data is parsed here, once per
 * delivery of a webhook with a view only.
 */
export function deliveredData(dataJson: string, event: SubscribedEvent, viewId: string | null): string {
  if (viewId === null || !event.type.startsWith('record.')) return dataJson;
  const members = viewMembersOf(event, viewId);
  const before = new Set(members?.before ?? []);
  const after = new Set(members?.after ?? []);
  const data = JSON.parse(dataJson) as {
    recordIds: string[];
    /** An import's events name their records only. */
    records?: { id: string }[];
    changes?: { recordId: string }[];
  };
  const kept = (id: string) => before.has(id) || after.has(id);
  return JSON.stringify({
    ...data,
    recordIds: data.recordIds.filter(kept),
    ...(data.records
      ? {
          records: data.records
            .filter((record) => kept(record.id))
            .map((record) => ({
              ...record,
              view: { before: before.has(record.id), after: after.has(record.id) },
            })),
        }
      : {}),
    ...(data.changes ? { changes: data.changes.filter((change) => kept(change.recordId)) } : {}),
  });
}
