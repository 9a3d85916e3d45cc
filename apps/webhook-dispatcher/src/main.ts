import { createDb } from '@recordbase/db';
import { checkPostgres, checkRedis, serviceDbOptions } from '@recordbase/server-kit/dependencies';
import { closeServer, createHttpServer, installShutdown, listen } from '@recordbase/server-kit/lifecycle';
import { createLogger } from '@recordbase/server-kit/logger';
import { createMetrics } from '@recordbase/server-kit/metrics';
import { Redis } from 'ioredis';
import { createApp } from './app';
import { loadConfig } from './config';
import { Dispatcher, dispatcherOptionsFromConfig } from './dispatcher';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('webhook-dispatcher', config.LOG_LEVEL);
  await checkPostgres(config.DATABASE_URL);
  await checkRedis(config.REDIS_URL);
  const db = createDb(config.DATABASE_URL, {
    applicationName: 'webhook-dispatcher',
    // One connection is held for LISTEN; the rest serve event reads, claims, bookkeeping and sweep.
    maxConnections: Math.min(50, Math.max(10, Math.ceil(config.DISPATCH_CONCURRENCY / 2) + 5)),
    ...serviceDbOptions(config, logger),
    // Every write here is bookkeeping whose loss means sending a delivery again, never losing one.
    synchronousCommit: false,
  });
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  redis.on('error', (error) => logger.warn({ err: error }, 'redis error'));
  const metrics = createMetrics('webhook-dispatcher');
  const dispatcher = new Dispatcher(dispatcherOptionsFromConfig(config, { db, logger, metrics }));
  const server = createHttpServer(createApp({ db, redis, logger, metrics, dispatcher }), config);
  const port = await listen(server, config.PORT, config.HOST);
  dispatcher.start();
  logger.info({ port }, 'webhook-dispatcher listening');
  installShutdown(
    logger,
    [
      ['http server', () => closeServer(server)],
      // Workers (attempts in flight finish, bounded by the attempt timeout), then queues and
      // their Redis connections.
      ['dispatcher', () => dispatcher.close()],
      ['redis', () => redis.quit()],
      ['database', () => db.close()],
    ],
    config.WEBHOOK_TIMEOUT_MS + 20_000,
  );
}

main().catch((error: unknown) => {
  console.error(
    `webhook-dispatcher failed to start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
});
