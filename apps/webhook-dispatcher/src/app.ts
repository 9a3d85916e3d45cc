import type { Db } from '@recordbase/db';
import { dependencyChecks, operationalRoutes } from '@recordbase/server-kit/health';
import { errorMiddleware, requestIds, unknownRoute } from '@recordbase/server-kit/http';
import type { Logger } from '@recordbase/server-kit/logger';
import { createMetrics, type Metrics } from '@recordbase/server-kit/metrics';
import express, { type Express } from 'express';
import type { Redis } from 'ioredis';

export interface WebhookDispatcherDeps {
  db: Db;
  redis: Redis;
  logger: Logger;
  /** Shared with the dispatcher, so its metrics appear on the same `/metrics`. */
  metrics?: Metrics;
  /** When given, `/readyz` also reports whether its workers run. */
  dispatcher?: { readiness(): Promise<void> };
}

/** The dispatcher's HTTP side: health, readiness and metrics only; it serves no public routes. */
export function createApp(deps: WebhookDispatcherDeps): Express {
  const { db, redis, logger, dispatcher } = deps;
  const metrics = deps.metrics ?? createMetrics('webhook-dispatcher');
  const app = express();
  // First: every later log line and answer of the request carries its id.
  app.use(requestIds(logger));
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(metrics.middleware);
  app.use(
    operationalRoutes(
      {
        ...dependencyChecks(db.pool, redis),
        ...(dispatcher ? { workers: () => dispatcher.readiness() } : {}),
      },
      metrics,
      logger,
    ),
  );
  app.use(unknownRoute);
  app.use(errorMiddleware(logger));
  return app;
}
