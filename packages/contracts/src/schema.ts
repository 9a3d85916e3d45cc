import { z } from 'zod';
import { identifierSchema, isPlainObject, nameSchema, withPrecheck } from './common';
import { fieldInputSchema, fieldSchema } from './fields';

/** The most fields a table can have; each is a physical column. */
export const MAX_FIELDS_PER_TABLE = 500;
export const MAX_TABLES_PER_DATABASE = 500;

/*
 * What one request may create. All of a request's DDL runs in one transaction (120 s timeout),
 * and 500 fields take about 11 s of DDL, so the bounds are on the whole request, not per table.
 * Select options are data too: each is kept in the field's template.
 */
export const MAX_TABLES_PER_REQUEST = 50;
export const MAX_FIELDS_PER_REQUEST = 500;
export const MAX_SELECT_OPTIONS_PER_REQUEST = 10_000;

/** Field ids are about 19 characters; a little room for what clients send by mistake. */
const MAX_FIELD_ID_LENGTH = 64;

/** What a create request asks for, counted on the raw body before its shape is parsed. */
export type SchemaRequestMeasure = { tables: number; fields: number; selectOptions: number };

function selectOptionsOf(field: unknown): number {
  if (!isPlainObject(field) || !isPlainObject(field.template)) return 0;
  const { options } = field.template;
  return Array.isArray(options) ? options.length : 0;
}

function fieldsOf(table: unknown): readonly unknown[] {
  return isPlainObject(table) && Array.isArray(table.fields) ? table.fields : [];
}

/** Counts without recursion into values: two flat loops over the tables and their fields. */
export function measureSchemaRequest(tables: readonly unknown[]): SchemaRequestMeasure {
  let fields = 0;
  let selectOptions = 0;
  for (const table of tables) {
    for (const field of fieldsOf(table)) {
      fields += 1;
      selectOptions += selectOptionsOf(field);
    }
  }
  return { tables: tables.length, fields, selectOptions };
}

type Bound = { limit: number; message: (count: number) => string };

/** One issue per bound exceeded, each naming the bound and what the request asks for. */
function addBoundIssues(
  ctx: z.RefinementCtx<unknown>,
  checks: readonly (readonly [count: number, bound: Bound])[],
): void {
  for (const [count, bound] of checks) {
    if (count > bound.limit) ctx.addIssue({ code: 'custom', message: bound.message(count) });
  }
}

const tablesBound: Bound = {
  limit: MAX_TABLES_PER_REQUEST,
  message: (count) =>
    `one request creates at most ${MAX_TABLES_PER_REQUEST} tables; this one asks for ${count}`,
};
const fieldsPerTableBound: Bound = {
  limit: MAX_FIELDS_PER_TABLE,
  message: (count) => `a table has at most ${MAX_FIELDS_PER_TABLE} fields; this one asks for ${count}`,
};
const fieldsPerRequestBound: Bound = {
  limit: MAX_FIELDS_PER_REQUEST,
  message: (count) =>
    `one request creates at most ${MAX_FIELDS_PER_REQUEST} fields in all; this one asks for ${count}`,
};
const selectOptionsBound: Bound = {
  limit: MAX_SELECT_OPTIONS_PER_REQUEST,
  message: (count) =>
    `one request creates at most ${MAX_SELECT_OPTIONS_PER_REQUEST} select options in all; this one asks for ${count}`,
};

export const tableInputSchema = withPrecheck(
  (table, ctx) => {
    if (!isPlainObject(table)) return;
    const { fields, selectOptions } = measureSchemaRequest([table]);
    addBoundIssues(ctx, [
      [fields, fieldsPerTableBound],
      [selectOptions, selectOptionsBound],
    ]);
  },
  z.strictObject({
    name: nameSchema,
    fields: z
      .array(fieldInputSchema)
      .min(1, { error: 'a table needs at least one field; the first becomes its primary field' }),
  }),
);
export type TableInput = z.infer<typeof tableInputSchema>;

export const createTableRequestSchema = tableInputSchema;

export const updateTableRequestSchema = z
  .strictObject({
    name: nameSchema.optional(),
    primaryFieldId: identifierSchema(MAX_FIELD_ID_LENGTH).min(1, { error: 'must not be empty' }).optional(),
  })
  .refine((body) => body.name !== undefined || body.primaryFieldId !== undefined, {
    error: 'must change at least one of name or primaryFieldId',
  });
export type UpdateTableRequest = z.infer<typeof updateTableRequestSchema>;

export const tableSchema = z.object({
  id: z.string(),
  name: z.string(),
  primaryFieldId: z.string().meta({ description: 'The field that names a record (in links and expand).' }),
  fields: z.array(fieldSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Table = z.infer<typeof tableSchema>;

export const tableListSchema = z.object({ tables: z.array(tableSchema) });

/** The bounds of the whole request are counted before any table is parsed. */
function refuseOversizedTables(tables: unknown, ctx: z.RefinementCtx<unknown>): void {
  if (!Array.isArray(tables)) return;
  const measure = measureSchemaRequest(tables);
  addBoundIssues(ctx, [
    [measure.tables, tablesBound],
    [measure.fields, fieldsPerRequestBound],
    [measure.selectOptions, selectOptionsBound],
  ]);
}

export const createDatabaseRequestSchema = z.strictObject({
  name: nameSchema,
  tables: withPrecheck(refuseOversizedTables, z.array(tableInputSchema)).optional(),
});
export type CreateDatabaseRequest = z.infer<typeof createDatabaseRequestSchema>;

export const updateDatabaseRequestSchema = z.strictObject({ name: nameSchema });
export type UpdateDatabaseRequest = z.infer<typeof updateDatabaseRequestSchema>;

export const databaseSchema = z.object({
  id: z.string(),
  name: z.string(),
  tables: z.array(tableSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Database = z.infer<typeof databaseSchema>;

export const databaseListSchema = z.object({ bases: z.array(databaseSchema) });
