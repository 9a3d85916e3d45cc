import { pathSegmentSchema } from '@recordbase/contracts/common';
import { startImportRequestSchema } from '@recordbase/contracts/imports';
import {
  cancelImport,
  getImport,
  type ImportsDeps,
  listImports,
  startImport,
} from '@recordbase/domain/imports';
import { Router } from 'express';
import { z } from 'zod';
import { endpoint } from './endpoint';

const baseParams = z.object({ databaseId: pathSegmentSchema });
const importParams = baseParams.extend({ importId: z.uuid({ error: 'must be an import id (a UUID)' }) });
const recordsWrite = { scope: 'records:write' } as const;

/** CSV and Excel imports; the work itself happens in the import worker (src/imports). */
export function importRoutes(deps: ImportsDeps): Router {
  const router = Router();
  router.post(
    '/bases/:databaseId/imports',
    endpoint(
      { access: recordsWrite, params: baseParams, body: startImportRequestSchema, status: 202 },
      ({ params, body, principal }) => startImport(deps, principal, params.databaseId, body),
    ),
  );
  router.get(
    '/bases/:databaseId/imports',
    endpoint({ access: recordsWrite, params: baseParams }, ({ params, principal }) =>
      listImports(deps.prisma, principal, params.databaseId),
    ),
  );
  router.get(
    '/bases/:databaseId/imports/:importId',
    endpoint({ access: recordsWrite, params: importParams }, ({ params, principal }) =>
      getImport(deps.prisma, principal, params.databaseId, params.importId),
    ),
  );
  router.delete(
    '/bases/:databaseId/imports/:importId',
    endpoint({ access: recordsWrite, params: importParams }, ({ params, principal }) =>
      cancelImport(deps, principal, params.databaseId, params.importId),
    ),
  );
  return router;
}
