import { createApiKeyRequestSchema } from '@recordbase/contracts/api-keys';
import type { successMessageSchema } from '@recordbase/contracts/errors';
import { createFieldRequestSchema, updateFieldRequestSchema } from '@recordbase/contracts/fields';
import {
  createDatabaseRequestSchema,
  createTableRequestSchema,
  updateDatabaseRequestSchema,
  updateTableRequestSchema,
} from '@recordbase/contracts/schema';
import type { PrismaClient } from '@recordbase/db';
import { principalOf } from '@recordbase/server-kit/auth';
import { endpoint } from '@recordbase/server-kit/http';
import { Router } from 'express';
import { z } from 'zod';
import { createApiKey, listApiKeys, revokeApiKey } from '../domain/api-keys';
import {
  createDatabase,
  deleteDatabase,
  getDatabase,
  listDatabases,
  updateDatabase,
} from '../domain/databases';
import { createField, deleteField, getField, updateField } from '../domain/fields';
import { createTable, deleteTable, getTable, listTables, updateTable } from '../domain/tables';

const segment = z.string().min(1).max(255);
const baseParams = z.object({ databaseId: segment });
const tableParams = baseParams.extend({ tableId: segment });
const fieldParams = tableParams.extend({ fieldId: segment });
const apiKeyParams = z.object({ apiKeyId: segment });

const deleted = (message: string): z.infer<typeof successMessageSchema> => ({ success: true, message });

/** API keys, databases, tables and fields. Handlers only parse, call the domain, and answer. */
export function schemaRoutes(prisma: PrismaClient): Router {
  const router = Router();

  router.post(
    '/api-keys',
    endpoint({ body: createApiKeyRequestSchema, status: 201 }, ({ body, res }) =>
      createApiKey(prisma, principalOf(res), body),
    ),
  );
  router.get(
    '/api-keys',
    endpoint({}, async ({ res }) => ({ apiKeys: await listApiKeys(prisma, principalOf(res)) })),
  );
  router.delete(
    '/api-keys/:apiKeyId',
    endpoint({ params: apiKeyParams }, async ({ params, res }) => {
      await revokeApiKey(prisma, principalOf(res), params.apiKeyId);
      return deleted('API key revoked');
    }),
  );

  router.post(
    '/bases',
    endpoint({ body: createDatabaseRequestSchema, status: 201 }, ({ body, res }) =>
      createDatabase(prisma, principalOf(res), body),
    ),
  );
  router.get(
    '/bases',
    endpoint({}, async ({ res }) => ({ bases: await listDatabases(prisma, principalOf(res)) })),
  );
  router.get(
    '/bases/:databaseId',
    endpoint({ params: baseParams }, ({ params, res }) =>
      getDatabase(prisma, principalOf(res), params.databaseId),
    ),
  );
  router.patch(
    '/bases/:databaseId',
    endpoint({ params: baseParams, body: updateDatabaseRequestSchema }, ({ params, body, res }) =>
      updateDatabase(prisma, principalOf(res), params.databaseId, body),
    ),
  );
  router.delete(
    '/bases/:databaseId',
    endpoint({ params: baseParams }, async ({ params, res }) => {
      await deleteDatabase(prisma, principalOf(res), params.databaseId);
      return deleted('Database deleted');
    }),
  );

  router.post(
    '/bases/:databaseId/tables',
    endpoint({ params: baseParams, body: createTableRequestSchema, status: 201 }, ({ params, body, res }) =>
      createTable(prisma, principalOf(res), params.databaseId, body),
    ),
  );
  router.get(
    '/bases/:databaseId/tables',
    endpoint({ params: baseParams }, async ({ params, res }) => ({
      tables: await listTables(prisma, principalOf(res), params.databaseId),
    })),
  );
  router.get(
    '/bases/:databaseId/tables/:tableId',
    endpoint({ params: tableParams }, ({ params, res }) =>
      getTable(prisma, principalOf(res), params.databaseId, params.tableId),
    ),
  );
  router.patch(
    '/bases/:databaseId/tables/:tableId',
    endpoint({ params: tableParams, body: updateTableRequestSchema }, ({ params, body, res }) =>
      updateTable(prisma, principalOf(res), params.databaseId, params.tableId, body),
    ),
  );
  router.delete(
    '/bases/:databaseId/tables/:tableId',
    endpoint({ params: tableParams }, async ({ params, res }) => {
      await deleteTable(prisma, principalOf(res), params.databaseId, params.tableId);
      return deleted('Table deleted');
    }),
  );

  router.post(
    '/bases/:databaseId/tables/:tableId/fields',
    endpoint({ params: tableParams, body: createFieldRequestSchema, status: 201 }, ({ params, body, res }) =>
      createField(prisma, principalOf(res), params.databaseId, params.tableId, body),
    ),
  );
  router.get(
    '/bases/:databaseId/tables/:tableId/fields/:fieldId',
    endpoint({ params: fieldParams }, ({ params, res }) =>
      getField(prisma, principalOf(res), params.databaseId, params.tableId, params.fieldId),
    ),
  );
  router.patch(
    '/bases/:databaseId/tables/:tableId/fields/:fieldId',
    endpoint({ params: fieldParams, body: updateFieldRequestSchema }, ({ params, body, res }) =>
      updateField(prisma, principalOf(res), params.databaseId, params.tableId, params.fieldId, body),
    ),
  );
  router.delete(
    '/bases/:databaseId/tables/:tableId/fields/:fieldId',
    endpoint({ params: fieldParams }, async ({ params, res }) => {
      await deleteField(prisma, principalOf(res), params.databaseId, params.tableId, params.fieldId);
      return deleted('Field deleted');
    }),
  );

  return router;
}
