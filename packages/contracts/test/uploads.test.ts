import {
  attachmentUploadHeaders,
  attachmentUploadResultSchema,
  importFileUploadResultSchema,
  isSupportedAttachmentMimeType,
  MAX_ATTACHMENT_BYTES,
  MAX_IMPORT_FILE_BYTES,
  supportedAttachmentMimeTypes,
  UPLOAD_FORM_FIELD,
  XLSX_MIME_TYPE,
} from '../src/uploads';

describe('uploads', () => {
  it('names the form field, headers and limits of the specification', () => {
    expect(UPLOAD_FORM_FIELD).toBe('filepond');
    expect(Object.values(attachmentUploadHeaders)).toEqual(['base-public-id', 'table-id', 'field-id']);
    expect(MAX_ATTACHMENT_BYTES).toBe(20 * 1024 * 1024);
    expect(MAX_IMPORT_FILE_BYTES).toBe(50 * 1024 * 1024);
  });

  it('supports the attachment types of the contract and nothing executable', () => {
    expect(supportedAttachmentMimeTypes).toHaveLength(14);
    expect(isSupportedAttachmentMimeType('image/png')).toBe(true);
    expect(isSupportedAttachmentMimeType(XLSX_MIME_TYPE)).toBe(true);
    expect(isSupportedAttachmentMimeType('video/mp4')).toBe(true);
    expect(isSupportedAttachmentMimeType('text/html')).toBe(false);
    expect(isSupportedAttachmentMimeType('application/x-msdownload')).toBe(false);
    expect(isSupportedAttachmentMimeType('image/svg+xml')).toBe(false);
  });

  it('shapes the results of the upload routes', () => {
    const attachment = { url: 'http://host/files/a', fileName: 'a.png', size: 10, mimeType: 'image/png' };
    expect(attachmentUploadResultSchema.parse(attachment)).toEqual(attachment);
    expect(attachmentUploadResultSchema.safeParse({ ...attachment, size: -1 }).success).toBe(false);
    const imported = { url: 'http://host/files/b', fileName: 'b.csv', s3Key: 'imports/b.csv' };
    expect(importFileUploadResultSchema.parse(imported)).toEqual(imported);
    expect(
      importFileUploadResultSchema.safeParse({ url: imported.url, fileName: imported.fileName }).success,
    ).toBe(false);
  });
});
