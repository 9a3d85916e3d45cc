import { Router } from 'express';
import type { Metrics } from './metrics';

export type ReadinessCheck = () => Promise<void>;

/** The checks every service shares: its PostgreSQL pool and its Redis connection answer. */
export function dependencyChecks(
  pool: { query(text: string): Promise<unknown> },
  redis: { ping(): Promise<unknown> },
): Record<string, ReadinessCheck> {
  return {
    postgres: async () => {
      await pool.query('SELECT 1');
    },
    redis: async () => {
      await redis.ping();
    },
  };
}

function withTimeout(check: ReadinessCheck, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    check().then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** `/healthz` (the process answers), `/readyz` (its dependencies answer) and `/metrics`. */
export function operationalRoutes(checks: Record<string, ReadinessCheck>, metrics: Metrics): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          await withTimeout(check, 2000);
          return [name, 'ok'] as const;
        } catch (error) {
          return [name, error instanceof Error ? error.message : String(error)] as const;
        }
      }),
    );
    const ready = results.every(([, outcome]) => outcome === 'ok');
    res
      .status(ready ? 200 : 503)
      .json({ status: ready ? 'ready' : 'unavailable', checks: Object.fromEntries(results) });
  });
  router.get('/metrics', metrics.handler);
  return router;
}
