import { successMessageSchema } from '@recordbase/contracts/errors';
import { historyPageSchema, trashedRecordSchema, trashPageSchema } from '@recordbase/contracts/history';
import {
  aggregateRecordsResponseSchema,
  bulkDeleteRecordsResponseSchema,
  bulkRecordsResponseSchema,
  type ListRecordsResponse,
  listRecordsResponseSchema,
  recordSchema,
  type TableRecord,
} from '@recordbase/contracts/records';
import { z } from 'zod';
import { joinUrl, withQuery } from './paths';
import type { AggregateRecordsInput, ExportRecordsInput, ListRecordsInput, RecordFields } from './requests';
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

/** A page of a history: `limit` 1 to 100 revisions (20 by default), after the `cursor` given. */
export interface HistoryOptions extends CallOptions {
  limit?: number;
  /** The `nextCursor` of the previous page of the same history, unchanged. */
  cursor?: string;
}

/** A page of a table's trash: `limit` 1 to 100 deleted records (20 by default), after the `cursor` given. */
export type TrashOptions = HistoryOptions;

/** The trash's page, each deleted record as the API rendered it when it was deleted. */
const trashPageResponseSchema = trashPageSchema.extend({
  records: z.array(trashedRecordSchema.extend({ record: recordSchema })),
});
export type TrashPage = z.infer<typeof trashPageResponseSchema>;
export type TrashedRecord = TrashPage['records'][number];

/** A restore's answer: the records brought back, in the order asked. */
const restoredRecordsSchema = z.object({ records: z.array(recordSchema) });
export type RestoredRecords = z.infer<typeof restoredRecordsSchema>;

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

  #tableUrl(baseId: string, tableId: string, ...rest: string[]) {
    return joinUrl(this.apiUrl, 'bases', baseId, 'tables', tableId, ...rest);
  }

  #url(baseId: string, tableId: string, ...rest: string[]) {
    return this.#tableUrl(baseId, tableId, 'records', ...rest);
  }

  #history(url: string, options: HistoryOptions) {
    return this.transport.request({
      method: 'GET',
      url: withQuery(url, { limit: options.limit, cursor: options.cursor }),
      schema: historyPageSchema,
      idempotent: true,
      signal: options.signal,
    });
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

  /**
   * One page of a record's revisions, newest first: `{revisions, nextCursor?}`, `nextCursor` absent
   * on the last page. A deleted record's history is still read; one that never existed is 404.
   */
  history(baseId: string, tableId: string, recordId: string, options: HistoryOptions = {}) {
    return this.#history(this.#url(baseId, tableId, recordId, 'history'), options);
  }

  /**
   * Writes the record's fields back to their values after revision `revisionId` of its history,
   * as a `restored` revision of its own; answers the record.
   */
  restoreRevision(
    baseId: string,
    tableId: string,
    recordId: string,
    revisionId: string,
    options: CallOptions = {},
  ) {
    return this.transport.request({
      method: 'POST',
      url: this.#url(baseId, tableId, recordId, 'history', revisionId, 'restore'),
      schema: recordSchema,
      signal: options.signal,
    });
  }

  /** One page of the revisions of every record of the table, newest first, as `history`. */
  tableHistory(baseId: string, tableId: string, options: HistoryOptions = {}) {
    return this.#history(this.#tableUrl(baseId, tableId, 'history'), options);
  }

  /**
   * One page of the table's trash, most recently deleted first: `{records: [{record, deletedAt,
   * deletedBy}], nextCursor?}`, `nextCursor` absent on the last page.
   */
  trash(baseId: string, tableId: string, options: TrashOptions = {}) {
    return this.transport.request({
      method: 'GET',
      url: withQuery(this.#tableUrl(baseId, tableId, 'trash'), {
        limit: options.limit,
        cursor: options.cursor,
      }),
      schema: trashPageResponseSchema,
      idempotent: true,
      signal: options.signal,
    });
  }

  /**
   * Brings 1 to 100 deleted records back exactly as they were (ids, createdAt, values, links to
   * and from records that still exist), all or nothing: an id not in the trash is 404 and nothing
   * is restored. Answers `{records}`, in the order of `ids`.
   */
  restoreFromTrash(baseId: string, tableId: string, ids: string[], options: CallOptions = {}) {
    return this.transport.request({
      method: 'POST',
      url: this.#tableUrl(baseId, tableId, 'trash', 'restore'),
      json: { ids },
      schema: restoredRecordsSchema,
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

  /**
   * Every record a list of the same `filter`, `sort`, `fields`, `search` and `view` matches, in
   * its order, as one file in `format` (csv, xlsx, ndjson): the response, its body unread, for
   * streaming (`response.body` is a web ReadableStream). A refused body throws before any byte; a
   * body that ends in a network error was cut short and is incomplete.
   */
  export(
    baseId: string,
    tableId: string,
    request: ExportRecordsInput,
    options: CallOptions = {},
  ): Promise<Response> {
    return this.transport.send({
      method: 'POST',
      url: this.#url(baseId, tableId, 'export'),
      json: request,
      idempotent: true,
      ...options,
    });
  }
}
