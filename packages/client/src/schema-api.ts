import { successMessageSchema } from '@recordbase/contracts/errors';
import { fieldSchema } from '@recordbase/contracts/fields';
import { restoredSchemaSchema, schemaTrashSchema } from '@recordbase/contracts/history';
import {
  databaseListSchema,
  databaseSchema,
  tableListSchema,
  tableSchema,
} from '@recordbase/contracts/schema';
import { joinUrl } from './paths';
import type {
  CreateDatabaseInput,
  CreateFieldInput,
  CreateTableInput,
  RestoreSchemaTrashInput,
  UpdateDatabaseInput,
  UpdateFieldInput,
  UpdateTableInput,
} from './requests';
import type { CallOptions, Transport } from './transport';

/** Databases ("bases"): `/bases`. */
export class BasesApi {
  constructor(
    private readonly transport: Transport,
    private readonly apiUrl: string,
  ) {}

  create(body: CreateDatabaseInput, options: CallOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: joinUrl(this.apiUrl, 'bases'),
      json: body,
      schema: databaseSchema,
      ...options,
    });
  }
  async list(options: CallOptions = {}) {
    const answer = await this.transport.request({
      method: 'GET',
      url: joinUrl(this.apiUrl, 'bases'),
      schema: databaseListSchema,
      idempotent: true,
      ...options,
    });
    return answer.bases;
  }
  get(baseId: string, options: CallOptions = {}) {
    return this.transport.request({
      method: 'GET',
      url: joinUrl(this.apiUrl, 'bases', baseId),
      schema: databaseSchema,
      idempotent: true,
      ...options,
    });
  }
  update(baseId: string, body: UpdateDatabaseInput, options: CallOptions = {}) {
    return this.transport.request({
      method: 'PATCH',
      url: joinUrl(this.apiUrl, 'bases', baseId),
      json: body,
      schema: databaseSchema,
      ...options,
    });
  }
  delete(baseId: string, options: CallOptions = {}) {
    return this.transport.request({
      method: 'DELETE',
      url: joinUrl(this.apiUrl, 'bases', baseId),
      schema: successMessageSchema,
      ...options,
    });
  }

  /**
   * The database's trash, most recently deleted first: `{tables, fields}`, each deleted table as it
   * was with its fields and each field deleted on its own with its `tableId`, both with `deletedAt`
   * and `deletedBy`; the newest 100 tables and 1,000 fields.
   */
  trash(baseId: string, options: CallOptions = {}) {
    return this.transport.request({
      method: 'GET',
      url: joinUrl(this.apiUrl, 'bases', baseId, 'trash'),
      schema: schemaTrashSchema,
      idempotent: true,
      ...options,
    });
  }

  /**
   * Brings deleted tables (with their records, links and the link fields deleted with them) and
   * fields (with their values) back as they were: up to 100 of each, at least one in all. All or
   * nothing: an id not in the trash is 404, what stands in the way (a name taken since, a table
   * still in the trash) is 400, and nothing is restored. Answers `{tables, fields}` as they are now.
   */
  restoreFromTrash(baseId: string, body: RestoreSchemaTrashInput, options: CallOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: joinUrl(this.apiUrl, 'bases', baseId, 'trash', 'restore'),
      json: body,
      schema: restoredSchemaSchema,
      ...options,
    });
  }
}

/** Tables of a database, named by id or name. */
export class TablesApi {
  constructor(
    private readonly transport: Transport,
    private readonly apiUrl: string,
  ) {}

  create(baseId: string, body: CreateTableInput, options: CallOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: joinUrl(this.apiUrl, 'bases', baseId, 'tables'),
      json: body,
      schema: tableSchema,
      ...options,
    });
  }
  async list(baseId: string, options: CallOptions = {}) {
    const answer = await this.transport.request({
      method: 'GET',
      url: joinUrl(this.apiUrl, 'bases', baseId, 'tables'),
      schema: tableListSchema,
      idempotent: true,
      ...options,
    });
    return answer.tables;
  }
  get(baseId: string, tableId: string, options: CallOptions = {}) {
    return this.transport.request({
      method: 'GET',
      url: joinUrl(this.apiUrl, 'bases', baseId, 'tables', tableId),
      schema: tableSchema,
      idempotent: true,
      ...options,
    });
  }
  update(baseId: string, tableId: string, body: UpdateTableInput, options: CallOptions = {}) {
    return this.transport.request({
      method: 'PATCH',
      url: joinUrl(this.apiUrl, 'bases', baseId, 'tables', tableId),
      json: body,
      schema: tableSchema,
      ...options,
    });
  }
  delete(baseId: string, tableId: string, options: CallOptions = {}) {
    return this.transport.request({
      method: 'DELETE',
      url: joinUrl(this.apiUrl, 'bases', baseId, 'tables', tableId),
      schema: successMessageSchema,
      ...options,
    });
  }
}

/** Fields of a table, named by id or name. */
export class FieldsApi {
  constructor(
    private readonly transport: Transport,
    private readonly apiUrl: string,
  ) {}

  #url(baseId: string, tableId: string, ...rest: string[]) {
    return joinUrl(this.apiUrl, 'bases', baseId, 'tables', tableId, 'fields', ...rest);
  }
  create(baseId: string, tableId: string, body: CreateFieldInput, options: CallOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: this.#url(baseId, tableId),
      json: body,
      schema: fieldSchema,
      ...options,
    });
  }
  get(baseId: string, tableId: string, fieldId: string, options: CallOptions = {}) {
    return this.transport.request({
      method: 'GET',
      url: this.#url(baseId, tableId, fieldId),
      schema: fieldSchema,
      idempotent: true,
      ...options,
    });
  }
  update(
    baseId: string,
    tableId: string,
    fieldId: string,
    body: UpdateFieldInput,
    options: CallOptions = {},
  ) {
    return this.transport.request({
      method: 'PATCH',
      url: this.#url(baseId, tableId, fieldId),
      json: body,
      schema: fieldSchema,
      ...options,
    });
  }
  delete(baseId: string, tableId: string, fieldId: string, options: CallOptions = {}) {
    return this.transport.request({
      method: 'DELETE',
      url: this.#url(baseId, tableId, fieldId),
      schema: successMessageSchema,
      ...options,
    });
  }
}
