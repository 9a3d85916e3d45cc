import { pathSegmentSchema } from '@recordbase/contracts/common';
import { z } from 'zod';
import * as ex from './examples';

/** The path parameters of the routes, described once. */
const databaseId = pathSegmentSchema.meta({
  description: 'The database (base) id, as answered when it was created.',
  example: ex.DATABASE_ID,
});
const tableId = pathSegmentSchema.meta({
  description: 'A table id (tbl...) or the table name.',
  example: ex.TABLE_ID,
});
const fieldId = pathSegmentSchema.meta({
  description: 'A field id (fld...) or the field name.',
  example: ex.FIELD_IDS.status,
});
const recordId = z
  .string()
  .min(1)
  .max(255)
  .meta({ description: 'A record id (a UUID).', example: ex.RECORD_ID });
const webhookId = pathSegmentSchema.meta({ description: 'A webhook id (an integer).', example: '42' });
const deliveryId = pathSegmentSchema.meta({
  description: 'A delivery id, as the delivery log lists it.',
  example: '1093',
});
const viewId = pathSegmentSchema.meta({
  description: 'A view id (viw...) or the view name.',
  example: 'viwOp3nD34ls7Qx2',
});
const importId = z
  .uuid()
  .meta({ description: 'An import id, as answered when it started.', example: ex.IMPORT_ID });
const apiKeyId = z.uuid().meta({ description: 'An API key id (a UUID).', example: ex.API_KEY_ID });

export const baseParams = z.object({ databaseId });
export const tableParams = baseParams.extend({ tableId });
export const fieldParams = tableParams.extend({ fieldId });
export const recordParams = tableParams.extend({ recordId });
const revisionId = z
  .string()
  .min(1)
  .max(255)
  .meta({ description: "A revision id, as the record's history lists it.", example: '1017-1' });
export const revisionParams = recordParams.extend({ revisionId });
export const webhookParams = baseParams.extend({ webhookId });
export const deliveryParams = webhookParams.extend({ deliveryId });
export const importParams = baseParams.extend({ importId });
export const apiKeyParams = z.object({ apiKeyId });
export const viewParams = tableParams.extend({ viewId });
