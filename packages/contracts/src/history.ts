import { z } from 'zod';
import { boundedString, FIELD_ID_PATTERN, isoDateTimeSchema, TABLE_ID_PATTERN, uuidSchema } from './common';
import { eventSourceSchema } from './events';
import { fieldSchema } from './fields';
import { tableSchema } from './schema';

/** Revisions per page of a history: 1 to 100, 20 by default (the contract's "History and trash"). */
export const MAX_HISTORY_LIMIT = 100;
export const DEFAULT_HISTORY_LIMIT = 20;
/** A history cursor is a few dozen characters; anything much longer is not one of ours. */
export const MAX_HISTORY_CURSOR_LENGTH = 200;

const limitError = `must be an integer from 1 to ${MAX_HISTORY_LIMIT}`;

/** `GET …/history?limit=&cursor=`: query values arrive as text. */
export const historyQuerySchema = z.strictObject({
  limit: z.coerce
    .number({ error: limitError })
    .int({ error: limitError })
    .min(1, { error: limitError })
    .max(MAX_HISTORY_LIMIT, { error: limitError })
    .default(DEFAULT_HISTORY_LIMIT)
    .meta({ description: `Revisions per page, newest first, 1 to ${MAX_HISTORY_LIMIT}.` }),
  cursor: boundedString(MAX_HISTORY_CURSOR_LENGTH, {
    tooLong: 'is not a history cursor; pass back the nextCursor of a page unchanged',
  })
    .optional()
    .meta({ description: 'The nextCursor of the previous page of the same history.' }),
});
export type HistoryQuery = z.infer<typeof historyQuerySchema>;

export const revisionActions = ['created', 'updated', 'deleted', 'restored'] as const;

/** A field's value before and after a revision, as the API renders values (null when empty). */
export const fieldChangeSchema = z.object({ before: z.unknown(), after: z.unknown() });

export const revisionSchema = z.object({
  /** Stable for as long as the revision is kept: `<event sequence>-<position in the event>`. */
  id: z.string(),
  recordId: uuidSchema,
  at: isoDateTimeSchema,
  action: z.enum(revisionActions),
  /** The key that wrote; null for a write no key made (an import's rows). */
  by: z.object({ id: z.string(), name: z.string() }).nullable(),
  source: eventSourceSchema,
  /** By field id: the written fields the revision changed (computed fields are not changes of their own). */
  changes: z.record(z.string(), fieldChangeSchema),
});
export type Revision = z.infer<typeof revisionSchema>;

export const historyPageSchema = z.object({
  revisions: z.array(revisionSchema),
  /** Absent on the last page. */
  nextCursor: z.string().optional(),
});
export type HistoryPage = z.infer<typeof historyPageSchema>;

/** A revision id as the API shows it: the event's sequence and the record's place in the event. */
export const revisionIdSchema = z.string().regex(/^[1-9][0-9]{0,17}-[1-9][0-9]{0,5}$/, {
  error: 'is not a revision id',
});

/** `GET …/tables/{tableId}/trash?limit=&cursor=`: pages as a history's. */
export const trashQuerySchema = historyQuerySchema;
export type TrashQuery = HistoryQuery;

/** Records restored from the trash at once: all or none. */
export const MAX_RESTORED_RECORDS = 100;

/** `POST …/tables/{tableId}/trash/restore`. */
export const restoreTrashRequestSchema = z.strictObject({
  ids: z
    .array(uuidSchema, { error: 'must be an array of record ids' })
    .min(1, { error: `must list 1 to ${MAX_RESTORED_RECORDS} record ids` })
    .max(MAX_RESTORED_RECORDS, { error: `must list 1 to ${MAX_RESTORED_RECORDS} record ids` })
    .meta({
      description: `The deleted records to bring back, 1 to ${MAX_RESTORED_RECORDS}: all of them, or none when one is not in the trash.`,
    }),
});
export type RestoreTrashRequest = z.infer<typeof restoreTrashRequestSchema>;

/** A deleted record as its table's trash lists it. */
export const trashedRecordSchema = z.object({
  /** As the API rendered it when it was deleted. */
  record: z.unknown(),
  deletedAt: isoDateTimeSchema,
  /** The key that deleted it. */
  deletedBy: z.object({ id: z.string(), name: z.string() }).nullable(),
});

export const trashPageSchema = z.object({
  records: z.array(trashedRecordSchema),
  /** Absent on the last page. */
  nextCursor: z.string().optional(),
});
export type TrashPage = z.infer<typeof trashPageSchema>;

/** Tables, and fields, restored from a database's trash at once: all or none. */
export const MAX_RESTORED_SCHEMA_ITEMS = 100;

const idList = (pattern: RegExp, what: string) =>
  z
    .array(z.string().regex(pattern, { error: `is not a ${what} id` }), {
      error: `must be an array of ${what} ids`,
    })
    .max(MAX_RESTORED_SCHEMA_ITEMS, { error: `must list at most ${MAX_RESTORED_SCHEMA_ITEMS} ${what} ids` })
    .optional();

/** `POST /bases/{databaseId}/trash/restore`. */
export const restoreSchemaTrashRequestSchema = z
  .strictObject({
    tableIds: idList(TABLE_ID_PATTERN, 'table').meta({
      description:
        'Deleted tables to bring back, with their records, links and the link fields deleted with them.',
    }),
    fieldIds: idList(FIELD_ID_PATTERN, 'field').meta({
      description: 'Deleted fields to bring back into their tables, with their values.',
    }),
  })
  .refine((body) => (body.tableIds?.length ?? 0) + (body.fieldIds?.length ?? 0) > 0, {
    error: 'must list at least one table or field id in tableIds or fieldIds',
  });
export type RestoreSchemaTrashRequest = z.infer<typeof restoreSchemaTrashRequestSchema>;

const deletion = {
  deletedAt: isoDateTimeSchema,
  /** The key that deleted it. */
  deletedBy: z.object({ id: z.string(), name: z.string() }).nullable(),
};

/** `GET /bases/{databaseId}/trash`: the newest 100 tables and 1,000 fields, newest first. */
export const schemaTrashSchema = z.object({
  /** Each as it was when deleted, with its fields. */
  tables: z.array(tableSchema.extend(deletion)),
  /** Fields deleted on their own, each with the id of its table. */
  fields: z.array(fieldSchema.extend({ tableId: z.string(), ...deletion })),
});
export type SchemaTrash = z.infer<typeof schemaTrashSchema>;

/** What a database trash restore brought back, as they are now. */
export const restoredSchemaSchema = z.object({
  tables: z.array(tableSchema),
  /** Fields restored into tables that were not: those asked for, and other tables' link fields to a restored table. */
  fields: z.array(fieldSchema),
});
export type RestoredSchema = z.infer<typeof restoredSchemaSchema>;
