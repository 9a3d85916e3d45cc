import { createApiKeyRequestSchema } from '@recordbase/contracts/api-keys';
import { pathSegmentSchema } from '@recordbase/contracts/common';
import type { successMessageSchema } from '@recordbase/contracts/errors';
import { createFieldRequestSchema, updateFieldRequestSchema } from '@recordbase/contracts/fields';
import { restoreSchemaTrashRequestSchema } from '@recordbase/contracts/history';
import {
  createDatabaseRequestSchema,
  createTableRequestSchema,
  updateDatabaseRequestSchema,
  updateTableRequestSchema,
} from '@recordbase/contracts/schema';
import type { PrismaClient } from '@recordbase/db';
import { createApiKey, listApiKeys, revokeApiKey } from '@recordbase/domain/api-keys';
import {
  createDatabase,
  deleteDatabase,
  getDatabase,
  listDatabases,
  updateDatabase,
} from '@recordbase/domain/databases';
import { createField, deleteField, getField, updateField } from '@recordbase/domain/fields';
import { listSchemaTrash, restoreFromSchemaTrash } from '@recordbase/domain/schema-trash';
import type { SchemaDb } from '@recordbase/domain/schema-tx';
import { createTable, deleteTable, getTable, listTables, updateTable } from '@recordbase/domain/tables';
import type { EventPublisher } from '@recordbase/queues';
import { Router } from 'express';
import { z } from 'zod';
import { endpoint } from './endpoint';

const baseParams = z.object({ databaseId: pathSegmentSchema });
const tableParams = baseParams.extend({ tableId: pathSegmentSchema });
const fieldParams = tableParams.extend({ fieldId: pathSegmentSchema });
const apiKeyParams = z.object({ apiKeyId: z.uuid({ error: 'must be an API key id (a UUID)' }) });

const rootOnly = { rootOnly: true } as const;
const schemaRead = { scope: 'schema:read' } as const;
const schemaWrite = { scope: 'schema:write' } as const;
/** A whole database or table in one request: up to 500 fields and their select options. */
const SCHEMA_BODY_LIMIT = '4mb';
const FIELD_BODY_LIMIT = '1mb';

const deleted = (message: string): z.infer<typeof successMessageSchema> => ({ success: true, message });

/**
 * API keys, databases, tables and fields. Handlers only parse, call the domain, and answer.
 * `afterChange` and `afterKeyRevoked` drop what this process keeps of the schema and of keys.
 */
export function schemaRoutes(
  prisma: PrismaClient,
  events: EventPublisher,
  afterChange?: () => void,
  afterKeyRevoked?: () => void,
): Router {
  const router = Router();
  const schema: SchemaDb = { prisma, events, ...(afterChange ? { afterChange } : {}) };

  router.post(
    '/api-keys',
    endpoint({ access: rootOnly, body: createApiKeyRequestSchema, status: 201 }, ({ body }) =>
      createApiKey(prisma, body),
    ),
  );
  router.get(
    '/api-keys',
    endpoint({ access: rootOnly }, async () => ({ apiKeys: await listApiKeys(prisma) })),
  );
  router.delete(
    '/api-keys/:apiKeyId',
    endpoint({ access: rootOnly, params: apiKeyParams }, async ({ params }) => {
      await revokeApiKey(prisma, params.apiKeyId, afterKeyRevoked);
      return deleted('API key revoked');
    }),
  );

  router.post(
    '/bases',
    endpoint(
      { access: schemaWrite, body: createDatabaseRequestSchema, bodyLimit: SCHEMA_BODY_LIMIT, status: 201 },
      ({ body, principal }) => createDatabase(schema, principal, body),
    ),
  );
  router.get(
    '/bases',
    endpoint({ access: schemaRead }, async ({ principal }) => ({
      bases: await listDatabases(prisma, principal),
    })),
  );
  router.get(
    '/bases/:databaseId',
    endpoint({ access: schemaRead, params: baseParams }, ({ params, principal }) =>
      getDatabase(prisma, principal, params.databaseId),
    ),
  );
  router.patch(
    '/bases/:databaseId',
    endpoint(
      { access: schemaWrite, params: baseParams, body: updateDatabaseRequestSchema },
      ({ params, body, principal }) => updateDatabase(prisma, principal, params.databaseId, body),
    ),
  );
  router.delete(
    '/bases/:databaseId',
    endpoint({ access: schemaWrite, params: baseParams }, async ({ params, principal }) => {
      await deleteDatabase(schema, principal, params.databaseId);
      return deleted('Database deleted');
    }),
  );

  router.get(
    '/bases/:databaseId/trash',
    endpoint({ access: schemaRead, params: baseParams }, ({ params, principal }) =>
      listSchemaTrash(prisma, principal, params.databaseId),
    ),
  );
  router.post(
    '/bases/:databaseId/trash/restore',
    endpoint(
      { access: schemaWrite, params: baseParams, body: restoreSchemaTrashRequestSchema },
      ({ params, body, principal }) => restoreFromSchemaTrash(schema, principal, params.databaseId, body),
    ),
  );

  router.post(
    '/bases/:databaseId/tables',
    endpoint(
      {
        access: schemaWrite,
        params: baseParams,
        body: createTableRequestSchema,
        bodyLimit: SCHEMA_BODY_LIMIT,
        status: 201,
      },
      ({ params, body, principal }) => createTable(schema, principal, params.databaseId, body),
    ),
  );
  router.get(
    '/bases/:databaseId/tables',
    endpoint({ access: schemaRead, params: baseParams }, async ({ params, principal }) => ({
      tables: await listTables(prisma, principal, params.databaseId),
    })),
  );
  router.get(
    '/bases/:databaseId/tables/:tableId',
    endpoint({ access: schemaRead, params: tableParams }, ({ params, principal }) =>
      getTable(prisma, principal, params.databaseId, params.tableId),
    ),
  );
  router.patch(
    '/bases/:databaseId/tables/:tableId',
    endpoint(
      { access: schemaWrite, params: tableParams, body: updateTableRequestSchema },
      ({ params, body, principal }) =>
        updateTable(schema, principal, params.databaseId, params.tableId, body),
    ),
  );
  router.delete(
    '/bases/:databaseId/tables/:tableId',
    endpoint({ access: schemaWrite, params: tableParams }, async ({ params, principal }) => {
      await deleteTable(schema, principal, params.databaseId, params.tableId);
      return deleted('Table deleted');
    }),
  );

  router.post(
    '/bases/:databaseId/tables/:tableId/fields',
    endpoint(
      {
        access: schemaWrite,
        params: tableParams,
        body: createFieldRequestSchema,
        bodyLimit: FIELD_BODY_LIMIT,
        status: 201,
      },
      ({ params, body, principal }) =>
        createField(schema, principal, params.databaseId, params.tableId, body),
    ),
  );
  router.get(
    '/bases/:databaseId/tables/:tableId/fields/:fieldId',
    endpoint({ access: schemaRead, params: fieldParams }, ({ params, principal }) =>
      getField(prisma, principal, params.databaseId, params.tableId, params.fieldId),
    ),
  );
  router.patch(
    '/bases/:databaseId/tables/:tableId/fields/:fieldId',
    endpoint(
      {
        access: schemaWrite,
        params: fieldParams,
        body: updateFieldRequestSchema,
        bodyLimit: FIELD_BODY_LIMIT,
      },
      ({ params, body, principal }) =>
        updateField(schema, principal, params.databaseId, params.tableId, params.fieldId, body),
    ),
  );
  router.delete(
    '/bases/:databaseId/tables/:tableId/fields/:fieldId',
    endpoint({ access: schemaWrite, params: fieldParams }, async ({ params, principal }) => {
      await deleteField(schema, principal, params.databaseId, params.tableId, params.fieldId);
      return deleted('Field deleted');
    }),
  );

  return router;
}
