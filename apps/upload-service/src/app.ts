import { uploadRoutes } from '@recordbase/contracts/uploads';
import type { Db } from '@recordbase/db';
import { authMiddleware, createServiceAuthenticator, principalOf } from '@recordbase/server-kit/auth';
import { createAuthThrottle } from '@recordbase/server-kit/auth-throttle';
import { trustProxySetting } from '@recordbase/server-kit/env';
import { dependencyChecks, operationalRoutes } from '@recordbase/server-kit/health';
import { errorMiddleware, requestIds, unknownRoute } from '@recordbase/server-kit/http';
import {
  createInFlightLimiter,
  DEFAULT_REQUESTS_IN_FLIGHT_PER_KEY,
  inFlightMiddleware,
  requestsOfKey,
} from '@recordbase/server-kit/in-flight';
import type { Logger } from '@recordbase/server-kit/logger';
import { createMetrics } from '@recordbase/server-kit/metrics';
import { createRateLimiter, rateLimitMiddleware } from '@recordbase/server-kit/rate-limit';
import type { ObjectStorage } from '@recordbase/storage';
import express, { type Express } from 'express';
import type { Redis } from 'ioredis';
import type { UploadServiceConfig } from './config';
import { crossOrigin } from './cross-origin';
import { downloadRoute } from './files/download-route';
import { createUploadLookups, type UploadLookups } from './files/upload-lookups';
import { createUploadBudget, DEFAULT_UPLOAD_BANDWIDTH } from './uploads/bandwidth';
import { uploadRouter } from './uploads/upload-routes';

export interface UploadServiceDeps {
  db: Db;
  redis: Redis;
  logger: Logger;
  /** Where uploaded files go (`createStorage`), already prepared by the caller. */
  storage: ObjectStorage;
  /** What uploads are checked against before their bodies; made (and closed) here when absent. */
  lookups?: UploadLookups;
  config: Pick<UploadServiceConfig, 'ROOT_API_KEY' | 'FILE_TOKEN_SECRET'> &
    Partial<
      Pick<
        UploadServiceConfig,
        | 'TRUST_PROXY'
        | 'AUTH_FAILURE_BURST'
        | 'AUTH_FAILURES_PER_MINUTE'
        | 'PUBLIC_URL'
        | 'CORS_ORIGINS'
        | 'RATE_LIMIT_PER_SECOND'
        | 'RATE_LIMIT_BURST'
        | 'STORAGE_QUOTA_BYTES_PER_DATABASE'
        | 'UPLOAD_BYTES_PER_SECOND_PER_KEY'
        | 'UPLOAD_BYTES_BURST_PER_KEY'
        | 'REQUESTS_IN_FLIGHT_PER_KEY'
      >
    >;
}

/** RATE_LIMIT_PER_SECOND and RATE_LIMIT_BURST when a caller (a test) gives none: config.ts's defaults. */
const DEFAULT_RATE_LIMIT = { perSecond: 50, burst: 100 };

/** Runs the handlers one after another as one (Express runs a rejected async handler's error on). */
function inSequence(...handlers: express.RequestHandler[]): express.RequestHandler {
  return (req, res, next) => {
    const from = (index: number) => (error?: unknown) => {
      const handler = handlers[index];
      if (error !== undefined || !handler) {
        next(error);
        return;
      }
      Promise.resolve(handler(req, res, from(index + 1))).catch(next);
    };
    from(0)();
  };
}

/** Every path the contract serves at `{upload_url}` besides the operational ones; all need a key. */
export const protectedPaths = ['/fileupload', '/csvupload', '/xlsxupload', '/files'];

export function createApp(deps: UploadServiceDeps): Express {
  const { db, redis, logger, storage, config } = deps;
  const app = express();
  // First: every later log line and answer of the request carries its id.
  app.use(requestIds(logger));
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', trustProxySetting(config.TRUST_PROXY ?? 'loopback'));
  const metrics = createMetrics('upload-service');
  app.use(metrics.middleware);
  app.use(
    operationalRoutes(
      {
        ...dependencyChecks(db.pool, redis),
        storage: () => storage.check(),
      },
      metrics,
      logger,
    ),
  );

  // CORS first, so that preflights (which carry no key) are answered and error answers keep the
  // headers a page on an allowed origin needs to read them.
  app.use(protectedPaths, crossOrigin(config.CORS_ORIGINS ?? []));

  // Authentication runs before anything else on the upload and file paths, so a request without
  // a valid key learns nothing about which of them exist. A download may instead carry a signed
  // link (`?token=`), which the download route checks itself.
  const { authenticate } = createServiceAuthenticator({ db, rootApiKey: config.ROOT_API_KEY, logger });
  // One budget of failures per client address, for keys and for signed links alike.
  const authThrottle = createAuthThrottle({
    burst: config.AUTH_FAILURE_BURST ?? 20,
    perMinute: config.AUTH_FAILURES_PER_MINUTE ?? 60,
  });
  const authenticated = authMiddleware(authenticate, authThrottle);
  const viaSignedLink = (req: express.Request) =>
    req.baseUrl === uploadRoutes.files && req.query.token !== undefined && req.method !== 'POST';
  app.use(protectedPaths, (req, res, next) => (viaSignedLink(req) ? next() : authenticated(req, res, next)));
  // Then the per-key rate limit, before any body is read. It is records-api's limiter on the same
  // Redis bucket per key: a key has one budget for the whole installation, so spreading requests
  // over the services does not multiply it. A signed link counts against the key it was issued
  // to, once the download route has checked it.
  const rateLimit = {
    perSecond: config.RATE_LIMIT_PER_SECOND ?? DEFAULT_RATE_LIMIT.perSecond,
    burst: config.RATE_LIMIT_BURST ?? DEFAULT_RATE_LIMIT.burst,
  };
  const rateLimited = rateLimitMiddleware(
    createRateLimiter(redis, rateLimit),
    rateLimit,
    (res) => principalOf(res).keyId ?? 'root',
    logger,
  );
  // And the key's requests in flight, the same bound as records-api's: a key holding uploads open
  // holds its places in the JSON API too, and the other way round.
  const inFlight = createInFlightLimiter(redis, { logger });
  db.beforeClose(async () => inFlight.close());
  const requestsPerKey = config.REQUESTS_IN_FLIGHT_PER_KEY ?? DEFAULT_REQUESTS_IN_FLIGHT_PER_KEY;
  const admitted = inFlightMiddleware(inFlight, (res) => [
    requestsOfKey(principalOf(res).keyId, requestsPerKey),
  ]);
  const limited = inSequence(rateLimited, admitted);
  app.use(protectedPaths, (req, res, next) => (viaSignedLink(req) ? next() : limited(req, res, next)));
  let lookups = deps.lookups;
  if (!lookups) {
    const made = createUploadLookups({ prisma: db.prisma, pool: db.pool, logger });
    db.beforeClose(() => made.close());
    lookups = made;
  }
  app.use(
    uploadRouter({
      prisma: db.prisma,
      lookups,
      storage,
      publicUrl: config.PUBLIC_URL,
      storageQuota: config.STORAGE_QUOTA_BYTES_PER_DATABASE,
      chargeUpload: createUploadBudget(
        redis,
        {
          bytesPerSecond: config.UPLOAD_BYTES_PER_SECOND_PER_KEY ?? DEFAULT_UPLOAD_BANDWIDTH.bytesPerSecond,
          burstBytes: config.UPLOAD_BYTES_BURST_PER_KEY ?? DEFAULT_UPLOAD_BANDWIDTH.burstBytes,
        },
        logger,
      ),
    }),
  );
  app.get(
    `${uploadRoutes.files}/*key`,
    downloadRoute({
      prisma: db.prisma,
      storage,
      rootApiKey: config.ROOT_API_KEY,
      fileTokenSecret: config.FILE_TOKEN_SECRET,
      rateLimit: limited,
      throttle: authThrottle,
    }),
  );

  app.use(unknownRoute);
  app.use(errorMiddleware(logger));
  return app;
}
