import { z } from 'zod';
import { attachmentValueSchema } from './field-values';

export const uploadRoutes = {
  attachment: '/fileupload',
  csv: '/csvupload',
  xlsx: '/xlsxupload',
  /** `GET /files/{key}` downloads a stored file. */
  files: '/files',
} as const;

/** The multipart form field that carries the file on every upload route. */
export const UPLOAD_FORM_FIELD = 'filepond';

/** Headers the attachment upload requires, naming the attachments field the file is for. */
export const attachmentUploadHeaders = {
  databaseId: 'base-public-id',
  tableId: 'table-id',
  fieldId: 'field-id',
} as const;

export const MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024;
export const MAX_IMPORT_FILE_BYTES = 50 * 1024 * 1024;

export const CSV_MIME_TYPE = 'text/csv';
export const XLSX_MIME_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** Judged from the file's bytes as well as the declared type. */
export const supportedAttachmentMimeTypes = [
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
  'text/plain',
  CSV_MIME_TYPE,
  'application/json',
  'application/zip',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  XLSX_MIME_TYPE,
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'audio/mpeg',
  'video/mp4',
] as const;
export type SupportedAttachmentMimeType = (typeof supportedAttachmentMimeTypes)[number];

export function isSupportedAttachmentMimeType(mimeType: string): mimeType is SupportedAttachmentMimeType {
  return (supportedAttachmentMimeTypes as readonly string[]).includes(mimeType);
}

/** The result is what an attachments field stores; its url is written through a record body. */
export const attachmentUploadResultSchema = attachmentValueSchema;
export type AttachmentUploadResult = z.infer<typeof attachmentUploadResultSchema>;

/** CSV and xlsx uploads: `s3Key` is what `POST .../imports` takes. */
export const importFileUploadResultSchema = z.object({
  url: z.string(),
  fileName: z.string(),
  s3Key: z.string(),
});
export type ImportFileUploadResult = z.infer<typeof importFileUploadResultSchema>;
