import {
  importListResponseSchema,
  importStatusSchema,
  startImportResponseSchema,
} from '@recordbase/contracts/imports';
import { joinUrl } from './paths';
import type { StartImportInput } from './requests';
import type { CallOptions, Transport } from './transport';

/** CSV and Excel imports of files uploaded with `uploads.csv` or `uploads.xlsx`. */
export class ImportsApi {
  constructor(
    private readonly transport: Transport,
    private readonly apiUrl: string,
  ) {}

  #url(baseId: string, ...rest: string[]) {
    return joinUrl(this.apiUrl, 'bases', baseId, 'imports', ...rest);
  }
  /** Queues the import; `get` tells how it goes. */
  start(baseId: string, body: StartImportInput, options: CallOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: this.#url(baseId),
      json: body,
      schema: startImportResponseSchema,
      ...options,
    });
  }
  /** The 50 latest, newest first. */
  async list(baseId: string, options: CallOptions = {}) {
    const answer = await this.transport.request({
      method: 'GET',
      url: this.#url(baseId),
      schema: importListResponseSchema,
      idempotent: true,
      ...options,
    });
    return answer.imports;
  }
  get(baseId: string, importId: string, options: CallOptions = {}) {
    return this.transport.request({
      method: 'GET',
      url: this.#url(baseId, importId),
      schema: importStatusSchema,
      idempotent: true,
      ...options,
    });
  }
  /** Cancels a queued or running import; it leaves nothing behind. */
  cancel(baseId: string, importId: string, options: CallOptions = {}) {
    return this.transport.request({
      method: 'DELETE',
      url: this.#url(baseId, importId),
      schema: importStatusSchema,
      ...options,
    });
  }
}
