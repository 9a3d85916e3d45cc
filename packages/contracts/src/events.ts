import { z } from 'zod';
import { boundedString, isoDateTimeSchema, uuidSchema } from './common';
import { fieldSchema } from './fields';
import { recordSchema } from './records';
import { tableSchema } from './schema';
import type { WebhookEventType } from './webhooks';

/** Standard Webhooks headers of every delivery. */
export const webhookHeaders = {
  /** The event id, so a receiver can drop duplicates of an at-least-once delivery. */
  id: 'webhook-id',
  /** Unix seconds when this attempt was signed. */
  timestamp: 'webhook-timestamp',
  /** `v1,` + base64 HMAC-SHA256 over `{id}.{timestamp}.{body}`. */
  signature: 'webhook-signature',
} as const;
export const WEBHOOK_ID_HEADER = webhookHeaders.id;
export const WEBHOOK_TIMESTAMP_HEADER = webhookHeaders.timestamp;
export const WEBHOOK_SIGNATURE_HEADER = webhookHeaders.signature;
export const WEBHOOK_SIGNATURE_VERSION = 'v1';

/** `restore`: a record brought back from its table's trash, or to one of its revisions. */
export const eventSources = ['public_api', 'import', 'dependency', 'restore'] as const;
export const eventSourceSchema = z.enum(eventSources);
export type EventSource = z.infer<typeof eventSourceSchema>;

/** Outbox events are keyed by a UUID; deliveries name them `evt_<uuid>`. */
export const EVENT_ID_PREFIX = 'evt_';
export const deliveredEventIdSchema = boundedString(EVENT_ID_PREFIX.length + 36, {
  tooLong: 'must be evt_<uuid>',
}).regex(/^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, {
  error: 'must be evt_<uuid>',
});

export function toDeliveredEventId(outboxEventId: string): string {
  return `${EVENT_ID_PREFIX}${outboxEventId}`;
}

/** An outbox event as stored, the data still the JSON text PostgreSQL kept. */
export interface StoredEvent {
  eventId: string;
  type: string;
  createdAt: Date;
  dataJson: string;
  databaseId: string;
  source: string;
}

/**
 * The one rendering of an event's body: a webhook delivery's (with its `webhookId` and `attempt`)
 * and the change feed's (without them) differ only there. The data is spliced in as stored, never
 * parsed and serialised again.
 */
export function eventBodyJson(event: StoredEvent, delivery?: { webhookId: number; attempt: number }): string {
  const metadata = delivery
    ? {
        webhookId: delivery.webhookId,
        baseId: event.databaseId,
        attempt: delivery.attempt,
        source: event.source,
      }
    : { baseId: event.databaseId, source: event.source };
  return `{"id":${JSON.stringify(toDeliveredEventId(event.eventId))},"type":${JSON.stringify(event.type)},"timestamp":${JSON.stringify(event.createdAt.toISOString())},"data":${event.dataJson},"metadata":${JSON.stringify(metadata)}}`;
}

/** What an update changed in one record: the fields whose value differs, and their values before. */
export const recordChangeSchema = z.object({
  recordId: uuidSchema,
  changedFieldIds: z.array(z.string()),
  /** By field id, as the API rendered them before the update. */
  previous: z.record(z.string(), z.unknown()),
});
export type RecordChange = z.infer<typeof recordChangeSchema>;

/**
 * One event per API request or import batch; for record.deleted the records' last state. A
 * record.updated event also carries `changes`, one per record in the order of `records`.
 */
export const recordEventDataSchema = z.object({
  tableId: z.string(),
  recordIds: z.array(uuidSchema),
  records: z.array(recordSchema),
  changes: z.array(recordChangeSchema).optional(),
});
export type RecordEventData = z.infer<typeof recordEventDataSchema>;

/** For table.deleted the table's last state. */
export const tableEventDataSchema = z.object({ table: tableSchema });
export type TableEventData = z.infer<typeof tableEventDataSchema>;

/** For field.deleted the field's last state. */
export const fieldEventDataSchema = z.object({ tableId: z.string(), field: fieldSchema });
export type FieldEventData = z.infer<typeof fieldEventDataSchema>;

export const recordEventTypes = ['record.created', 'record.updated', 'record.deleted'] as const;
export const tableEventTypes = ['table.created', 'table.updated', 'table.deleted'] as const;
export const fieldEventTypes = ['field.created', 'field.updated', 'field.deleted'] as const;

export const eventDataSchemaByType = {
  'record.created': recordEventDataSchema,
  'record.updated': recordEventDataSchema,
  'record.deleted': recordEventDataSchema,
  'table.created': tableEventDataSchema,
  'table.updated': tableEventDataSchema,
  'table.deleted': tableEventDataSchema,
  'field.created': fieldEventDataSchema,
  'field.updated': fieldEventDataSchema,
  'field.deleted': fieldEventDataSchema,
} as const satisfies Record<WebhookEventType, z.ZodType>;
export type EventData<Type extends WebhookEventType = WebhookEventType> = z.infer<
  (typeof eventDataSchemaByType)[Type]
>;

export const eventMetadataSchema = z.object({
  webhookId: z.int().positive(),
  /** The database id. */
  baseId: uuidSchema,
  /** 1 for the first attempt; the same event id on every attempt. */
  attempt: z.int().min(1),
  source: eventSourceSchema,
});
export type EventMetadata = z.infer<typeof eventMetadataSchema>;

/** An event's body with `metadata` as given, discriminated by `type`. */
function envelopeSchema<Metadata extends z.ZodObject>(metadata: Metadata) {
  const base = { id: deliveredEventIdSchema, timestamp: isoDateTimeSchema, metadata };
  return z.discriminatedUnion('type', [
    z.object({ ...base, type: z.enum(recordEventTypes), data: recordEventDataSchema }),
    z.object({ ...base, type: z.enum(tableEventTypes), data: tableEventDataSchema }),
    z.object({ ...base, type: z.enum(fieldEventTypes), data: fieldEventDataSchema }),
  ]);
}

/** The body of a delivery. */
export const eventEnvelopeSchema = envelopeSchema(eventMetadataSchema);
export type EventEnvelope = z.infer<typeof eventEnvelopeSchema>;

/** An event of the change feed: a delivery's body without `webhookId` and `attempt`. */
export const changeEventSchema = envelopeSchema(eventMetadataSchema.omit({ webhookId: true, attempt: true }));
export type ChangeEvent = z.infer<typeof changeEventSchema>;
