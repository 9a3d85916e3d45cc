import type { successMessageSchema } from '@recordbase/contracts/errors';
import {
  createWebhookRequestSchema,
  listWebhookDeliveriesQuerySchema,
  updateWebhookRequestSchema,
} from '@recordbase/contracts/webhooks';
import type { PrismaClient } from '@recordbase/db';
import { principalOf } from '@recordbase/server-kit/auth';
import { endpoint } from '@recordbase/server-kit/http';
import { Router } from 'express';
import { z } from 'zod';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  retryWebhookDelivery,
  updateWebhook,
} from '../domain/webhooks';

// Ids stay text here: one that is not an integer cannot exist, so the domain answers it with a 404.
const segment = z.string().min(1).max(255);
const baseParams = z.object({ databaseId: segment });
const webhookParams = baseParams.extend({ webhookId: segment });
const deliveryParams = webhookParams.extend({ deliveryId: segment });

const deleted = (message: string): z.infer<typeof successMessageSchema> => ({ success: true, message });

/** Webhook subscriptions of a database and their delivery log. `secretKey` seals signing secrets. */
export function webhookRoutes(prisma: PrismaClient, secretKey: Buffer): Router {
  const router = Router();
  const base = '/bases/:databaseId/webhooks';

  router.post(
    base,
    endpoint({ params: baseParams, body: createWebhookRequestSchema, status: 201 }, ({ params, body, res }) =>
      createWebhook(prisma, secretKey, principalOf(res), params.databaseId, body),
    ),
  );
  router.get(
    base,
    endpoint({ params: baseParams }, async ({ params, res }) => ({
      webhooks: await listWebhooks(prisma, principalOf(res), params.databaseId),
    })),
  );
  router.get(
    `${base}/:webhookId`,
    endpoint({ params: webhookParams }, ({ params, res }) =>
      getWebhook(prisma, principalOf(res), params.databaseId, params.webhookId),
    ),
  );
  router.patch(
    `${base}/:webhookId`,
    endpoint({ params: webhookParams, body: updateWebhookRequestSchema }, ({ params, body, res }) =>
      updateWebhook(prisma, principalOf(res), params.databaseId, params.webhookId, body),
    ),
  );
  router.delete(
    `${base}/:webhookId`,
    endpoint({ params: webhookParams }, async ({ params, res }) => {
      await deleteWebhook(prisma, principalOf(res), params.databaseId, params.webhookId);
      return deleted('Webhook deleted');
    }),
  );

  router.get(
    `${base}/:webhookId/deliveries`,
    endpoint(
      { params: webhookParams, query: listWebhookDeliveriesQuerySchema },
      async ({ params, query, res }) => ({
        deliveries: await listWebhookDeliveries(
          prisma,
          principalOf(res),
          params.databaseId,
          params.webhookId,
          query.limit,
        ),
      }),
    ),
  );
  router.post(
    `${base}/:webhookId/deliveries/:deliveryId/retry`,
    endpoint({ params: deliveryParams, status: 202 }, ({ params, res }) =>
      retryWebhookDelivery(prisma, principalOf(res), params.databaseId, params.webhookId, params.deliveryId),
    ),
  );

  return router;
}
