import { pathSegmentSchema } from '@recordbase/contracts/common';
import {
  MAX_SQL_PARAM_LENGTH,
  MAX_SQL_PARAMS,
  MAX_SQL_QUERY_LENGTH,
  sqlQueryRequestSchema,
} from '@recordbase/contracts/sql';
import type { PrismaClient } from '@recordbase/db';
import { runSqlQuery, type SqlQueryContext } from '@recordbase/domain/sql/query';
import { describeSqlSchema } from '@recordbase/domain/sql/schema';
import { Router } from 'express';
import { z } from 'zod';
import { endpoint } from './endpoint';

const baseParams = z.object({ databaseId: pathSegmentSchema });
const sqlRead = { scope: 'sql:read' } as const;
/** The longest query and every parameter at its longest, as JSON with escapes. */
const SQL_BODY_LIMIT = 2 * (MAX_SQL_QUERY_LENGTH + MAX_SQL_PARAMS * MAX_SQL_PARAM_LENGTH) + 64 * 1024;

/** Read-only SQL and what it can see; handlers only parse, call the domain, and answer. */
export function sqlRoutes(prisma: PrismaClient, context: SqlQueryContext): Router {
  const router = Router();
  router.get(
    '/bases/:databaseId/sql/schema',
    endpoint({ access: sqlRead, params: baseParams }, ({ params, principal }) =>
      describeSqlSchema(prisma, principal, params.databaseId),
    ),
  );
  router.post(
    '/bases/:databaseId/sql',
    endpoint(
      { access: sqlRead, params: baseParams, body: sqlQueryRequestSchema, bodyLimit: SQL_BODY_LIMIT },
      ({ params, body, principal, signal }) =>
        runSqlQuery(context, principal, params.databaseId, body, signal),
    ),
  );
  return router;
}
