import { z } from 'zod';
import { boundedString, tableRefSchema } from './common';
import { changeEventSchema } from './events';
import { type WebhookEventType, webhookEventTypes } from './webhooks';

/** Changes per page: 1 to 1000, 100 by default (the contract's "Changes"). */
export const MAX_CHANGES_LIMIT = 1000;
export const DEFAULT_CHANGES_LIMIT = 100;
/** `cursor=latest`: no changes, only where the feed ends now. */
export const LATEST_CURSOR = 'latest';
/** A cursor is the feed position `<transaction id>-<sequence>`, both decimal. */
export const CHANGE_CURSOR_PATTERN = /^(0|[1-9][0-9]{0,19})-(0|[1-9][0-9]{0,18})$/;
const MAX_CURSOR_LENGTH = 48;
/** Every event type once, comma-separated, with room to spare. */
const MAX_TYPES_LENGTH = 400;

const limitError = `must be an integer from 1 to ${MAX_CHANGES_LIMIT}`;
const cursorError = `is not a change cursor; pass back the cursor of an answer unchanged, or "${LATEST_CURSOR}"`;

export const changeCursorSchema = boundedString(MAX_CURSOR_LENGTH, { tooLong: cursorError })
  .refine((cursor) => cursor === LATEST_CURSOR || CHANGE_CURSOR_PATTERN.test(cursor), { error: cursorError })
  .meta({
    description: `Where to read from: the \`cursor\` of the previous answer (or an event's \`id:\` in the stream), or \`${LATEST_CURSOR}\` for only what comes next. Left out: from the oldest event kept.`,
  });

const typesError = `must be event types separated by commas, each one of ${webhookEventTypes.join(', ')}`;

/** `types=record.created,record.updated`: the types named, each once. */
export const changeTypesSchema = boundedString(MAX_TYPES_LENGTH, { tooLong: typesError })
  .transform((text, context) => {
    const types = new Set<WebhookEventType>();
    for (const part of text.split(',')) {
      const type = part.trim();
      if (!(webhookEventTypes as readonly string[]).includes(type)) {
        context.addIssue({
          code: 'custom',
          message: `${JSON.stringify(type.slice(0, 40))} is not an event type; ${typesError}`,
        });
        return z.NEVER;
      }
      types.add(type as WebhookEventType);
    }
    return [...types];
  })
  .meta({ description: `Only events of these types, comma-separated: ${webhookEventTypes.join(', ')}.` });

const filterParameters = {
  cursor: changeCursorSchema.optional(),
  tableId: tableRefSchema.optional().meta({
    description:
      "Only the events of this table (its id, or its name while it exists): its records', fields' and its own.",
  }),
  types: changeTypesSchema.optional(),
};

const limitSchema = z.coerce
  .number({ error: limitError })
  .int({ error: limitError })
  .min(1, { error: limitError })
  .max(MAX_CHANGES_LIMIT, { error: limitError });

/** `GET /bases/{databaseId}/changes`: query values arrive as text. */
export const changesQuerySchema = z.strictObject({
  ...filterParameters,
  limit: limitSchema
    .default(DEFAULT_CHANGES_LIMIT)
    .meta({ description: `Events per answer, 1 to ${MAX_CHANGES_LIMIT}.` }),
});
export type ChangesQuery = z.infer<typeof changesQuerySchema>;

/** Longer than any token we sign; the bound comes before any check. */
const MAX_STREAM_TOKEN_LENGTH = 2048;

/**
 * `GET /bases/{databaseId}/changes/stream`: the feed's parameters (the contract: "same query
 * parameters"), `limit` bounding the first read of a catch-up, and a token.
 */
export const changesStreamQuerySchema = z.strictObject({
  ...filterParameters,
  limit: limitSchema.optional().meta({
    description: `Events read at once while the stream catches up, 1 to ${MAX_CHANGES_LIMIT} (500 when left out); it does not end the stream.`,
  }),
  token: boundedString(MAX_STREAM_TOKEN_LENGTH, { tooLong: 'is not a stream token' }).optional().meta({
    description:
      'For an EventSource, which cannot send an Authorization header: a token from POST …/changes/stream-tokens, in place of the API key.',
  }),
});
export type ChangesStreamQuery = z.infer<typeof changesStreamQuerySchema>;

export const changesPageSchema = z.object({
  /** In commit order. */
  changes: z.array(changeEventSchema),
  /** Where the next read goes on from: after the last event here, or where the feed stood. */
  cursor: z.string(),
  /** More events can be read now. */
  hasMore: z.boolean(),
});
export type ChangesPage = z.infer<typeof changesPageSchema>;

/** How long a stream token opens streams: a page reconnecting within it needs no new one. */
export const STREAM_TOKEN_TTL_SECONDS = 3600;

export const streamTokenSchema = z.object({
  /** Pass as `?token=` to GET …/changes/stream. */
  token: z.string(),
  expiresAt: z.string(),
});
export type StreamToken = z.infer<typeof streamTokenSchema>;
