import { z } from 'zod';
import { textSchema, unionError } from './common';
import { fieldTypeSchema } from './fields';

export const MAX_SQL_QUERY_LENGTH = 100_000;
export const MAX_SQL_PARAMS = 100;
/** As long as the longest text value a record holds. */
export const MAX_SQL_PARAM_LENGTH = 100_000;
export const DEFAULT_SQL_ROW_LIMIT = 1000;
export const MAX_SQL_ROW_LIMIT = 10_000;

/** Bound to $1, $2, ... in order. */
export const sqlParamSchema = z.union([textSchema(MAX_SQL_PARAM_LENGTH), z.number(), z.boolean(), z.null()], {
  error: unionError('must be a string, number, boolean or null'),
});
export type SqlParam = z.infer<typeof sqlParamSchema>;

export const sqlQueryRequestSchema = z.strictObject({
  query: textSchema(MAX_SQL_QUERY_LENGTH, { type: 'must be a string of SQL' })
    .min(1, { error: 'must not be empty' })
    .refine((query) => query.trim().length > 0, { error: 'must not be blank' }),
  params: z
    .array(sqlParamSchema, { error: 'must be an array of values' })
    .max(MAX_SQL_PARAMS, { error: `must hold at most ${MAX_SQL_PARAMS} values` })
    .default([]),
  limit: z
    .int({ error: 'must be an integer' })
    .min(1, { error: `must be between 1 and ${MAX_SQL_ROW_LIMIT}` })
    .max(MAX_SQL_ROW_LIMIT, { error: `must be between 1 and ${MAX_SQL_ROW_LIMIT}` })
    .default(DEFAULT_SQL_ROW_LIMIT),
});
export type SqlQueryRequestInput = z.input<typeof sqlQueryRequestSchema>;
export type SqlQueryRequest = z.output<typeof sqlQueryRequestSchema>;

export const sqlQueryResponseSchema = z.object({
  /** `type` is the PostgreSQL type name of the result column as format_type gives it: text, bigint, text[]. */
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  /** One array per row, values in column order. */
  rows: z.array(z.array(z.unknown())),
  rowCount: z.int().min(0),
  /** More rows existed than were returned: past `limit`, or past the cap on result bytes. */
  truncated: z.boolean(),
});
export type SqlQueryResponse = z.infer<typeof sqlQueryResponseSchema>;

export const sqlSchemaColumnSchema = z.object({
  name: z.string(),
  /** null for the system columns id, createdAt and updatedAt. */
  fieldId: z.string().nullable(),
  fieldType: fieldTypeSchema.nullable(),
  sqlType: z.string(),
});
export type SqlSchemaColumn = z.infer<typeof sqlSchemaColumnSchema>;

export const sqlSchemaResponseSchema = z.object({
  tables: z.array(
    z.object({
      /** The table's name, as queries refer to it. */
      name: z.string(),
      tableId: z.string(),
      columns: z.array(sqlSchemaColumnSchema),
    }),
  ),
});
export type SqlSchemaResponse = z.infer<typeof sqlSchemaResponseSchema>;
