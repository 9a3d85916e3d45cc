import { Router } from 'express';
import { clip } from './errors';
import type { Logger } from './logger';
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

/**
 * What `/readyz` says of a dependency. It answers anyone, and a failure's own text can name hosts,
 * users, paths and versions, so that text goes to the log only.
 */
export type ReadinessState = 'ok' | 'unavailable';

/** Enough of a failure to act on; a PostgreSQL error can quote a whole value. */
const MAX_LOGGED_REASON_CHARS = 500;

/**
 * A failing check is logged at most once a minute (with how many failures went unlogged since):
 * orchestrators and scrapers poll `/readyz` every few seconds, more during an outage.
 */
const FAILURE_LOG_INTERVAL_MS = 60_000;

/** Logs each check's failures, throttled per check. */
function failureLog(logger: Logger): (check: string, error: unknown) => void {
  const byCheck = new Map<string, { loggedAt: number; unlogged: number }>();
  return (check, error) => {
    const now = Date.now();
    const state = byCheck.get(check);
    if (state && now - state.loggedAt < FAILURE_LOG_INTERVAL_MS) {
      state.unlogged += 1;
      return;
    }
    const reason = clip(error instanceof Error ? error.message : String(error), MAX_LOGGED_REASON_CHARS);
    logger.warn({ check, reason, unlogged: state?.unlogged ?? 0 }, 'readiness check failed');
    byCheck.set(check, { loggedAt: now, unlogged: 0 });
  };
}

/** `/healthz` (the process answers), `/readyz` (its dependencies answer) and `/metrics`. */
export function operationalRoutes(
  checks: Record<string, ReadinessCheck>,
  metrics: Metrics,
  logger: Logger,
): Router {
  const router = Router();
  const logFailure = failureLog(logger);
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]): Promise<[string, ReadinessState]> => {
        try {
          await withTimeout(check, 2000);
          return [name, 'ok'];
        } catch (error) {
          logFailure(name, error);
          return [name, 'unavailable'];
        }
      }),
    );
    const ready = results.every(([, state]) => state === 'ok');
    res
      .status(ready ? 200 : 503)
      .json({ status: ready ? 'ready' : 'unavailable', checks: Object.fromEntries(results) });
  });
  router.get('/metrics', metrics.handler);
  return router;
}
