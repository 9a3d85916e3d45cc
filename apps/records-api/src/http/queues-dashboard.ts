import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { isRoot } from '@recordbase/domain/access-policy';
import type { QueueInspector } from '@recordbase/queues';
import { type Authenticate, authMiddleware, principalOf } from '@recordbase/server-kit/auth';
import type { AuthThrottle } from '@recordbase/server-kit/auth-throttle';
import { AppError, forbidden } from '@recordbase/server-kit/errors';
import { type RequestHandler, Router } from 'express';

export const QUEUES_DASHBOARD_PATH = '/admin/queues';

/**
 * Basic credentials (any user name, the key as password) read as the bearer key they carry: a
 * browser cannot send a bearer header to a page, but it prompts for and resends Basic ones.
 */
const basicAsBearer: RequestHandler = (req, _res, next) => {
  const match = /^Basic[ ]+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.authorization ?? '');
  if (match?.[1]) {
    const decoded = Buffer.from(match[1], 'base64').toString('utf8');
    const password = decoded.slice(decoded.indexOf(':') + 1);
    req.headers.authorization = `Bearer ${password}`;
  }
  next();
};

/** A missing or wrong key asks the browser for one, instead of a bare 401 it would just show. */
const promptForKey = (error: unknown): unknown =>
  error instanceof AppError && error.code === 'UNAUTHORIZED'
    ? new AppError('UNAUTHORIZED', `${error.message}: the queue dashboard takes the root API key`, {
        'WWW-Authenticate': 'Basic realm="recordbase queues", charset="UTF-8"',
      })
    : error;

/**
 * bull-board on the system's queues, for operators: the root key only (it lists every job of
 * every database). Read-only: PostgreSQL holds the truth about events, deliveries and imports and
 * the services' sweeps re-create lost jobs from it, so jobs are changed there, not here.
 */
export function queuesDashboard(deps: {
  authenticate: Authenticate;
  throttle?: AuthThrottle;
  inspector: QueueInspector;
}): Router {
  const router = Router();
  const authenticated = authMiddleware(deps.authenticate, deps.throttle);
  router.use(basicAsBearer, async (req, res, next) => {
    try {
      await authenticated(req, res, () => {});
    } catch (error) {
      throw promptForKey(error);
    }
    if (!isRoot(principalOf(res))) throw forbidden('The queue dashboard is for the root API key only');
    next();
  });
  // Built at the first root request, so the queues' Redis connection opens only when used.
  let board: Router | null = null;
  router.use((req, res, next) => {
    board ??= buildBoard(deps.inspector);
    board(req, res, next);
  });
  return router;
}

function buildBoard(inspector: QueueInspector): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUES_DASHBOARD_PATH);
  createBullBoard({
    queues: inspector.queues().map((queue) => new BullMQAdapter(queue, { readOnlyMode: true })),
    serverAdapter,
  });
  return serverAdapter.getRouter() as Router;
}
