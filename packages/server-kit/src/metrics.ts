import type { RequestHandler } from 'express';
import client from 'prom-client';

export interface Metrics {
  registry: client.Registry;
  httpRequests: client.Histogram<'method' | 'route' | 'status'>;
  /** Records every response's duration, labelled by route pattern (never the raw path). */
  middleware: RequestHandler;
  handler: RequestHandler;
}

export function createMetrics(service: string): Metrics {
  const registry = new client.Registry();
  registry.setDefaultLabels({ service });
  client.collectDefaultMetrics({ register: registry });
  const httpRequests = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'Duration of HTTP requests',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return {
    registry,
    httpRequests,
    middleware: (req, res, next) => {
      const end = httpRequests.startTimer();
      res.on('finish', () => {
        const route = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
        end({ method: req.method, route, status: String(res.statusCode) });
      });
      next();
    },
    handler: async (_req, res) => {
      res.setHeader('content-type', registry.contentType);
      res.send(await registry.metrics());
    },
  };
}
