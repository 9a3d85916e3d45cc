import { z } from 'zod';
import { fieldReferenceSchema, textSchema, viewReferenceSchema } from './common';
import { MAX_FORMULA_LENGTH } from './fields';
import {
  MAX_CURSOR_LENGTH,
  MAX_MATCH_ON_FIELDS,
  MAX_PROJECTED_FIELDS,
  recordValuesInputSchema,
  typecastSchema,
} from './records';
import { MAX_SORT_ENTRIES, sortDirectionSchema } from './sorts';

/**
 * The Airtable-compatible API (api-contract "The Airtable-compatible API"): `/v0/{baseId}/{table}`
 * speaks Airtable's Web API for records, so a program written against it, or against Airtable.js,
 * moves by changing its endpoint. Airtable's own limits where a client relies on them (100 records
 * a page, 10 a write); ours everywhere else.
 */

/** Records per page at most, and by default, as Airtable answers. */
export const AIRTABLE_MAX_PAGE_SIZE = 100;
/** Records one create, update or delete takes at most, as Airtable does. */
export const AIRTABLE_MAX_RECORDS_PER_WRITE = 10;

/**
 * A listing's parameters, from the query of `GET /v0/{baseId}/{table}` (decoded from Airtable's
 * `fields[]=…` and `sort[0][field]=…` forms) or the body of `POST …/listRecords`, which Airtable.js
 * sends when the query would be too long.
 */
export const airtableListParamsSchema = z.strictObject(
  {
    pageSize: z
      .int({ error: 'must be an integer' })
      .min(1, { error: `must be between 1 and ${AIRTABLE_MAX_PAGE_SIZE}` })
      .max(AIRTABLE_MAX_PAGE_SIZE, { error: `must be between 1 and ${AIRTABLE_MAX_PAGE_SIZE}` })
      .optional(),
    maxRecords: z
      .int({ error: 'must be an integer' })
      .min(1, { error: 'must be 1 or more' })
      .max(Number.MAX_SAFE_INTEGER, { error: 'is too large' })
      .optional(),
    /** The `offset` of the previous page of the same listing, as it came. */
    offset: z
      .string({ error: 'must be a string (the offset of the previous page)' })
      .min(1, { error: 'must not be empty' })
      .max(MAX_CURSOR_LENGTH + 32, { error: 'is too long to be an offset this service gave' })
      .optional(),
    fields: z
      .array(fieldReferenceSchema, { error: 'must be an array of field names or ids' })
      .max(MAX_PROJECTED_FIELDS, { error: `must name at most ${MAX_PROJECTED_FIELDS} fields` })
      .optional(),
    /** A formula in the formula language of computed fields; a record is listed when it is true. */
    filterByFormula: textSchema(MAX_FORMULA_LENGTH, { type: 'must be a string (a formula)' }).optional(),
    sort: z
      .array(z.strictObject({ field: fieldReferenceSchema, direction: sortDirectionSchema.optional() }), {
        error: 'must be an array of {field, direction} objects',
      })
      .max(MAX_SORT_ENTRIES, { error: `must hold at most ${MAX_SORT_ENTRIES} entries` })
      .optional(),
    view: viewReferenceSchema.optional(),
    cellFormat: z
      .literal('json', { error: 'must be "json": values come as JSON; "string" is not supported' })
      .optional(),
    /** Taken and ignored: they shape cellFormat "string" only, which this service does not give. */
    timeZone: textSchema(100, { type: 'must be a string' }).optional(),
    userLocale: textSchema(100, { type: 'must be a string' }).optional(),
    returnFieldsByFieldId: z.boolean({ error: 'must be true or false' }).optional(),
    /** Airtable.js sends the method it was asked to use along with the parameters; ignored. */
    method: z.enum(['get', 'post'], { error: 'must be "get" or "post"' }).optional(),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown parameter ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}`
        : undefined,
  },
);
export type AirtableListParams = z.output<typeof airtableListParamsSchema>;

/** A record as Airtable answers it: empty fields left out. */
export const airtableRecordSchema = z.object({
  id: z.string(),
  createdTime: z.string(),
  fields: z.record(z.string(), z.unknown()),
});
export type AirtableRecord = z.infer<typeof airtableRecordSchema>;

export const airtableListResponseSchema = z.object({
  records: z.array(airtableRecordSchema),
  /** Pass back as `offset` for the next page; absent on the last one. */
  offset: z.string().optional(),
});
export type AirtableListResponse = z.infer<typeof airtableListResponseSchema>;

/** An error as Airtable answers it; Airtable.js reads `type` and `message`. */
export const airtableErrorBodySchema = z.object({
  error: z.object({ type: z.string(), message: z.string() }),
});
export type AirtableErrorBody = z.infer<typeof airtableErrorBodySchema>;

/** A record's values as Airtable.js writes them: keyed by field name or id. */
const airtableFieldsSchema = recordValuesInputSchema;

/** What every write takes besides its records. */
const writeOptionsShape = {
  typecast: typecastSchema,
  returnFieldsByFieldId: z.boolean({ error: 'must be true or false' }).optional(),
};

const recordsOf = <T extends z.ZodType>(record: T) =>
  z
    .array(record, { error: 'must be an array of records' })
    .min(1, { error: 'must hold at least one record' })
    .max(AIRTABLE_MAX_RECORDS_PER_WRITE, {
      error: `must hold at most ${AIRTABLE_MAX_RECORDS_PER_WRITE} records, as Airtable takes`,
    });

/** POST /v0/{baseId}/{table}: `{records: [{fields}]}`, or one record as `{fields}`. */
export const airtableCreateBodySchema = z
  .strictObject({
    records: recordsOf(z.strictObject({ fields: airtableFieldsSchema })).optional(),
    fields: airtableFieldsSchema.optional(),
    ...writeOptionsShape,
  })
  .superRefine((body, ctx) => {
    if ((body.records === undefined) !== (body.fields === undefined)) return;
    ctx.addIssue({
      code: 'custom',
      message: 'needs either records (an array of {fields}) or fields (one record)',
    });
  });
export type AirtableCreateBody = z.output<typeof airtableCreateBodySchema>;

/**
 * PATCH (update) and PUT (replace, which clears the fields a record leaves out) of
 * /v0/{baseId}/{table}: records by id, or with `performUpsert` matched on `fieldsToMergeOn` and
 * created when none matches.
 */
export const airtableUpdateBodySchema = z
  .strictObject({
    records: recordsOf(
      z.strictObject({
        id: z
          .string({ error: 'must be a record id' })
          .min(1, { error: 'must be a record id' })
          .max(64, {
            error: 'must be a record id',
          })
          .optional(),
        fields: airtableFieldsSchema,
      }),
    ),
    performUpsert: z
      .strictObject({
        fieldsToMergeOn: z
          .array(fieldReferenceSchema, { error: 'must be an array of field names or ids' })
          .min(1, { error: 'must name at least one field' })
          .max(MAX_MATCH_ON_FIELDS, { error: `must name at most ${MAX_MATCH_ON_FIELDS} fields` }),
      })
      .optional(),
    ...writeOptionsShape,
  })
  .superRefine((body, ctx) => {
    body.records.forEach((record, index) => {
      if (body.performUpsert === undefined && record.id === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['records', index, 'id'],
          message: 'is needed (or performUpsert)',
        });
      }
      if (body.performUpsert !== undefined && record.id !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['records', index, 'id'],
          message: 'cannot be given with performUpsert: an upserted record is found by fieldsToMergeOn',
        });
      }
    });
  });
export type AirtableUpdateBody = z.output<typeof airtableUpdateBodySchema>;

/** PATCH and PUT of /v0/{baseId}/{table}/{recordId}. */
export const airtableUpdateOneBodySchema = z.strictObject({
  fields: airtableFieldsSchema,
  ...writeOptionsShape,
});
export type AirtableUpdateOneBody = z.output<typeof airtableUpdateOneBodySchema>;

/** DELETE /v0/{baseId}/{table}?records[]=…: up to 10 record ids. */
export const airtableDeleteIdsSchema = recordsOf(
  z
    .string({ error: 'must be a record id' })
    .min(1, { error: 'must be a record id' })
    .max(64, { error: 'must be a record id' }),
);

export const airtableDeletedSchema = z.object({ id: z.string(), deleted: z.literal(true) });
export const airtableDeleteResponseSchema = z.object({ records: z.array(airtableDeletedSchema) });
export const airtableWriteResponseSchema = z.object({
  records: z.array(airtableRecordSchema),
  /** Upserts only: the ids created and updated. */
  createdRecords: z.array(z.string()).optional(),
  updatedRecords: z.array(z.string()).optional(),
});
export type AirtableWriteResponse = z.infer<typeof airtableWriteResponseSchema>;

/** GET /v0/meta/bases: the bases the key reaches, with what it may do in them. */
export const airtableBasesResponseSchema = z.object({
  bases: z.array(
    z.object({ id: z.string(), name: z.string(), permissionLevel: z.enum(['read', 'edit', 'create']) }),
  ),
});

/** GET /v0/meta/bases/{baseId}/tables: a base's tables with their fields (Airtable's type names) and views. */
export const airtableTablesResponseSchema = z.object({
  tables: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      primaryFieldId: z.string(),
      fields: z.array(
        z.object({
          id: z.string(),
          name: z.string(),
          type: z.string(),
          options: z.record(z.string(), z.unknown()).optional(),
        }),
      ),
      views: z.array(z.object({ id: z.string(), name: z.string(), type: z.literal('grid') })),
    }),
  ),
});
