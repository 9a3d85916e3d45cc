import { z } from 'zod';
import {
  boundedString,
  isoDateTimeSchema,
  referenceSchema,
  refuseUnstorable,
  tableRefSchema,
  viewReferenceSchema,
} from './common';

export const webhookEventTypes = [
  'record.created',
  'record.updated',
  'record.deleted',
  'table.created',
  'table.updated',
  'table.deleted',
  'field.created',
  'field.updated',
  'field.deleted',
] as const;
export const webhookEventTypeSchema = z.enum(webhookEventTypes, {
  error: `must be one of ${webhookEventTypes.join(', ')}`,
});
export type WebhookEventType = z.infer<typeof webhookEventTypeSchema>;

export const MAX_WEBHOOK_URL_LENGTH = 2048;
export const MAX_WEBHOOKS_PER_DATABASE = 100;

// A URL parser drops or escapes these silently (tabs and newlines vanish, NUL is stored as is),
// so what is stored would differ from what the URL check saw: refused outright instead.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const URL_WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/;

/**
 * Only http and https. Whether the host resolves to a private address is decided at delivery
 * time after DNS resolution, not here. Length first, then characters, then the URL parser.
 */
export const webhookUrlSchema = refuseUnstorable(
  boundedString(MAX_WEBHOOK_URL_LENGTH, { type: 'must be a URL string' }),
)
  .refine((url) => !URL_WHITESPACE_OR_CONTROL.test(url), {
    abort: true,
    error: 'must not contain whitespace or control characters',
  })
  // z.httpUrl would refuse localhost and IP hosts, which operators may allow.
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }));

const webhookEventListSchema = z
  .array(webhookEventTypeSchema, { error: 'must be an array of event types' })
  .min(1, { error: 'must list at least one event type' })
  .refine((events) => new Set(events).size === events.length, { error: 'must not repeat an event type' });

/** `whsec_` and the base64 of 24 to 64 random bytes. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
const MAX_WEBHOOK_SECRET_LENGTH = WEBHOOK_SECRET_PREFIX.length + 88 + 2;
export const webhookSecretSchema = boundedString(MAX_WEBHOOK_SECRET_LENGTH).regex(
  /^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/,
);

export const MAX_WEBHOOK_FIELD_IDS = 100;

/**
 * Fields (ids or names) of the webhook's table: `record.updated` is heard only when a record
 * changed one of them (other events are not filtered). Stored as field ids.
 */
const webhookFieldIdsSchema = z
  .array(referenceSchema('must name a field by id or name'), {
    error: 'must be an array of field ids or names',
  })
  .min(1, { error: 'must name at least one field (leave it out to hear every change)' })
  .max(MAX_WEBHOOK_FIELD_IDS, { error: `must name at most ${MAX_WEBHOOK_FIELD_IDS} fields` });

export const createWebhookRequestSchema = z.strictObject({
  url: webhookUrlSchema.meta({
    description: 'Where events are POSTed: http or https; private addresses are refused at delivery.',
  }),
  events: webhookEventListSchema.meta({
    description: `Event types to hear: ${webhookEventTypes.join(', ')}.`,
  }),
  /** Id or name of a table of the database; omitted: events from every table. */
  tableId: tableRefSchema
    .optional()
    .meta({ description: 'Id or name of a table of the database; left out: events from every table.' }),
  /** Needs `tableId`: the fields belong to that table. */
  fieldIds: webhookFieldIdsSchema.optional().meta({
    description:
      'With tableId: record.updated is heard only when a record changed one of these fields (ids or names; other events are not filtered).',
  }),
  /** Needs `tableId`: a view of that table. */
  viewId: viewReferenceSchema.optional().meta({
    description:
      'With tableId: a saved view of the table (id or name). Record events then carry only the records in the view before or after the write, each with view: {before, after}.',
  }),
});
export type CreateWebhookRequest = z.infer<typeof createWebhookRequestSchema>;

export const webhookSchema = z.object({
  id: z.int().positive(),
  url: z.string(),
  events: z.array(webhookEventTypeSchema),
  /** null: events from every table. */
  tableId: z.string().nullable().meta({ description: 'null: events from every table.' }),
  /** null: every record.updated; else only those that changed one of these fields. */
  fieldIds: z
    .array(z.string())
    .nullable()
    .meta({ description: 'null: every record.updated; else only those that changed one of these fields.' }),
  viewId: z.string().nullable().meta({
    description: 'null: every record; else only the records in this view (viw…) before or after a write.',
  }),
  active: z.boolean().meta({
    description: 'false after repeated failed deliveries (or when set so); PATCH active: true resumes.',
  }),
  createdAt: isoDateTimeSchema,
  updatedAt: isoDateTimeSchema,
});
export type Webhook = z.infer<typeof webhookSchema>;

/** The secret is shown here once and never again. Loose: the service may answer more fields. */
export const createWebhookResponseSchema = z.looseObject({
  id: z.int().positive(),
  secret: webhookSecretSchema,
});
export type CreateWebhookResponse = z.infer<typeof createWebhookResponseSchema>;

/** What records-api answers on creation: the webhook and, this once, its secret. */
export const createdWebhookSchema = webhookSchema.extend({ secret: webhookSecretSchema });
export type CreatedWebhook = z.infer<typeof createdWebhookSchema>;

export const webhookListSchema = z.object({ webhooks: z.array(webhookSchema) });
export type WebhookList = z.infer<typeof webhookListSchema>;

export const updateWebhookRequestSchema = z
  .strictObject({
    url: webhookUrlSchema.optional(),
    events: webhookEventListSchema.optional(),
    /** null clears the table filter: events from every table. */
    tableId: tableRefSchema.nullable().optional(),
    /** null clears the field filter: every record.updated. */
    fieldIds: webhookFieldIdsSchema.nullable().optional(),
    /** null clears the view: every record of the table. */
    viewId: viewReferenceSchema.nullable().optional(),
    /** Setting true again also clears the failure streak that deactivated it. */
    active: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .refine(
    (body) =>
      body.url !== undefined ||
      body.events !== undefined ||
      body.tableId !== undefined ||
      body.fieldIds !== undefined ||
      body.viewId !== undefined ||
      body.active !== undefined,
    { error: 'must change at least one of url, events, tableId, fieldIds, viewId or active' },
  );
export type UpdateWebhookRequest = z.infer<typeof updateWebhookRequestSchema>;

/**
 * Why an attempt failed. `kind` is a short machine-readable word chosen by the dispatcher (for
 * example `timeout`, `connection`, `refused_address`, `http_status`); `message` is for people.
 */
export const webhookDeliveryErrorSchema = z.object({ kind: z.string(), message: z.string() });
export type WebhookDeliveryError = z.infer<typeof webhookDeliveryErrorSchema>;

/** One attempt to deliver one event to one webhook. */
export const webhookDeliveryAttemptSchema = z.object({
  /** The delivery (event x webhook) this attempt belongs to; `.../deliveries/{deliveryId}/retry` takes it. */
  deliveryId: z.string(),
  /** As delivered in `webhook-id`: `evt_<uuid>`. */
  eventId: z.string(),
  eventType: webhookEventTypeSchema,
  /** 1 for the first attempt. */
  attempt: z.int().min(1),
  /** null when no response arrived (timeout, refused address, connection error). */
  statusCode: z.int().nullable(),
  succeeded: z.boolean(),
  durationMs: z.int().min(0),
  /** null when the attempt succeeded. */
  error: webhookDeliveryErrorSchema.nullable(),
  attemptedAt: isoDateTimeSchema,
});
export type WebhookDeliveryAttempt = z.infer<typeof webhookDeliveryAttemptSchema>;

/** Most recent first. */
export const webhookDeliveryListSchema = z.object({ deliveries: z.array(webhookDeliveryAttemptSchema) });
export type WebhookDeliveryList = z.infer<typeof webhookDeliveryListSchema>;

export const DEFAULT_DELIVERY_LOG_LIMIT = 50;
export const MAX_DELIVERY_LOG_LIMIT = 200;

/** `GET .../webhooks/{webhookId}/deliveries?limit=N`: query values arrive as text. */
export const listWebhookDeliveriesQuerySchema = z.strictObject({
  limit: z.coerce
    .number({ error: `must be an integer from 1 to ${MAX_DELIVERY_LOG_LIMIT}` })
    .int({ error: `must be an integer from 1 to ${MAX_DELIVERY_LOG_LIMIT}` })
    .min(1, { error: `must be an integer from 1 to ${MAX_DELIVERY_LOG_LIMIT}` })
    .max(MAX_DELIVERY_LOG_LIMIT, { error: `must be an integer from 1 to ${MAX_DELIVERY_LOG_LIMIT}` })
    .default(DEFAULT_DELIVERY_LOG_LIMIT)
    .meta({ description: `Attempts to list, newest first, 1 to ${MAX_DELIVERY_LOG_LIMIT}.` }),
});
export type ListWebhookDeliveriesQuery = z.infer<typeof listWebhookDeliveriesQuerySchema>;

/** `POST .../deliveries/{deliveryId}/retry` answers 202: the delivery is due again at once. */
export const retryWebhookDeliveryResponseSchema = z.object({
  id: z.string(),
  status: z.literal('pending'),
});
export type RetryWebhookDeliveryResponse = z.infer<typeof retryWebhookDeliveryResponseSchema>;
