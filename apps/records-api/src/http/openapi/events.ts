import { isoDateTimeSchema } from '@recordbase/contracts/common';
import {
  deliveredEventIdSchema,
  eventDataSchemaByType,
  eventMetadataSchema,
  webhookHeaders,
} from '@recordbase/contracts/events';
import { type WebhookEventType, webhookEventTypes } from '@recordbase/contracts/webhooks';
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import * as ex from './examples';

const whatHappened: Record<WebhookEventType, string> = {
  'record.created': 'Records were created (one event per request or import batch).',
  'record.updated':
    'Records were updated; `changes` gives per record the changed field ids and their previous values.',
  'record.deleted': 'Records were deleted; `records` holds their last state.',
  'table.created': 'A table was created.',
  'table.updated': 'A table was renamed or its primary field changed.',
  'table.deleted': 'A table was deleted; `table` holds its last state.',
  'field.created': 'A field was added.',
  'field.updated': 'A field was renamed or its type or template changed.',
  'field.deleted': 'A field was deleted; `field` holds its last state.',
};

function exampleData(type: WebhookEventType): unknown {
  if (type.startsWith('record.')) {
    return {
      tableId: ex.TABLE_ID,
      recordIds: [ex.RECORD_ID],
      records: [ex.record],
      ...(type === 'record.updated'
        ? {
            changes: [
              {
                recordId: ex.RECORD_ID,
                changedFieldIds: [ex.FIELD_IDS.status],
                previous: { [ex.FIELD_IDS.status]: 'Lead' },
              },
            ],
          }
        : {}),
    };
  }
  if (type.startsWith('table.')) return { table: ex.table };
  return { tableId: ex.TABLE_ID, field: ex.fields[1] };
}

/** The envelope of one event type: the contract's pieces with `type` fixed. */
function envelopeOf(type: WebhookEventType) {
  return z.object({
    id: deliveredEventIdSchema.meta({
      description: 'The event id, also sent as webhook-id; the same on every attempt.',
    }),
    type: z.literal(type),
    timestamp: isoDateTimeSchema,
    metadata: eventMetadataSchema,
    data: eventDataSchemaByType[type],
  });
}

const signatureHeaders = z.object({
  [webhookHeaders.id]: z.string().meta({ description: 'The event id (evt_...).' }),
  [webhookHeaders.timestamp]: z.string().meta({ description: 'Unix seconds when this attempt was signed.' }),
  [webhookHeaders.signature]: z.string().meta({
    description:
      'v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">, keyed with the bytes the ' +
      'webhook secret encodes in base64 after whsec_ (Standard Webhooks).',
  }),
});

/** OpenAPI 3.1 `webhooks`: what recordbase POSTs to a subscribed URL, one entry per event type. */
export function eventWebhooks(): ZodOpenApiPathsObject {
  return Object.fromEntries(
    webhookEventTypes.map((type) => [
      type,
      {
        post: {
          operationId: `event_${type.replace('.', '_')}`,
          tags: ['Webhook events'],
          summary: type,
          description: `${whatHappened[type]} Answer 2xx within the timeout; other answers are retried with backoff.`,
          requestParams: { header: signatureHeaders },
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: envelopeOf(type),
                example: {
                  id: ex.EVENT_ID,
                  type,
                  timestamp: ex.AT_EXAMPLE,
                  metadata: ex.eventMetadata,
                  data: exampleData(type),
                },
              },
            },
          },
          responses: { '200': { description: 'Received; any 2xx does.' } },
        },
      },
    ]),
  );
}
