import { createDb } from '@recordbase/db';
import { checkPostgres, checkRedis, serviceDbOptions } from '@recordbase/server-kit/dependencies';
import { closeServer, createHttpServer, installShutdown, listen } from '@recordbase/server-kit/lifecycle';
import { createLogger } from '@recordbase/server-kit/logger';
import { createStorage } from '@recordbase/storage';
import { Redis } from 'ioredis';
import { createApp } from './app';
import { loadConfig } from './config';
import { scheduleOrphanSweeps } from './sweeps/orphan-sweeper';

/** Orphans are rare and their grace is long: a look every quarter hour is plenty. */
const SWEEP_INTERVAL_MS = 15 * 60_000;

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('upload-service', config.LOG_LEVEL);
  await checkPostgres(config.DATABASE_URL);
  await checkRedis(config.REDIS_URL);
  const storage = createStorage(config);
  await storage.prepare();
  if (!config.ROOT_API_KEY)
    logger.warn('ROOT_API_KEY is not set: only keys created earlier can authenticate');
  const db = createDb(config.DATABASE_URL, {
    applicationName: 'upload-service',
    maxConnections: 10,
    ...serviceDbOptions(config, logger),
  });
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  redis.on('error', (error) => logger.warn({ err: error }, 'redis error'));
  const server = createHttpServer(createApp({ db, redis, logger, storage, config }), config);
  const port = await listen(server, config.PORT, config.HOST);
  // Where files go, for whoever reads the logs; the S3 keys are never logged.
  const storedIn =
    storage.name === 's3'
      ? { s3Endpoint: config.S3_ENDPOINT, s3Bucket: config.S3_BUCKET }
      : { storageDir: config.STORAGE_DIR };
  logger.info({ port, storage: storage.name, ...storedIn }, 'upload-service listening');
  const orphanSweeps = scheduleOrphanSweeps(
    db.pool,
    storage,
    { graceMs: config.ORPHAN_FILE_GRACE_HOURS * 3_600_000, intervalMs: SWEEP_INTERVAL_MS },
    logger,
  );
  installShutdown(logger, [
    ['orphan sweeps', () => orphanSweeps.stop()],
    ['http server', () => closeServer(server)],
    ['redis', () => redis.quit()],
    ['database', () => db.close()],
  ]);
}

main().catch((error: unknown) => {
  console.error(`upload-service failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
