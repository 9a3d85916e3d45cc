import {
  createKeyShares,
  type Db,
  DEFAULT_ACQUIRE_TIMEOUT_MS,
  type KeyShares,
  parseSecretKey,
} from '@recordbase/db';
import { type ChangeTailer, createChangeTailer } from '@recordbase/domain/change-tailer';
import { createTableCache } from '@recordbase/domain/records/table-cache';
import { createSqlConnections } from '@recordbase/domain/sql/connections';
import { SQL_DEFAULTS, type SqlQueryContext, sqlMaxMessageBytes } from '@recordbase/domain/sql/query';
import { createSqlRoles } from '@recordbase/domain/sql/roles';
import type { EventPublisher, ImportQueue } from '@recordbase/queues';
import { createQueueInspector } from '@recordbase/queues';
import { authMiddleware, createServiceAuthenticator, principalOf } from '@recordbase/server-kit/auth';
import { createAuthThrottle } from '@recordbase/server-kit/auth-throttle';
import {
  commonEnvSchema,
  DEFAULT_IMPORT_SECONDS_PER_MINUTE_PER_KEY,
  defaultQueuePrefix,
  trustProxySetting,
} from '@recordbase/server-kit/env';
import { notFound } from '@recordbase/server-kit/errors';
import { dependencyChecks, operationalRoutes } from '@recordbase/server-kit/health';
import { errorMiddleware, requestIds, routeNotFound } from '@recordbase/server-kit/http';
import {
  createInFlightLimiter,
  DEFAULT_REQUESTS_IN_FLIGHT_PER_KEY,
  type InFlightLimiter,
  inFlightMiddleware,
  inFlightRefusal,
  requestsOfKey,
} from '@recordbase/server-kit/in-flight';
import type { Logger } from '@recordbase/server-kit/logger';
import { createMetrics, registerQueueMetrics } from '@recordbase/server-kit/metrics';
import { createRateLimiter, rateLimitMiddleware } from '@recordbase/server-kit/rate-limit';
import { createTimeBudget } from '@recordbase/server-kit/time-budget';
import express, { type Express } from 'express';
import type { Redis } from 'ioredis';
import {
  DEFAULT_DB_CONNECTIONS_PER_KEY,
  DEFAULT_DB_SECONDS_PER_MINUTE_PER_KEY,
  type RecordsApiConfig,
} from './config';
import { airtableRoutes } from './http/airtable.routes';
import { sendAirtableError } from './http/airtable-errors';
import {
  changesRoutes,
  DEFAULT_STREAM_BUFFER_BYTES,
  DEFAULT_STREAMS_PER_KEY,
  eventFrame,
  streamTokenAuthentication,
} from './http/changes.routes';
import { importRoutes } from './http/imports.routes';
import { referenceRoutes } from './http/openapi/routes';
import { QUEUES_DASHBOARD_PATH, queuesDashboard } from './http/queues-dashboard';
import { type RecordRoutesOptions, recordListingHint, recordRoutes } from './http/records.routes';
import { schemaRoutes } from './http/schema.routes';
import { sqlRoutes } from './http/sql.routes';
import { viewRoutes } from './http/views.routes';
import { webhookRoutes } from './http/webhooks.routes';

export interface RecordsApiDeps {
  db: Db;
  redis: Redis;
  /** Publishes committed events to the webhook dispatcher's queue. */
  events: EventPublisher;
  /** Where accepted imports wait for the import worker. */
  imports: ImportQueue;
  logger: Logger;
  config: Pick<
    RecordsApiConfig,
    | 'ROOT_API_KEY'
    | 'RATE_LIMIT_PER_SECOND'
    | 'RATE_LIMIT_BURST'
    | 'JSON_BODY_LIMIT'
    | 'WEBHOOK_SECRET_KEY'
    | 'TRUST_PROXY'
    | 'AUTH_FAILURE_BURST'
    | 'AUTH_FAILURES_PER_MINUTE'
    | 'FILE_TOKEN_SECRET'
    | 'FILE_LINK_TTL_SECONDS'
  > &
    Partial<
      Pick<
        RecordsApiConfig,
        | 'READ_INDEX_MIN_ROWS'
        | 'SQL_STATEMENT_TIMEOUT'
        | 'SQL_MAX_CONNECTIONS'
        | 'SQL_CONNECTIONS_PER_BASE'
        | 'SQL_MAX_RESULT_BYTES'
        | 'SQL_IN_FLIGHT_PER_BASE'
        | 'DB_CONNECTIONS_PER_KEY'
        | 'DB_SECONDS_PER_MINUTE_PER_KEY'
        | 'IMPORT_SECONDS_PER_MINUTE_PER_KEY'
        | 'DB_ACQUIRE_TIMEOUT_MS'
        | 'REQUESTS_IN_FLIGHT_PER_KEY'
        | 'WEBHOOK_ALLOWED_CIDRS'
        | 'REDIS_URL'
        | 'QUEUE_PREFIX'
        | 'UPLOAD_PUBLIC_URL'
        | 'CHANGE_STREAMS_PER_KEY'
      >
    >;
}

export function createApp(deps: RecordsApiDeps): Express {
  const { db, redis, imports, logger, config } = deps;
  const webhookSecretKey = parseSecretKey(config.WEBHOOK_SECRET_KEY);
  const app = express();
  // First: every later log line and answer of the request carries its id.
  app.use(requestIds(logger));
  app.disable('x-powered-by');
  // Answers are generated per request; hashing every large body for an ETag costs more than it saves.
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.set('trust proxy', trustProxySetting(config.TRUST_PROXY));
  const metrics = createMetrics('records-api');
  app.use(metrics.middleware);
  // Every queue's job counts on /metrics and in the dashboard; unset in tests, the defaults apply.
  const queueInspector = createQueueInspector({
    redisUrl: config.REDIS_URL ?? commonEnvSchema.shape.REDIS_URL.parse(undefined),
    prefix: config.QUEUE_PREFIX ?? defaultQueuePrefix(commonEnvSchema.shape.DATABASE_URL.parse(undefined)),
  });
  db.beforeClose(() => queueInspector.close());
  registerQueueMetrics(metrics.registry, queueInspector.queues);
  app.use(
    operationalRoutes(
      {
        ...dependencyChecks(db.pool, redis),
      },
      metrics,
      logger,
    ),
  );

  // The API reference is public: mounted before the API's key check.
  app.use(referenceRoutes());

  const rateLimit = { perSecond: config.RATE_LIMIT_PER_SECOND, burst: config.RATE_LIMIT_BURST };
  const api = express.Router();
  const { authenticate, forgetKeys } = createServiceAuthenticator({
    db,
    rootApiKey: config.ROOT_API_KEY,
    logger,
  });
  const authThrottle = createAuthThrottle({
    burst: config.AUTH_FAILURE_BURST,
    perMinute: config.AUTH_FAILURES_PER_MINUTE,
  });
  api.use(
    streamTokenAuthentication({
      prisma: db.prisma,
      rootApiKey: config.ROOT_API_KEY,
      tokenSecret: config.FILE_TOKEN_SECRET,
    }),
  );
  // One key check, rate limit and in-flight bound for /api/v1 and /v0: a key's budget is the same
  // whichever dialect it speaks.
  const authenticated = authMiddleware(authenticate, authThrottle);
  const rateLimited = rateLimitMiddleware(
    createRateLimiter(redis, rateLimit),
    rateLimit,
    (res) => principalOf(res).keyId ?? 'root',
    logger,
  );
  const inFlight = createInFlightLimiter(redis, { logger });
  db.beforeClose(async () => inFlight.close());
  const requestsPerKey = config.REQUESTS_IN_FLIGHT_PER_KEY ?? DEFAULT_REQUESTS_IN_FLIGHT_PER_KEY;
  const boundedInFlight = inFlightMiddleware(inFlight, (res) => [
    requestsOfKey(principalOf(res).keyId, requestsPerKey),
  ]);
  api.use(authenticated);
  api.use(rateLimited);
  api.use(boundedInFlight);
  const keyShares = createKeyShares({
    perKey: config.DB_CONNECTIONS_PER_KEY ?? DEFAULT_DB_CONNECTIONS_PER_KEY,
    waitMs: config.DB_ACQUIRE_TIMEOUT_MS ?? DEFAULT_ACQUIRE_TIMEOUT_MS,
    budget: createTimeBudget(redis, {
      kind: 'database',
      secondsPerMinute: config.DB_SECONDS_PER_MINUTE_PER_KEY ?? DEFAULT_DB_SECONDS_PER_MINUTE_PER_KEY,
      logger,
    }),
  });
  // The change streams' one tail of the outbox, woken by this process's own commits (the others'
  // reach it at its next poll).
  const tailer = createChangeTailer(db.pool, {
    render: eventFrame,
    onError: (error) => logger.warn({ err: error }, 'reading the change feed failed; retrying'),
  });
  app.locals.changeTailer = tailer;
  db.beforeClose(async () => tailer.close());
  const events: EventPublisher = {
    publish(eventIds) {
      deps.events.publish(eventIds);
      tailer.wake();
    },
    close: () => deps.events.close(),
  };
  // Each route reads its own body, after checking the key's right to it (server-kit/http.ts).
  // Closed with the database connections, whose pool holds its LISTEN connection.
  const tables = createTableCache({ pool: db.pool, logger });
  db.beforeClose(() => tables.close());
  api.use(sqlRoutes(db.prisma, sqlQueryContext(db, webhookSecretKey, config, inFlight, keyShares)));
  api.use(schemaRoutes(db.prisma, events, tables.clear, forgetKeys));
  // The records routes of both APIs (/api/v1 here, /v0 below) reach the database alike.
  const recordOptions: RecordRoutesOptions = {
    writeBodyLimit: config.JSON_BODY_LIMIT,
    fileTokenSecret: config.FILE_TOKEN_SECRET,
    fileLinkTtlSeconds: config.FILE_LINK_TTL_SECONDS,
    uploadPublicUrl: config.UPLOAD_PUBLIC_URL,
    events,
    tables,
    keyShares,
    ...(config.READ_INDEX_MIN_ROWS !== undefined ? { readIndexMinRows: config.READ_INDEX_MIN_ROWS } : {}),
  };
  api.use(recordRoutes(db.pool, logger, recordOptions));
  api.use(webhookRoutes(db.prisma, webhookSecretKey, config.WEBHOOK_ALLOWED_CIDRS ?? [], tables.clear));
  api.use(viewRoutes({ prisma: db.prisma, afterChange: tables.clear }));
  api.use(
    changesRoutes({
      pool: db.pool,
      prisma: db.prisma,
      tailer,
      inFlight,
      streamsPerKey: config.CHANGE_STREAMS_PER_KEY ?? DEFAULT_STREAMS_PER_KEY,
      streamBufferBytes: DEFAULT_STREAM_BUFFER_BYTES,
      tokenSecret: config.FILE_TOKEN_SECRET,
    }),
  );
  api.use(
    importRoutes({
      prisma: db.prisma,
      queue: imports,
      importTime: createTimeBudget(redis, {
        kind: 'import',
        secondsPerMinute:
          config.IMPORT_SECONDS_PER_MINUTE_PER_KEY ?? DEFAULT_IMPORT_SECONDS_PER_MINUTE_PER_KEY,
        logger,
      }),
    }),
  );
  const apiMount = '/api/v1';
  app.use(apiMount, api);

  // The Airtable-compatible API: the same keys, scopes, rate limits and bounds as /api/v1, its
  // answers and errors in Airtable's shapes (its own error handler, before the app's).
  const airtable = express.Router();
  airtable.use(authenticated);
  airtable.use(rateLimited);
  airtable.use(boundedInFlight);
  airtable.use(airtableRoutes(db.pool, logger, { ...recordOptions, prisma: db.prisma }));
  airtable.use((req, _res, next) => next(notFound(`No route for ${req.method} /v0${req.path}`)));
  airtable.use(errorMiddleware(logger, sendAirtableError));
  app.use('/v0', airtable);

  app.use(
    QUEUES_DASHBOARD_PATH,
    queuesDashboard({ authenticate, throttle: authThrottle, inspector: queueInspector }),
  );

  app.use(routeNotFound([recordListingHint(apiMount)]));
  app.use(errorMiddleware(logger));
  return app;
}

/** Ends the app's change streams, which would otherwise hold its HTTP server open at shutdown. */
export function closeChangeStreams(app: Express): void {
  (app.locals.changeTailer as ChangeTailer | undefined)?.close();
}

/** Disk one SQL query may spill to (sorts, hashes) before PostgreSQL stops it. */
const SQL_TEMP_FILE_LIMIT_KB = 1024 * 1024;

/**
 * Read-only SQL's roles and connections. The role's password is kept under the same key as
 * webhook secrets; its connections close with the database's.
 */
function sqlQueryContext(
  db: Db,
  secretKey: Buffer,
  config: RecordsApiDeps['config'],
  inFlight: InFlightLimiter,
  keyShares: KeyShares,
): SqlQueryContext {
  const inFlightPerBase = config.SQL_IN_FLIGHT_PER_BASE ?? SQL_DEFAULTS.inFlightPerBase;
  const statementTimeoutMs = config.SQL_STATEMENT_TIMEOUT ?? SQL_DEFAULTS.statementTimeoutMs;
  const connectionsPerBase = config.SQL_CONNECTIONS_PER_BASE ?? SQL_DEFAULTS.connectionsPerBase;
  const maxResultBytes = config.SQL_MAX_RESULT_BYTES ?? SQL_DEFAULTS.maxResultBytes;
  const connections = createSqlConnections({
    databaseUrl: String(db.pool.options.connectionString),
    maxConnections: config.SQL_MAX_CONNECTIONS ?? SQL_DEFAULTS.maxConnections,
    perDatabase: connectionsPerBase,
    acquireTimeoutMs: statementTimeoutMs,
    maxMessageBytes: sqlMaxMessageBytes(maxResultBytes),
    longStatements: db.longStatements,
  });
  db.beforeClose(() => connections.close());
  return {
    prisma: db.prisma,
    roles: createSqlRoles(db.prisma, secretKey, {
      connectionLimit: connectionsPerBase,
      statementTimeoutMs,
      tempFileLimitKb: SQL_TEMP_FILE_LIMIT_KB,
    }),
    connections,
    statementTimeoutMs,
    maxResultBytes,
    // A database's queries, and a key's across its databases, are bounded across replicas: a
    // tenant cannot take every SQL connection of a process, and past the bound is told so at once.
    async admit(databaseId, keyId) {
      const admission = await inFlight.admit([
        { key: `inflight:sql-base:${databaseId}`, limit: inFlightPerBase, what: 'SQL queries of this base' },
        { key: `inflight:sql-key:${keyId}`, limit: inFlightPerBase, what: 'SQL queries of this API key' },
      ]);
      if (!admission.admitted) throw inFlightRefusal(admission.bound);
      return admission.lease.release;
    },
    keyShare: (keyId, signal) => keyShares.acquire(keyId, signal),
    async terminateBackend(pid, role) {
      await db.pool.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND usename = $2',
        [pid, role],
      );
    },
  };
}
