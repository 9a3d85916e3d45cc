import { z } from 'zod';
import { isoDateTimeSchema, nameSchema, textSchema } from './common';
// Filter is in scope for the declarations of the schemas below, as in records.ts: without it they
// name `import("./filters").Filter`, which the client's bundled types cannot follow.
// biome-ignore lint/correctness/noUnusedImports: used by the emitted declarations, not the code
import { type Filter, filterSchema } from './filters';
import { MAX_SEARCH_LENGTH, projectionSchema } from './records';
import { MAX_SORT_ENTRIES, sortSchema } from './sorts';

/**
 * Saved views (api-contract "Views"): a table's filter, sort, projection and search kept under a
 * name. Field references are given by name or id and kept by id, so a view follows its fields'
 * renames.
 */

export const VIEW_ID_PATTERN = /^viw[0-9A-Za-z]{12,16}$/;
export const MAX_VIEWS_PER_TABLE = 100;

const viewSortSchema = z
  .array(sortSchema, { error: 'must be an array of sort objects' })
  .max(MAX_SORT_ENTRIES, { error: `must hold at most ${MAX_SORT_ENTRIES} entries` });

const viewSearchSchema = textSchema(MAX_SEARCH_LENGTH, { type: 'must be a string' }).min(1, {
  error: 'must not be empty (leave it out to search nothing)',
});

export const createViewRequestSchema = z.strictObject({
  name: nameSchema.meta({ description: 'Unique within the table, case aside.' }),
  filter: filterSchema
    .optional()
    .meta({ description: 'A filter in the language of records/list, fields by name or id.' }),
  sort: viewSortSchema.optional().meta({ description: 'Sorts as records/list takes them.' }),
  fields: projectionSchema.optional().meta({ description: 'The fields to show, by name or id.' }),
  search: viewSearchSchema.optional().meta({ description: 'Text, as the search of records/list.' }),
});
export type CreateViewRequestInput = z.input<typeof createViewRequestSchema>;
export type CreateViewRequest = z.output<typeof createViewRequestSchema>;

/** A change of some of a view's parts; `null` takes a part away (no filter, sort, projection or search). */
export const updateViewRequestSchema = z
  .strictObject({
    name: nameSchema.optional(),
    filter: filterSchema.nullable().optional(),
    sort: viewSortSchema.nullable().optional(),
    fields: projectionSchema.nullable().optional(),
    search: viewSearchSchema.nullable().optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'must change at least one of name, filter, sort, fields or search',
  });
export type UpdateViewRequestInput = z.input<typeof updateViewRequestSchema>;
export type UpdateViewRequest = z.output<typeof updateViewRequestSchema>;

/** A view as answered: every field reference by id (system fields by their names). */
export const viewSchema = z.object({
  id: z.string().meta({ description: 'viw…' }),
  name: z.string(),
  filter: z.unknown().nullable().meta({ description: 'The filter, fields by id; null: none.' }),
  sort: z
    .array(z.object({ field: z.string(), direction: z.enum(['asc', 'desc']) }))
    .meta({ description: 'The sort, fields by id; empty: the default order.' }),
  fields: z.array(z.string()).nullable().meta({ description: 'The projection by id; null: every field.' }),
  search: z.string().nullable(),
  createdAt: isoDateTimeSchema,
  updatedAt: isoDateTimeSchema,
});
export type View = z.infer<typeof viewSchema>;

export const viewListSchema = z.object({ views: z.array(viewSchema) });
export type ViewList = z.infer<typeof viewListSchema>;
