import type { Principal } from '@recordbase/contracts/api-keys';
import { pathSegmentSchema } from '@recordbase/contracts/common';
import {
  historyQuerySchema,
  restoreTrashRequestSchema,
  trashQuerySchema,
} from '@recordbase/contracts/history';
import {
  aggregateRecordsRequestSchema,
  bulkDeleteRecordsRequestSchema,
  bulkRecordsRequestSchema,
  bulkUpdateRecordsRequestSchema,
  createRecordRequestSchema,
  exportRecordsRequestSchema,
  getRecordQuerySchema,
  listRecordsRequestSchema,
  updateRecordRequestSchema,
  writeQuerySchema,
} from '@recordbase/contracts/records';
import { cancellablePool, type KeyShares, requestShare } from '@recordbase/db';
import { openExport } from '@recordbase/domain/records/export/export-records';
import { recordHistory, restoreRevision, tableHistory } from '@recordbase/domain/records/history';
import type { FileLinks } from '@recordbase/domain/records/presentation';
import * as records from '@recordbase/domain/records/records-service';
import { uploadKeyMatcher } from '@recordbase/domain/records/references';
import type { TableCache } from '@recordbase/domain/records/table-cache';
import { listTrash, restoreFromTrash } from '@recordbase/domain/records/trash';
import type { EventPublisher } from '@recordbase/queues';
import { signFileToken } from '@recordbase/server-kit/file-tokens';
import { RawJson, Reply, type RouteHint } from '@recordbase/server-kit/http';
import type { Logger } from '@recordbase/server-kit/logger';
import { type Request, Router } from 'express';
import type pg from 'pg';
import { z } from 'zod';
import { endpoint } from './endpoint';
import { sendExport } from './record-export';

const tableParams = z.object({ databaseId: pathSegmentSchema, tableId: pathSegmentSchema });
const recordParams = tableParams.extend({ recordId: z.string().min(1).max(255) });
const revisionParams = recordParams.extend({ revisionId: pathSegmentSchema });

const address = (params: { databaseId: string; tableId: string }) => ({
  databaseId: params.databaseId,
  tableRef: params.tableId,
});

const read = { scope: 'records:read' } as const;
const write = { scope: 'records:write' } as const;

/**
 * Body limits: what the contract's largest valid request needs. A filter is bounded in conditions
 * and operand characters; a write carries up to 100 records of long texts.
 */
const LIST_BODY_LIMIT = '1mb';

/**
 * A GET on a table's records lists nothing: listing is POST …/records/list, whose filters, sorts
 * and pages travel in a JSON body. `mount` is where the records routes are mounted (app.ts).
 */
export function recordListingHint(mount: string): RouteHint {
  // Compared by segments, not by a pattern: bases/{id}/tables/{table}/records under the mount.
  const isRecordsCollection = (path: string) => {
    if (!path.startsWith(`${mount}/`)) return false;
    const segments = path.slice(mount.length + 1).split('/');
    if (segments.at(-1) === '') segments.pop();
    return (
      segments.length === 5 &&
      segments[0] === 'bases' &&
      segments[2] === 'tables' &&
      segments[4] === 'records' &&
      segments.every((segment) => segment !== '')
    );
  };
  return ({ method, path }) =>
    (method === 'GET' || method === 'HEAD') && isRecordsCollection(path)
      ? `to list records, use POST ${path.replace(/\/$/, '')}/list with a JSON body for filters, sorts and pages ({} lists the first page)`
      : undefined;
}

/** Records: listing, bulk create and upsert, single records, bulk delete. */
export interface RecordRoutesOptions {
  /** The largest body of a record write. */
  writeBodyLimit: string;
  fileTokenSecret: string;
  fileLinkTtlSeconds: number;
  /** UPLOAD_PUBLIC_URL: upload-service's address, whose `/files/` urls are uploaded files. */
  uploadPublicUrl?: string | undefined;
  /** Where the events of committed writes are published. */
  events: EventPublisher;
  /** Table metadata kept between requests. */
  tables?: TableCache;
  /** Tables with at least this many records get indexes on what their listings filter and sort. */
  readIndexMinRows?: number;
  /** Each key's share of the pool's connections (DB_CONNECTIONS_PER_KEY); unbounded when absent. */
  keyShares?: KeyShares;
}

/**
 * How a request's record work reaches the database, for /api/v1's records routes and /v0's alike:
 * its statements cancelled if its client goes away, within its key's share of connections, its
 * host naming our upload service's files when UPLOAD_PUBLIC_URL does not.
 */
export function requestRecordsDb(
  pool: pg.Pool,
  logger: Logger,
  options: RecordRoutesOptions,
): (signal: AbortSignal, req: Request, principal: Principal) => records.RecordsDb {
  const sign: FileLinks['sign'] = (fileKey, principal) =>
    signFileToken(options.fileTokenSecret, { fileKey, keyId: principal.keyId }, options.fileLinkTtlSeconds);
  return (signal, req, principal) => ({
    db: cancellablePool(
      pool,
      signal,
      options.keyShares && requestShare(options.keyShares, principal.keyId ?? 'root', signal),
    ),
    background: pool,
    onBackgroundError: (error) => logger.warn({ err: error }, 'building an index in the background failed'),
    fileLinks: { keyOf: uploadKeyMatcher(options.uploadPublicUrl, req.hostname), sign },
    events: options.events,
    ...(options.tables ? { tables: options.tables } : {}),
    ...(options.readIndexMinRows !== undefined ? { readIndexMinRows: options.readIndexMinRows } : {}),
  });
}

export function recordRoutes(pool: pg.Pool, logger: Logger, options: RecordRoutesOptions): Router {
  const { writeBodyLimit } = options;
  const router = Router();
  const base = '/bases/:databaseId/tables/:tableId/records';
  const recordsDb = requestRecordsDb(pool, logger, options);

  router.post(
    `${base}/list`,
    endpoint(
      { access: read, params: tableParams, body: listRecordsRequestSchema, bodyLimit: LIST_BODY_LIMIT },
      async ({ params, body, principal, signal, req }) => {
        const listed = await records.list(
          recordsDb(signal, req, principal),
          principal,
          address(params),
          body,
        );
        return new RawJson(
          `{"records":${listed.recordsJson},"total":${listed.total},"hasMore":${listed.hasMore},"nextCursor":${JSON.stringify(listed.nextCursor)}}`,
        );
      },
    ),
  );
  router.post(
    `${base}/export`,
    endpoint(
      { access: read, params: tableParams, body: exportRecordsRequestSchema, bodyLimit: LIST_BODY_LIMIT },
      async ({ params, body, principal, signal, req, res }) => {
        // Refusals (the body, the view, the query) come before the answer starts, as JSON errors.
        const opened = await openExport(recordsDb(signal, req, principal), principal, address(params), body);
        await sendExport(res, opened, logger);
      },
    ),
  );
  router.post(
    `${base}/aggregate`,
    endpoint(
      { access: read, params: tableParams, body: aggregateRecordsRequestSchema },
      async ({ params, body, principal, signal, req }) =>
        new RawJson(
          await records.aggregate(recordsDb(signal, req, principal), principal, address(params), body),
        ),
    ),
  );
  router.post(
    `${base}/bulk`,
    endpoint(
      { access: write, params: tableParams, body: bulkRecordsRequestSchema, bodyLimit: writeBodyLimit },
      async ({ params, body, principal, signal, req }) => {
        const result = await records.bulkWrite(
          recordsDb(signal, req, principal),
          principal,
          address(params),
          body,
        );
        return new Reply(
          result.created ? 201 : 200,
          new RawJson(
            `{"success":true,"records":${result.recordsJson},"createdRecordIds":${JSON.stringify(result.createdIds)},"updatedRecordIds":${JSON.stringify(result.updatedIds)}}`,
          ),
        );
      },
    ),
  );
  router.patch(
    `${base}/bulk`,
    endpoint(
      { access: write, params: tableParams, body: bulkUpdateRecordsRequestSchema, bodyLimit: writeBodyLimit },
      async ({ params, body, principal, signal, req }) => {
        const result = await records.updateMany(
          recordsDb(signal, req, principal),
          principal,
          address(params),
          body,
        );
        return new RawJson(
          `{"success":true,"records":${result.recordsJson},"createdRecordIds":[],"updatedRecordIds":${JSON.stringify(result.updatedIds)}}`,
        );
      },
    ),
  );
  router.post(
    `${base}/bulk-delete`,
    endpoint(
      { access: write, params: tableParams, body: bulkDeleteRecordsRequestSchema },
      async ({ params, body, principal, signal, req }) => ({
        success: true,
        deletedIds: await records.deleteMany(
          recordsDb(signal, req, principal),
          principal,
          address(params),
          body,
        ),
      }),
    ),
  );
  router.post(
    base,
    endpoint(
      {
        access: write,
        params: tableParams,
        body: createRecordRequestSchema,
        bodyLimit: writeBodyLimit,
        status: 201,
      },
      async ({ params, body, principal, signal, req }) =>
        new RawJson(
          await records.createOne(
            recordsDb(signal, req, principal),
            principal,
            address(params),
            body.record,
            {
              suppressWebhooks: body.suppressWebhooks === true,
              typecast: body.typecast === true,
            },
          ),
        ),
    ),
  );
  router.get(
    `${base}/:recordId/history`,
    endpoint(
      { access: read, params: recordParams, query: historyQuerySchema },
      ({ params, query, principal, signal, req }) =>
        recordHistory(recordsDb(signal, req, principal), principal, address(params), params.recordId, query),
    ),
  );
  router.post(
    `${base}/:recordId/history/:revisionId/restore`,
    endpoint(
      { access: write, params: revisionParams },
      async ({ params, principal, signal, req }) =>
        new RawJson(
          await restoreRevision(
            recordsDb(signal, req, principal),
            principal,
            address(params),
            params.recordId,
            params.revisionId,
          ),
        ),
    ),
  );
  router.get(
    '/bases/:databaseId/tables/:tableId/history',
    endpoint(
      { access: read, params: tableParams, query: historyQuerySchema },
      ({ params, query, principal, signal, req }) =>
        tableHistory(recordsDb(signal, req, principal), principal, address(params), query),
    ),
  );
  router.get(
    '/bases/:databaseId/tables/:tableId/trash',
    endpoint(
      { access: read, params: tableParams, query: trashQuerySchema },
      ({ params, query, principal, signal, req }) =>
        listTrash(recordsDb(signal, req, principal), principal, address(params), query),
    ),
  );
  router.post(
    '/bases/:databaseId/tables/:tableId/trash/restore',
    endpoint(
      { access: write, params: tableParams, body: restoreTrashRequestSchema },
      async ({ params, body, principal, signal, req }) =>
        new RawJson(
          `{"records":${await restoreFromTrash(recordsDb(signal, req, principal), principal, address(params), body)}}`,
        ),
    ),
  );
  router.get(
    `${base}/:recordId`,
    endpoint(
      { access: read, params: recordParams, query: getRecordQuerySchema },
      async ({ params, query, principal, signal, req }) =>
        new RawJson(
          await records.getOne(
            recordsDb(signal, req, principal),
            principal,
            address(params),
            params.recordId,
            query.fields,
            query.expand,
          ),
        ),
    ),
  );
  router.patch(
    `${base}/:recordId`,
    endpoint(
      { access: write, params: recordParams, body: updateRecordRequestSchema, bodyLimit: writeBodyLimit },
      async ({ params, body, principal, signal, req }) =>
        new RawJson(
          await records.updateOne(
            recordsDb(signal, req, principal),
            principal,
            address(params),
            params.recordId,
            body.record,
            { suppressWebhooks: body.suppressWebhooks === true, typecast: body.typecast === true },
          ),
        ),
    ),
  );
  router.delete(
    `${base}/:recordId`,
    endpoint(
      { access: write, params: recordParams, query: writeQuerySchema },
      async ({ params, query, principal, signal, req }) => {
        await records.deleteOne(
          recordsDb(signal, req, principal),
          principal,
          address(params),
          params.recordId,
          {
            suppressWebhooks: query.suppressWebhooks === true,
          },
        );
        return { success: true, message: 'Record deleted' };
      },
    ),
  );
  return router;
}
