import { operationalRoutes, type ReadinessCheck } from '@recordbase/server-kit/health';
import type { Logger } from '@recordbase/server-kit/logger';
import type { Metrics } from '@recordbase/server-kit/metrics';
import express, { type Express } from 'express';

/** The import worker's HTTP side: health, readiness and metrics only; it serves no public routes. */
export function createImportWorkerApp(deps: {
  checks: Record<string, ReadinessCheck>;
  metrics: Metrics;
  logger: Logger;
}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(deps.metrics.middleware);
  app.use(operationalRoutes(deps.checks, deps.metrics, deps.logger));
  return app;
}
