import { successMessageSchema } from '@recordbase/contracts/errors';
import {
  createdWebhookSchema,
  retryWebhookDeliveryResponseSchema,
  webhookDeliveryListSchema,
  webhookListSchema,
  webhookSchema,
} from '@recordbase/contracts/webhooks';
import { joinUrl, withQuery } from './paths';
import type { CreateWebhookInput, UpdateWebhookInput } from './requests';
import type { CallOptions, Transport } from './transport';

/** Webhooks of a database and their delivery log. */
export class WebhooksApi {
  constructor(
    private readonly transport: Transport,
    private readonly apiUrl: string,
  ) {}

  #url(baseId: string, ...rest: (string | number)[]) {
    return joinUrl(this.apiUrl, 'bases', baseId, 'webhooks', ...rest);
  }

  /** The answer carries `secret` (`whsec_…`), shown this once: keep it to verify deliveries. */
  create(baseId: string, body: CreateWebhookInput, options: CallOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: this.#url(baseId),
      json: body,
      schema: createdWebhookSchema,
      ...options,
    });
  }
  async list(baseId: string, options: CallOptions = {}) {
    const answer = await this.transport.request({
      method: 'GET',
      url: this.#url(baseId),
      schema: webhookListSchema,
      idempotent: true,
      ...options,
    });
    return answer.webhooks;
  }
  get(baseId: string, webhookId: number, options: CallOptions = {}) {
    return this.transport.request({
      method: 'GET',
      url: this.#url(baseId, webhookId),
      schema: webhookSchema,
      idempotent: true,
      ...options,
    });
  }
  update(baseId: string, webhookId: number, body: UpdateWebhookInput, options: CallOptions = {}) {
    return this.transport.request({
      method: 'PATCH',
      url: this.#url(baseId, webhookId),
      json: body,
      schema: webhookSchema,
      ...options,
    });
  }
  delete(baseId: string, webhookId: number, options: CallOptions = {}) {
    return this.transport.request({
      method: 'DELETE',
      url: this.#url(baseId, webhookId),
      schema: successMessageSchema,
      ...options,
    });
  }
  /** Delivery attempts, most recent first (`limit` 1 to 200, 50 by default). */
  async deliveries(
    baseId: string,
    webhookId: number,
    query: { limit?: number } = {},
    options: CallOptions = {},
  ) {
    const url = withQuery(this.#url(baseId, webhookId, 'deliveries'), { limit: query.limit });
    const answer = await this.transport.request({
      method: 'GET',
      url,
      schema: webhookDeliveryListSchema,
      idempotent: true,
      ...options,
    });
    return answer.deliveries;
  }
  /** Sends a delivery again at once. */
  retryDelivery(baseId: string, webhookId: number, deliveryId: string, options: CallOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: this.#url(baseId, webhookId, 'deliveries', deliveryId, 'retry'),
      schema: retryWebhookDeliveryResponseSchema,
      ...options,
    });
  }
}
