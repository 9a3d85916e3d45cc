import { createDb } from '@recordbase/db';
import { createEventPublisher, createImportQueue } from '@recordbase/queues';
import { checkPostgres, checkRedis, serviceDbOptions } from '@recordbase/server-kit/dependencies';
import { closeServer, createHttpServer, installShutdown, listen } from '@recordbase/server-kit/lifecycle';
import { createLogger } from '@recordbase/server-kit/logger';
import { Redis } from 'ioredis';
import { closeChangeStreams, createApp } from './app';
import { loadConfig } from './config';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('records-api', config.LOG_LEVEL);
  await checkPostgres(config.DATABASE_URL);
  await checkRedis(config.REDIS_URL);
  if (!config.ROOT_API_KEY)
    logger.warn('ROOT_API_KEY is not set: only keys created earlier can authenticate');
  const db = createDb(config.DATABASE_URL, {
    applicationName: 'records-api',
    maxConnections: 20,
    ...serviceDbOptions(config, logger),
  });
  // Redis only serves the rate limit here, which lets requests through when Redis is away: fail
  // fast instead of queueing commands until it returns. Its keys live under the installation's
  // prefix, so two installations sharing a Redis never share a key's budget (the root key's id is
  // the same everywhere).
  const redis = new Redis(config.REDIS_URL, {
    keyPrefix: `${config.QUEUE_PREFIX}:`,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: 500,
  });
  redis.on('error', (error) => logger.warn({ err: error }, 'redis error'));
  const events = createEventPublisher({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, logger });
  const imports = createImportQueue({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, logger });
  const app = createApp({ db, redis, events, imports, logger, config });
  const server = createHttpServer(app, config);
  const port = await listen(server, config.PORT, config.HOST);
  logger.info({ port }, 'records-api listening');
  installShutdown(logger, [
    // Open streams would keep the server from closing until the deadline.
    ['change streams', async () => closeChangeStreams(app)],
    ['http server', () => closeServer(server)],
    ['events queue', () => events.close()],
    ['imports queue', () => imports.close()],
    ['redis', () => redis.quit()],
    ['database', () => db.close()],
  ]);
}

main().catch((error: unknown) => {
  console.error(`records-api failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
