import { ApiKeysApi } from './api-keys-api';
import { ChangesApi } from './changes-api';
import { ImportsApi } from './imports-api';
import { withoutTrailingSlashes } from './paths';
import { RecordsApi } from './records-api';
import type { RetryPolicy } from './retry';
import { BasesApi, FieldsApi, TablesApi } from './schema-api';
import { SqlApi } from './sql-api';
import { Transport } from './transport';
import { UploadsApi } from './uploads-api';
import { ViewsApi } from './views-api';
import { WebhooksApi } from './webhooks-api';

export interface RecordbaseClientOptions {
  /** The API's root, `/api/v1` included: `http://localhost:3000/api/v1`. */
  apiUrl: string;
  /** The upload-service's address, for uploads and downloads: `http://localhost:3001`. */
  uploadUrl?: string;
  /** An API key (sent as `Authorization: Bearer`). */
  apiKey: string;
  /** Retries of 429 and 503 (and of reads after a failed connection); see retry.ts. */
  retry?: Partial<RetryPolicy>;
  /** Another fetch; the global one by default. */
  fetch?: typeof fetch;
}

/** One client for every public route of records-api and upload-service. */
export class RecordbaseClient {
  readonly bases: BasesApi;
  readonly tables: TablesApi;
  readonly fields: FieldsApi;
  readonly views: ViewsApi;
  readonly records: RecordsApi;
  readonly webhooks: WebhooksApi;
  readonly changes: ChangesApi;
  readonly apiKeys: ApiKeysApi;
  readonly sql: SqlApi;
  readonly imports: ImportsApi;
  readonly uploads: UploadsApi;

  constructor(options: RecordbaseClientOptions) {
    const transport = new Transport({
      apiKey: options.apiKey,
      ...(options.retry ? { retry: options.retry } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    const apiUrl = withoutTrailingSlashes(options.apiUrl);
    this.bases = new BasesApi(transport, apiUrl);
    this.tables = new TablesApi(transport, apiUrl);
    this.fields = new FieldsApi(transport, apiUrl);
    this.views = new ViewsApi(transport, apiUrl);
    this.records = new RecordsApi(transport, apiUrl);
    this.webhooks = new WebhooksApi(transport, apiUrl);
    this.changes = new ChangesApi(transport, apiUrl);
    this.apiKeys = new ApiKeysApi(transport, apiUrl);
    this.sql = new SqlApi(transport, apiUrl);
    this.imports = new ImportsApi(transport, apiUrl);
    this.uploads = new UploadsApi(transport, options.uploadUrl);
  }
}
