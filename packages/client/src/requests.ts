import type { createApiKeyRequestSchema } from '@recordbase/contracts/api-keys';
import type { createFieldRequestSchema, updateFieldRequestSchema } from '@recordbase/contracts/fields';
import type { restoreSchemaTrashRequestSchema } from '@recordbase/contracts/history';
import type { startImportRequestSchema } from '@recordbase/contracts/imports';
import type {
  aggregateRecordsRequestSchema,
  bulkRecordsRequestSchema,
  bulkUpdateRecordsRequestSchema,
  exportRecordsRequestSchema,
  listRecordsRequestSchema,
} from '@recordbase/contracts/records';
import type {
  createDatabaseRequestSchema,
  createTableRequestSchema,
  updateDatabaseRequestSchema,
  updateTableRequestSchema,
} from '@recordbase/contracts/schema';
import type { sqlQueryRequestSchema } from '@recordbase/contracts/sql';
import type { createViewRequestSchema, updateViewRequestSchema } from '@recordbase/contracts/views';
import type { createWebhookRequestSchema, updateWebhookRequestSchema } from '@recordbase/contracts/webhooks';
import type { z } from 'zod';

/**
 * Request bodies as a caller writes them: the contracts' input types (defaults may be left out).
 * The service checks them; the client does not, so that its 400 names what was wrong in one style.
 */
export type CreateDatabaseInput = z.input<typeof createDatabaseRequestSchema>;
export type UpdateDatabaseInput = z.input<typeof updateDatabaseRequestSchema>;
export type CreateTableInput = z.input<typeof createTableRequestSchema>;
export type UpdateTableInput = z.input<typeof updateTableRequestSchema>;
export type CreateFieldInput = z.input<typeof createFieldRequestSchema>;
export type UpdateFieldInput = z.input<typeof updateFieldRequestSchema>;
/** `tableIds` and `fieldIds` of the database's trash to restore: up to 100 each, at least one in all. */
export type RestoreSchemaTrashInput = z.input<typeof restoreSchemaTrashRequestSchema>;
export type CreateApiKeyInput = z.input<typeof createApiKeyRequestSchema>;
export type CreateViewInput = z.input<typeof createViewRequestSchema>;
export type UpdateViewInput = z.input<typeof updateViewRequestSchema>;
export type CreateWebhookInput = z.input<typeof createWebhookRequestSchema>;
export type UpdateWebhookInput = z.input<typeof updateWebhookRequestSchema>;
export type StartImportInput = z.input<typeof startImportRequestSchema>;
export type SqlQueryInput = z.input<typeof sqlQueryRequestSchema>;
export type ListRecordsInput = z.input<typeof listRecordsRequestSchema>;
export type AggregateRecordsInput = z.input<typeof aggregateRecordsRequestSchema>;
export type ExportRecordsInput = z.input<typeof exportRecordsRequestSchema>;
export type BulkRecordsInput = z.input<typeof bulkRecordsRequestSchema>;
export type BulkUpdateRecordsInput = z.input<typeof bulkUpdateRecordsRequestSchema>;
/** Field values keyed by field name or id. */
export type RecordFields = Record<string, unknown>;
