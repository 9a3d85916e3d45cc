import { z } from 'zod';
import { fieldReferenceSchema, textSchema, viewReferenceSchema } from './common';
import { MAX_FORMULA_LENGTH } from './fields';
import { MAX_CURSOR_LENGTH, MAX_PROJECTED_FIELDS } from './records';
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
