import { createDb } from '@recordbase/db';
import { createEventPublisher } from '@recordbase/queues';
import { checkPostgres, checkRedis, serviceDbOptions } from '@recordbase/server-kit/dependencies';
import { dependencyChecks } from '@recordbase/server-kit/health';
import { closeServer, createHttpServer, installShutdown, listen } from '@recordbase/server-kit/lifecycle';
import { createLogger } from '@recordbase/server-kit/logger';
import { createMetrics } from '@recordbase/server-kit/metrics';
import { createTimeBudget } from '@recordbase/server-kit/time-budget';
import { createStorage } from '@recordbase/storage';
import { Redis } from 'ioredis';
import { createImportWorkerApp } from './app';
import { loadImportWorkerConfig } from './config';
import { createImportMetrics } from './metrics';
import { lowerOwnPriority } from './priority';
import { startImportWorker } from './worker';

/** The import worker's process: `npm start` runs one; operators run as many as imports need. */
async function main(): Promise<void> {
  const config = loadImportWorkerConfig();
  const logger = createLogger('import-worker', config.LOG_LEVEL);
  lowerOwnPriority(config.IMPORT_WORKER_NICENESS);
  await checkPostgres(config.DATABASE_URL);
  await checkRedis(config.REDIS_URL);
  const db = createDb(config.DATABASE_URL, {
    applicationName: 'import-worker',
    maxConnections: 5,
    ...serviceDbOptions(config, logger),
  });
  // Prisma loads its query compiler (some 50-100 MB) at the first model query: loaded now, a
  // worker that cannot load it fails at start, and the first import pays nothing for it.
  await db.prisma.uploadedFile.findFirst({ select: { key: true } });
  const storage = createStorage(config);
  await storage.prepare();
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  redis.on('error', (error) => logger.warn({ err: error }, 'redis error'));
  const events = createEventPublisher({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, logger });
  const metrics = createMetrics('import-worker');
  // records-api's keys live under the installation's prefix (its main.ts): the budgets are shared.
  const budgets = new Redis(config.REDIS_URL, {
    keyPrefix: `${config.QUEUE_PREFIX}:`,
    maxRetriesPerRequest: 1,
  });
  budgets.on('error', (error) => logger.warn({ err: error }, 'redis error'));
  const worker = startImportWorker({
    metrics: createImportMetrics(metrics),
    importTime: createTimeBudget(budgets, {
      kind: 'import',
      secondsPerMinute: config.IMPORT_SECONDS_PER_MINUTE_PER_KEY,
      logger,
    }),
    ctx: { db, storage, events, logger },
    redisUrl: config.REDIS_URL,
    prefix: config.QUEUE_PREFIX,
    lockDurationMs: config.IMPORT_JOB_LOCK_MS,
  });
  const app = createImportWorkerApp({
    checks: { ...dependencyChecks(db.pool, redis), storage: () => storage.check() },
    metrics,
    logger,
  });
  const server = createHttpServer(app, config);
  const port = await listen(server, config.PORT, config.HOST);
  logger.info({ port }, 'import-worker listening');
  installShutdown(logger, [
    ['http server', () => closeServer(server)],
    // The import in progress is abandoned, not finished: its run is taken up again from the start.
    ['worker', () => worker.close()],
    ['events queue', () => events.close()],
    [
      'redis',
      async () => {
        await redis.quit();
        await budgets.quit();
      },
    ],
    ['database', () => db.close()],
  ]);
}

main().catch((error: unknown) => {
  console.error(`import-worker failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
