import { createServer } from 'node:http';
import { createDb } from '@recordbase/db';
import { checkPostgres, checkRedis } from '@recordbase/server-kit/dependencies';
import { closeServer, installShutdown, listen } from '@recordbase/server-kit/lifecycle';
import { createLogger } from '@recordbase/server-kit/logger';
import { Redis } from 'ioredis';
import { createApp } from './app';
import { loadConfig } from './config';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('webhook-dispatcher', config.LOG_LEVEL);
  await checkPostgres(config.DATABASE_URL);
  await checkRedis(config.REDIS_URL);
  const db = createDb(config.DATABASE_URL, { applicationName: 'webhook-dispatcher', maxConnections: 10 });
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  redis.on('error', (error) => logger.warn({ err: error }, 'redis error'));
  const server = createServer(createApp({ db, redis, logger }));
  const port = await listen(server, config.PORT, config.HOST);
  logger.info({ port }, 'webhook-dispatcher listening');
  installShutdown(logger, [
    ['http server', () => closeServer(server)],
    ['redis', () => redis.quit()],
    ['database', () => db.close()],
  ]);
}

main().catch((error: unknown) => {
  console.error(
    `webhook-dispatcher failed to start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
});
