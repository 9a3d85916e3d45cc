import { uploadRoutes } from '@recordbase/contracts/uploads';
import type { Db } from '@recordbase/db';
import { authMiddleware, createAuthenticator } from '@recordbase/server-kit/auth';
import { createAuthThrottle } from '@recordbase/server-kit/auth-throttle';
import { trustProxySetting } from '@recordbase/server-kit/env';
import { dependencyChecks, operationalRoutes } from '@recordbase/server-kit/health';
import { errorMiddleware, requestIds, unknownRoute } from '@recordbase/server-kit/http';
import type { Logger } from '@recordbase/server-kit/logger';
import { createMetrics } from '@recordbase/server-kit/metrics';
import type { ObjectStorage } from '@recordbase/storage';
import express, { type Express } from 'express';
import type { Redis } from 'ioredis';
import type { UploadServiceConfig } from './config';
import { crossOrigin } from './cross-origin';
import { downloadRoute } from './files/download-route';
import { uploadRouter } from './uploads/upload-routes';

export interface UploadServiceDeps {
  db: Db;
  redis: Redis;
  logger: Logger;
  /** Where uploaded files go (`createStorage`), already prepared by the caller. */
  storage: ObjectStorage;
  config: Pick<UploadServiceConfig, 'ROOT_API_KEY' | 'FILE_TOKEN_SECRET'> &
    Partial<
      Pick<
        UploadServiceConfig,
        'TRUST_PROXY' | 'AUTH_FAILURE_BURST' | 'AUTH_FAILURES_PER_MINUTE' | 'PUBLIC_URL' | 'CORS_ORIGINS'
      >
    >;
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
    ),
  );

  // CORS first, so that preflights (which carry no key) are answered and error answers keep the
  // headers a page on an allowed origin needs to read them.
  app.use(protectedPaths, crossOrigin(config.CORS_ORIGINS ?? []));

  // Authentication runs before anything else on the upload and file paths, so a request without
  // a valid key learns nothing about which of them exist. A download may instead carry a signed
  // link (`?token=`), which the download route checks itself.
  const authenticate = createAuthenticator({ prisma: db.prisma, rootApiKey: config.ROOT_API_KEY });
  const authenticated = authMiddleware(
    authenticate,
    createAuthThrottle({
      burst: config.AUTH_FAILURE_BURST ?? 20,
      perMinute: config.AUTH_FAILURES_PER_MINUTE ?? 60,
    }),
  );
  app.use(protectedPaths, (req, res, next) =>
    req.baseUrl === uploadRoutes.files && req.query.token !== undefined && req.method !== 'POST'
      ? next()
      : authenticated(req, res, next),
  );
  app.use(uploadRouter({ prisma: db.prisma, storage, publicUrl: config.PUBLIC_URL }));
  app.get(
    `${uploadRoutes.files}/*key`,
    downloadRoute({
      prisma: db.prisma,
      storage,
      authenticate,
      rootApiKey: config.ROOT_API_KEY,
      fileTokenSecret: config.FILE_TOKEN_SECRET,
    }),
  );

  app.use(unknownRoute);
  app.use(errorMiddleware(logger));
  return app;
}
