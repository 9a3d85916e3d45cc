import { pathSegmentSchema } from '@recordbase/contracts/common';
import type { successMessageSchema } from '@recordbase/contracts/errors';
import {
  createWebhookRequestSchema,
  listWebhookDeliveriesQuerySchema,
  updateWebhookRequestSchema,
} from '@recordbase/contracts/webhooks';
import type { PrismaClient } from '@recordbase/db';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  retryWebhookDelivery,
  updateWebhook,
} from '@recordbase/domain/webhooks';
import { notFound } from '@recordbase/server-kit/errors';
import { type Cidr, refusedWebhookUrl } from '@recordbase/server-kit/ssrf';
import { Router } from 'express';
import { z } from 'zod';
import { endpoint } from './endpoint';

// Ids stay text here: one that is not an integer cannot exist, so the domain answers it with a 404.
const baseParams = z.object({ databaseId: pathSegmentSchema });
const webhookParams = baseParams.extend({ webhookId: pathSegmentSchema });
const deliveryParams = webhookParams.extend({ deliveryId: pathSegmentSchema });

const manage = { scope: 'webhooks:manage' } as const;
/** A webhook of a database the key cannot reach is simply "not found", as a missing one is. */
const webhookNotFound = (params: { webhookId: string }) => notFound(`Webhook ${params.webhookId} not found`);

const deleted = (message: string): z.infer<typeof successMessageSchema> => ({ success: true, message });

/**
 * Webhook subscriptions of a database and their delivery log. `secretKey` seals signing secrets;
 * `allowedCidrs` are the private ranges a webhook's URL may resolve to (the dispatcher's too).
 */
export function webhookRoutes(
  prisma: PrismaClient,
  secretKey: Buffer,
  allowedCidrs: readonly Cidr[],
  /** A change of the views webhooks watch (this process's table cache, as for schema changes). */
  afterViewChange?: () => void,
): Router {
  const router = Router();
  const base = '/bases/:databaseId/webhooks';
  const urlRefusal = (url: string) => refusedWebhookUrl(url, allowedCidrs);

  router.post(
    base,
    endpoint(
      { access: manage, params: baseParams, body: createWebhookRequestSchema, status: 201 },
      ({ params, body, principal }) =>
        createWebhook(prisma, secretKey, principal, params.databaseId, body, urlRefusal, afterViewChange),
    ),
  );
  router.get(
    base,
    endpoint({ access: manage, params: baseParams }, async ({ params, principal }) => ({
      webhooks: await listWebhooks(prisma, principal, params.databaseId),
    })),
  );
  router.get(
    `${base}/:webhookId`,
    endpoint(
      { access: manage, params: webhookParams, unreachable: webhookNotFound },
      ({ params, principal }) => getWebhook(prisma, principal, params.databaseId, params.webhookId),
    ),
  );
  router.patch(
    `${base}/:webhookId`,
    endpoint(
      {
        access: manage,
        params: webhookParams,
        unreachable: webhookNotFound,
        body: updateWebhookRequestSchema,
      },
      ({ params, body, principal }) =>
        updateWebhook(
          prisma,
          principal,
          params.databaseId,
          params.webhookId,
          body,
          urlRefusal,
          afterViewChange,
        ),
    ),
  );
  router.delete(
    `${base}/:webhookId`,
    endpoint(
      { access: manage, params: webhookParams, unreachable: webhookNotFound },
      async ({ params, principal }) => {
        await deleteWebhook(prisma, principal, params.databaseId, params.webhookId);
        return deleted('Webhook deleted');
      },
    ),
  );

  router.get(
    `${base}/:webhookId/deliveries`,
    endpoint(
      {
        access: manage,
        params: webhookParams,
        unreachable: webhookNotFound,
        query: listWebhookDeliveriesQuerySchema,
      },
      async ({ params, query, principal }) => ({
        deliveries: await listWebhookDeliveries(
          prisma,
          principal,
          params.databaseId,
          params.webhookId,
          query.limit,
        ),
      }),
    ),
  );
  router.post(
    `${base}/:webhookId/deliveries/:deliveryId/retry`,
    endpoint(
      { access: manage, params: deliveryParams, unreachable: webhookNotFound, status: 202 },
      ({ params, principal }) =>
        retryWebhookDelivery(prisma, principal, params.databaseId, params.webhookId, params.deliveryId),
    ),
  );

  return router;
}
