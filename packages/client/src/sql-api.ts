import { sqlQueryResponseSchema, sqlSchemaResponseSchema } from '@recordbase/contracts/sql';
import { joinUrl } from './paths';
import type { SqlQueryInput } from './requests';
import type { CallOptions, Transport } from './transport';

/** Read-only SQL over a database's tables. */
export class SqlApi {
  constructor(
    private readonly transport: Transport,
    private readonly apiUrl: string,
  ) {}

  /** Read-only, so retried after a failed connection like any read. */
  query(baseId: string, body: SqlQueryInput, options: CallOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: joinUrl(this.apiUrl, 'bases', baseId, 'sql'),
      json: body,
      schema: sqlQueryResponseSchema,
      idempotent: true,
      ...options,
    });
  }
  /** Each table's columns, with their field and PostgreSQL type. */
  schema(baseId: string, options: CallOptions = {}) {
    return this.transport.request({
      method: 'GET',
      url: joinUrl(this.apiUrl, 'bases', baseId, 'sql', 'schema'),
      schema: sqlSchemaResponseSchema,
      idempotent: true,
      ...options,
    });
  }
}
