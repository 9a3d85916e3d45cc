import { successMessageSchema } from '@recordbase/contracts/errors';
import {
  aggregateRecordsResponseSchema,
  bulkDeleteRecordsResponseSchema,
  bulkRecordsResponseSchema,
  type ListRecordsResponse,
  listRecordsResponseSchema,
  recordSchema,
  type TableRecord,
} from '@recordbase/contracts/records';
import { joinUrl, withQuery } from './paths';
import type { AggregateRecordsInput, ListRecordsInput, RecordFields } from './requests';
import type { CallOptions, Transport } from './transport';

/** Options of every record write. */
export interface WriteOptions extends CallOptions {
  /** Write without telling webhooks (a sync tool's own writes). */
  suppressWebhooks?: boolean;
  /** Read values given as text the way an import reads a cell, adding missing select options. */
  typecast?: boolean;
}

export interface ReadOptions extends CallOptions {
  /** Only these fields (names or ids) in `data` and `fields`. */
  fields?: string[];
  /** Link fields whose linked records' primary values come along in `expanded`. */
  expand?: string[];
}

/** A listing to read page after page: no offset or cursor, the iterator moves the cursor. */
export type IterateRecordsInput = Omit<ListRecordsInput, 'offset' | 'cursor'>;

const writeFlags = (options: WriteOptions) => ({
  ...(options.suppressWebhooks === undefined ? {} : { suppressWebhooks: options.suppressWebhooks }),
  ...(options.typecast === undefined ? {} : { typecast: options.typecast }),
});

/** Records of a table; tables and fields are named by id or name. */
export class RecordsApi {
  constructor(
    private readonly transport: Transport,
    private readonly apiUrl: string,
  ) {}

  #url(baseId: string, tableId: string, ...rest: string[]) {
    return joinUrl(this.apiUrl, 'bases', baseId, 'tables', tableId, 'records', ...rest);
  }

  /** One page: `{records, total, hasMore, nextCursor}`. */
  list(baseId: string, tableId: string, request: ListRecordsInput = {}, options: CallOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: this.#url(baseId, tableId, 'list'),
      json: request,
      schema: listRecordsResponseSchema,
      idempotent: true,
      ...options,
    });
  }

  /** Every page of a listing, following `nextCursor` (which neither skips nor repeats a record). */
  async *pages(
    baseId: string,
    tableId: string,
    request: IterateRecordsInput = {},
    options: CallOptions = {},
  ): AsyncGenerator<ListRecordsResponse, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.list(
        baseId,
        tableId,
        cursor === undefined ? request : { ...request, cursor },
        options,
      );
      yield page;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  /** Every matching record, one at a time, a page (`limit`) read whenever the last one is used up. */
  async *iterate(
    baseId: string,
    tableId: string,
    request: IterateRecordsInput = {},
    options: CallOptions = {},
  ): AsyncGenerator<TableRecord, void, undefined> {
    for await (const page of this.pages(baseId, tableId, request, options)) yield* page.records;
  }

  get(baseId: string, tableId: string, recordId: string, options: ReadOptions = {}) {
    const url = withQuery(this.#url(baseId, tableId, recordId), {
      fields: options.fields,
      expand: options.expand,
    });
    return this.transport.request({
      method: 'GET',
      url,
      schema: recordSchema,
      idempotent: true,
      signal: options.signal,
    });
  }

  create(baseId: string, tableId: string, record: RecordFields, options: WriteOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: this.#url(baseId, tableId),
      json: { record, ...writeFlags(options) },
      schema: recordSchema,
      signal: options.signal,
    });
  }

  /** Changes only the fields given. */
  update(
    baseId: string,
    tableId: string,
    recordId: string,
    record: RecordFields,
    options: WriteOptions = {},
  ) {
    return this.transport.request({
      method: 'PATCH',
      url: this.#url(baseId, tableId, recordId),
      json: { record, ...writeFlags(options) },
      schema: recordSchema,
      signal: options.signal,
    });
  }

  delete(baseId: string, tableId: string, recordId: string, options: Omit<WriteOptions, 'typecast'> = {}) {
    const url = withQuery(this.#url(baseId, tableId, recordId), {
      suppressWebhooks: options.suppressWebhooks,
    });
    return this.transport.request({
      method: 'DELETE',
      url,
      schema: successMessageSchema,
      signal: options.signal,
    });
  }

  /** Creates 1 to 100 records, all or nothing. */
  createMany(baseId: string, tableId: string, records: RecordFields[], options: WriteOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: this.#url(baseId, tableId, 'bulk'),
      json: { records, ...writeFlags(options) },
      schema: bulkRecordsResponseSchema,
      signal: options.signal,
    });
  }

  /**
   * Updates the records whose `matchOn` fields (ids) equal a given record's, creates the others;
   * `createdRecordIds` and `updatedRecordIds` say which was which.
   */
  upsert(
    baseId: string,
    tableId: string,
    upsert: { matchOn: string[]; records: RecordFields[] },
    options: WriteOptions = {},
  ) {
    return this.transport.request({
      method: 'POST',
      url: this.#url(baseId, tableId, 'bulk'),
      json: { records: upsert.records, matchOn: upsert.matchOn, ...writeFlags(options) },
      schema: bulkRecordsResponseSchema,
      signal: options.signal,
    });
  }

  /** Changes 1 to 100 records by id, each only in the fields it gives, all or nothing. */
  updateMany(
    baseId: string,
    tableId: string,
    records: { id: string; fields: RecordFields }[],
    options: WriteOptions = {},
  ) {
    return this.transport.request({
      method: 'PATCH',
      url: this.#url(baseId, tableId, 'bulk'),
      json: { records, ...writeFlags(options) },
      schema: bulkRecordsResponseSchema,
      signal: options.signal,
    });
  }

  /** Deletes 1 to 100 records by id, all or nothing. */
  deleteMany(baseId: string, tableId: string, ids: string[], options: Omit<WriteOptions, 'typecast'> = {}) {
    return this.transport.request({
      method: 'POST',
      url: this.#url(baseId, tableId, 'bulk-delete'),
      json: { ids, ...writeFlags(options) },
      schema: bulkDeleteRecordsResponseSchema,
      signal: options.signal,
    });
  }

  aggregate(baseId: string, tableId: string, request: AggregateRecordsInput, options: CallOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: this.#url(baseId, tableId, 'aggregate'),
      json: request,
      schema: aggregateRecordsResponseSchema,
      idempotent: true,
      ...options,
    });
  }
}
