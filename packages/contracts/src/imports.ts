import { z } from 'zod';
import { nameSchema, tableRefSchema, textSchema, uuidSchema } from './common';

/** The most cell errors an import status lists; a last entry counts the rest. */
export const MAX_IMPORT_ERRORS_REPORTED = 1000;

export const startImportRequestSchema = z
  .strictObject({
    /** From the csvupload or xlsxupload result. */
    s3Key: textSchema(1024, { type: 'must be the s3Key of an upload' })
      .min(1, {
        error: 'must be the s3Key of an upload',
      })
      .meta({ description: 'The s3Key of a POST /csvupload or /xlsxupload answer.' }),
    /** Append to this table (id or name); columns are matched to fields by header name. */
    tableId: tableRefSchema.optional().meta({
      description: 'Append to this table (id or name); columns are matched to fields by header name.',
    }),
    /** Name of the new table when no tableId is given; defaults to the file name. */
    tableName: nameSchema
      .optional()
      .meta({ description: 'Name of the new table when no tableId is given; defaults to the file name.' }),
    /** Worksheet name of an xlsx file; defaults to the first sheet. */
    sheet: textSchema(255)
      .min(1, { error: 'must not be empty' })
      .optional()
      .meta({ description: 'Worksheet of an xlsx file; defaults to the first sheet.' }),
    firstRowIsHeader: z.boolean({ error: 'must be true or false' }).default(true),
  })
  .refine((body) => body.tableId === undefined || body.tableName === undefined, {
    error: 'give tableId to add rows to a table or tableName to create one, not both',
    path: ['tableName'],
  });
export type StartImportRequestInput = z.input<typeof startImportRequestSchema>;
export type StartImportRequest = z.output<typeof startImportRequestSchema>;

export const startImportResponseSchema = z.object({
  id: uuidSchema,
  status: z.literal('queued'),
});
export type StartImportResponse = z.infer<typeof startImportResponseSchema>;

export const importStatuses = ['queued', 'running', 'succeeded', 'failed'] as const;
export const importStatusValueSchema = z.enum(importStatuses);
export type ImportStatusValue = z.infer<typeof importStatusValueSchema>;

export const importRowErrorSchema = z.object({
  /** 1-based row as a spreadsheet shows it (a header is row 1); null for the file as a whole. */
  row: z.int().min(1).nullable(),
  /** Header name (or 1-based column number when there is no header); null when the row as a whole failed. */
  column: z.string().nullable(),
  message: z.string(),
});
export type ImportRowError = z.infer<typeof importRowErrorSchema>;

export const importStatusSchema = z.object({
  id: uuidSchema,
  status: importStatusValueSchema,
  /** The target table; null until a new table has been created. */
  tableId: z.string().nullable(),
  rowsImported: z.int().min(0),
  /** null until the whole file has been read. */
  rowsTotal: z.int().min(0).nullable(),
  /** Columns with no field of the same name in an existing target table. */
  skippedColumns: z.array(z.string()),
  errors: z.array(importRowErrorSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ImportStatus = z.infer<typeof importStatusSchema>;

/** GET …/imports: the database's most recent imports, newest first. */
export const importListResponseSchema = z.object({ imports: z.array(importStatusSchema) });
export type ImportListResponse = z.infer<typeof importListResponseSchema>;
