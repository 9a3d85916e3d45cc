import { successMessageSchema } from '@recordbase/contracts/errors';
import { viewListSchema, viewSchema } from '@recordbase/contracts/views';
import { joinUrl } from './paths';
import type { CreateViewInput, UpdateViewInput } from './requests';
import type { CallOptions, Transport } from './transport';

/** Saved views of a table: a filter, sort, projection and search under a name, fields kept by id. */
export class ViewsApi {
  constructor(
    private readonly transport: Transport,
    private readonly apiUrl: string,
  ) {}

  #url(baseId: string, tableId: string, ...rest: string[]) {
    return joinUrl(this.apiUrl, 'bases', baseId, 'tables', tableId, 'views', ...rest);
  }

  create(baseId: string, tableId: string, body: CreateViewInput, options: CallOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: this.#url(baseId, tableId),
      json: body,
      schema: viewSchema,
      ...options,
    });
  }
  /** Oldest first. */
  async list(baseId: string, tableId: string, options: CallOptions = {}) {
    const answer = await this.transport.request({
      method: 'GET',
      url: this.#url(baseId, tableId),
      schema: viewListSchema,
      idempotent: true,
      ...options,
    });
    return answer.views;
  }
  /** `viewId`: its id (viw…) or its name. */
  get(baseId: string, tableId: string, viewId: string, options: CallOptions = {}) {
    return this.transport.request({
      method: 'GET',
      url: this.#url(baseId, tableId, viewId),
      schema: viewSchema,
      idempotent: true,
      ...options,
    });
  }
  /** Only what `body` gives changes; `null` takes a part away. */
  update(baseId: string, tableId: string, viewId: string, body: UpdateViewInput, options: CallOptions = {}) {
    return this.transport.request({
      method: 'PATCH',
      url: this.#url(baseId, tableId, viewId),
      json: body,
      schema: viewSchema,
      ...options,
    });
  }
  delete(baseId: string, tableId: string, viewId: string, options: CallOptions = {}) {
    return this.transport.request({
      method: 'DELETE',
      url: this.#url(baseId, tableId, viewId),
      schema: successMessageSchema,
      ...options,
    });
  }
}
