import { pathSegmentSchema } from '@recordbase/contracts/common';
import type { successMessageSchema } from '@recordbase/contracts/errors';
import { createViewRequestSchema, updateViewRequestSchema } from '@recordbase/contracts/views';
import {
  createView,
  deleteView,
  getView,
  listViews,
  updateView,
  type ViewsDb,
} from '@recordbase/domain/views';
import { Router } from 'express';
import { z } from 'zod';
import { endpoint } from './endpoint';

const tableParams = z.object({ databaseId: pathSegmentSchema, tableId: pathSegmentSchema });
const viewParams = tableParams.extend({ viewId: pathSegmentSchema });

const schemaRead = { scope: 'schema:read' } as const;
const schemaWrite = { scope: 'schema:write' } as const;
/** A view is a filter of at most 200 conditions, 50 sorts and 500 fields: well under this. */
const VIEW_BODY_LIMIT = '1mb';

const deleted = (message: string): z.infer<typeof successMessageSchema> => ({ success: true, message });

/** Saved views of a table (domain views.ts): part of the schema, read and changed with its scopes. */
export function viewRoutes(views: ViewsDb): Router {
  const router = Router();
  const base = '/bases/:databaseId/tables/:tableId/views';

  router.post(
    base,
    endpoint(
      {
        access: schemaWrite,
        params: tableParams,
        body: createViewRequestSchema,
        bodyLimit: VIEW_BODY_LIMIT,
        status: 201,
      },
      ({ params, body, principal }) => createView(views, principal, params.databaseId, params.tableId, body),
    ),
  );
  router.get(
    base,
    endpoint({ access: schemaRead, params: tableParams }, async ({ params, principal }) => ({
      views: await listViews(views, principal, params.databaseId, params.tableId),
    })),
  );
  router.get(
    `${base}/:viewId`,
    endpoint({ access: schemaRead, params: viewParams }, ({ params, principal }) =>
      getView(views, principal, params.databaseId, params.tableId, params.viewId),
    ),
  );
  router.patch(
    `${base}/:viewId`,
    endpoint(
      { access: schemaWrite, params: viewParams, body: updateViewRequestSchema, bodyLimit: VIEW_BODY_LIMIT },
      ({ params, body, principal }) =>
        updateView(views, principal, params.databaseId, params.tableId, params.viewId, body),
    ),
  );
  router.delete(
    `${base}/:viewId`,
    endpoint({ access: schemaWrite, params: viewParams }, async ({ params, principal }) => {
      await deleteView(views, principal, params.databaseId, params.tableId, params.viewId);
      return deleted('View deleted');
    }),
  );
  return router;
}
