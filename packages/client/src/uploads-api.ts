import {
  attachmentUploadHeaders,
  attachmentUploadResultSchema,
  CSV_MIME_TYPE,
  importFileUploadResultSchema,
  MAX_ATTACHMENT_BYTES,
  MAX_IMPORT_FILE_BYTES,
  UPLOAD_FORM_FIELD,
  uploadRoutes,
  XLSX_MIME_TYPE,
} from '@recordbase/contracts/uploads';
import type { z } from 'zod';
import { RecordbaseError } from './errors';
import { withoutTrailingSlashes } from './paths';
import type { CallOptions, Transport } from './transport';

/** The attachments field a file is for: its database, table and field (ids or names). */
export interface AttachmentTarget {
  baseId: string;
  tableId: string;
  fieldId: string;
}

export interface UploadOptions extends CallOptions {
  /** The name stored with the file; a File's own name, else `upload`. */
  fileName?: string;
}

/**
 * The upload-service: attachments, import files, downloads. A file is any Blob: a browser's File
 * (from an `<input type="file">`), or in Node one of `@recordbase/client/node`'s helpers.
 */
export class UploadsApi {
  constructor(
    private readonly transport: Transport,
    private readonly uploadUrl: string | undefined,
  ) {}

  /** Uploads a file for an attachments field; write `{url}` of the answer into the field. */
  attachment(file: Blob, target: AttachmentTarget, options: UploadOptions = {}) {
    return this.#upload(
      uploadRoutes.attachment,
      file,
      MAX_ATTACHMENT_BYTES,
      options,
      attachmentUploadResultSchema,
      {
        [attachmentUploadHeaders.databaseId]: target.baseId,
        [attachmentUploadHeaders.tableId]: target.tableId,
        [attachmentUploadHeaders.fieldId]: target.fieldId,
      },
    );
  }

  /** Uploads a CSV file to import; `imports.start` takes the answer's `s3Key`. */
  csv(file: Blob, options: UploadOptions = {}) {
    return this.#upload(
      uploadRoutes.csv,
      retype(file, CSV_MIME_TYPE),
      MAX_IMPORT_FILE_BYTES,
      withName(file, options, 'import.csv'),
      importFileUploadResultSchema,
    );
  }

  /** Uploads an Excel workbook (.xlsx) to import; `imports.start` takes the answer's `s3Key`. */
  xlsx(file: Blob, options: UploadOptions = {}) {
    return this.#upload(
      uploadRoutes.xlsx,
      retype(file, XLSX_MIME_TYPE),
      MAX_IMPORT_FILE_BYTES,
      withName(file, options, 'import.xlsx'),
      importFileUploadResultSchema,
    );
  }

  /** The download URL of a stored file from its key (`attachments/…`), or the url itself. */
  fileUrl(keyOrUrl: string): string {
    if (/^https?:\/\//i.test(keyOrUrl)) return keyOrUrl;
    const key = keyOrUrl.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/');
    return `${this.#root()}${uploadRoutes.files}/${key}`;
  }

  /**
   * Downloads a stored file with the key (an attachment's `url`, `signedUrl` or storage key):
   * the response, its body unread, for streaming. `range` asks for part of it (`bytes=0-99`).
   */
  download(keyOrUrl: string, options: CallOptions & { range?: string } = {}): Promise<Response> {
    return this.transport.send({
      method: 'GET',
      url: this.fileUrl(keyOrUrl),
      idempotent: true,
      ...(options.range ? { headers: { range: options.range } } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  #root(): string {
    if (!this.uploadUrl)
      throw new TypeError('uploadUrl (the upload-service address) is required for uploads and downloads');
    return withoutTrailingSlashes(this.uploadUrl);
  }

  #upload<Schema extends z.ZodType>(
    route: string,
    file: Blob,
    maxBytes: number,
    options: UploadOptions,
    schema: Schema,
    headers: Record<string, string> = {},
  ) {
    if (file.size > maxBytes) {
      throw new RecordbaseError(
        'INVALID_INPUT',
        `The file is ${file.size} bytes, more than the ${maxBytes} bytes ${route} takes`,
      );
    }
    const fileName = options.fileName ?? nameOf(file) ?? 'upload';
    return this.transport.request({
      method: 'POST',
      url: `${this.#root()}${route}`,
      headers,
      body: () => {
        const form = new FormData();
        form.append(UPLOAD_FORM_FIELD, file, fileName);
        return form;
      },
      schema,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }
}

function nameOf(file: Blob): string | undefined {
  const name = (file as Partial<File>).name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

function withName(file: Blob, options: UploadOptions, fallback: string): UploadOptions {
  return { ...options, fileName: options.fileName ?? nameOf(file) ?? fallback };
}

/** The import routes judge the declared type; a Blob's slice re-types it without a copy. */
function retype(file: Blob, type: string): Blob {
  return file.type === type ? file : file.slice(0, file.size, type);
}
