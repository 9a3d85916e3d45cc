import { z } from 'zod';
import { identifierSchema, nameSchema } from './common';
import { fieldInputSchema, fieldSchema } from './fields';

/** The most fields a table can have; each is a physical column. */
export const MAX_FIELDS_PER_TABLE = 500;
export const MAX_TABLES_PER_DATABASE = 500;

/** Field ids are about 19 characters; a little room for what clients send by mistake. */
const MAX_FIELD_ID_LENGTH = 64;

export const tableInputSchema = z.strictObject({
  name: nameSchema,
  fields: z
    .array(fieldInputSchema)
    .min(1, { error: 'a table needs at least one field; the first becomes its primary field' })
    .max(MAX_FIELDS_PER_TABLE),
});
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
  primaryFieldId: z.string(),
  fields: z.array(fieldSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Table = z.infer<typeof tableSchema>;

export const tableListSchema = z.object({ tables: z.array(tableSchema) });

export const createDatabaseRequestSchema = z.strictObject({
  name: nameSchema,
  tables: z.array(tableInputSchema).max(50).optional(),
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
