import { apiKeyListSchema, createdApiKeySchema } from '@recordbase/contracts/api-keys';
import { successMessageSchema } from '@recordbase/contracts/errors';
import { joinUrl } from './paths';
import type { CreateApiKeyInput } from './requests';
import type { CallOptions, Transport } from './transport';

/** API keys; only the root key manages them. */
export class ApiKeysApi {
  constructor(
    private readonly transport: Transport,
    private readonly apiUrl: string,
  ) {}

  /** The answer's `key` is shown this once. */
  create(body: CreateApiKeyInput, options: CallOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: joinUrl(this.apiUrl, 'api-keys'),
      json: body,
      schema: createdApiKeySchema,
      ...options,
    });
  }
  async list(options: CallOptions = {}) {
    const answer = await this.transport.request({
      method: 'GET',
      url: joinUrl(this.apiUrl, 'api-keys'),
      schema: apiKeyListSchema,
      idempotent: true,
      ...options,
    });
    return answer.apiKeys;
  }
  revoke(apiKeyId: string, options: CallOptions = {}) {
    return this.transport.request({
      method: 'DELETE',
      url: joinUrl(this.apiUrl, 'api-keys', apiKeyId),
      schema: successMessageSchema,
      ...options,
    });
  }
}
