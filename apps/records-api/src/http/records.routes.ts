import {
  bulkDeleteRecordsRequestSchema,
  bulkRecordsRequestSchema,
  createRecordRequestSchema,
  listRecordsRequestSchema,
  updateRecordRequestSchema,
} from '@recordbase/contracts/records';
import { principalOf } from '@recordbase/server-kit/auth';
import { endpoint, RawJson, Reply } from '@recordbase/server-kit/http';
import type { Logger } from '@recordbase/server-kit/logger';
import { Router } from 'express';
import type pg from 'pg';
import { z } from 'zod';
import * as records from '../domain/records/records-service';

const segment = z.string().min(1).max(255);
const tableParams = z.object({ databaseId: segment, tableId: segment });
const recordParams = tableParams.extend({ recordId: z.string().min(1).max(255) });

const address = (params: { databaseId: string; tableId: string }) => ({
  databaseId: params.databaseId,
  tableRef: params.tableId,
});

/** Records: listing, bulk create and upsert, single records, bulk delete. */
export function recordRoutes(pool: pg.Pool, logger: Logger): Router {
  const router = Router();
  const base = '/bases/:databaseId/tables/:tableId/records';

  router.post(
    `${base}/list`,
    endpoint({ params: tableParams, body: listRecordsRequestSchema }, async ({ params, body, res }) => {
      const listed = await records.list(pool, principalOf(res), address(params), body);
      return new RawJson(
        `{"records":${listed.recordsJson},"total":${listed.total},"hasMore":${listed.hasMore}}`,
      );
    }),
  );
  router.post(
    `${base}/bulk`,
    endpoint({ params: tableParams, body: bulkRecordsRequestSchema }, async ({ params, body, res }) => {
      const result = await records.bulkWrite(pool, principalOf(res), address(params), body, (error) =>
        logger.warn({ err: error }, 'building a matchOn index failed'),
      );
      return new Reply(
        result.created ? 201 : 200,
        new RawJson(`{"success":true,"records":${result.recordsJson}}`),
      );
    }),
  );
  router.post(
    `${base}/bulk-delete`,
    endpoint(
      { params: tableParams, body: bulkDeleteRecordsRequestSchema },
      async ({ params, body, res }) => ({
        success: true,
        deletedIds: await records.deleteMany(pool, principalOf(res), address(params), body),
      }),
    ),
  );
  router.post(
    base,
    endpoint(
      { params: tableParams, body: createRecordRequestSchema, status: 201 },
      async ({ params, body, res }) =>
        new RawJson(await records.createOne(pool, principalOf(res), address(params), body.record)),
    ),
  );
  router.get(
    `${base}/:recordId`,
    endpoint(
      { params: recordParams },
      async ({ params, res }) =>
        new RawJson(await records.getOne(pool, principalOf(res), address(params), params.recordId)),
    ),
  );
  router.patch(
    `${base}/:recordId`,
    endpoint(
      { params: recordParams, body: updateRecordRequestSchema },
      async ({ params, body, res }) =>
        new RawJson(
          await records.updateOne(pool, principalOf(res), address(params), params.recordId, body.record),
        ),
    ),
  );
  router.delete(
    `${base}/:recordId`,
    endpoint({ params: recordParams }, async ({ params, res }) => {
      await records.deleteOne(pool, principalOf(res), address(params), params.recordId);
      return { success: true, message: 'Record deleted' };
    }),
  );
  return router;
}
