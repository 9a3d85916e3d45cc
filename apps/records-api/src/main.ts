import { createDb } from '@recordbase/db';
import { createEventPublisher, createImportQueue } from '@recordbase/queues';
import { checkPostgres, checkRedis, serviceDbOptions } from '@recordbase/server-kit/dependencies';
import { closeServer, createHttpServer, installShutdown } from '@recordbase/server-kit/lifecycle';
import { createLogger } from '@recordbase/server-kit/logger';
import {
  defaultProcesses,
  isWorkerProcess,
  listenWhenAllReady,
  processShare,
  runPrimary,
} from '@recordbase/server-kit/processes';
import { Redis } from 'ioredis';
import { closeChangeStreams, createApp } from './app';
import { loadConfig, type RecordsApiConfig } from './config';

/** records-api's PostgreSQL pool, shared among its processes. */
const POOL_SIZE = 20;

async function main(): Promise<void> {
  const loaded = loadConfig();
  const logger = createLogger('records-api', loaded.LOG_LEVEL);
  const processes = loaded.RECORDS_API_PROCESSES ?? defaultProcesses();
  if (processes > 1 && !isWorkerProcess()) {
    // Checked once here, so that a missing dependency is one message, not one per process.
    await checkPostgres(loaded.DATABASE_URL);
    await checkRedis(loaded.REDIS_URL);
    runPrimary({ processes, logger });
    return;
  }
  // The bounds configured for the service, each process given its part.
  const config: RecordsApiConfig = {
    ...loaded,
    DB_CONNECTIONS_PER_KEY: processShare(loaded.DB_CONNECTIONS_PER_KEY, processes),
    SQL_MAX_CONNECTIONS: processShare(loaded.SQL_MAX_CONNECTIONS, processes),
  };
  if (!isWorkerProcess()) {
    await checkPostgres(config.DATABASE_URL);
    await checkRedis(config.REDIS_URL);
  }
  if (!config.ROOT_API_KEY)
    logger.warn('ROOT_API_KEY is not set: only keys created earlier can authenticate');
  const db = createDb(config.DATABASE_URL, {
    applicationName: 'records-api',
    maxConnections: processShare(POOL_SIZE, processes),
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
    enableAutoPipelining: true,
  });
  redis.on('error', (error) => logger.warn({ err: error }, 'redis error'));
  const events = createEventPublisher({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, logger });
  const imports = createImportQueue({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, logger });
  const app = createApp({ db, redis, events, imports, logger, config });
  const server = createHttpServer(app, config);
  const port = await listenWhenAllReady(server, config.PORT, config.HOST);
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
