import { createServer, type RequestListener, type Server } from 'node:http';
import type { Logger } from './logger';

export type ShutdownStep = [name: string, close: () => Promise<unknown>];

/**
 * Runs the steps in order on SIGTERM or SIGINT (HTTP server first, then workers, Redis, the
 * database), then exits. A step that hangs cannot keep the process alive past the deadline.
 */
export function installShutdown(
  logger: Logger,
  steps: ShutdownStep[],
  deadlineMs = 10_000,
): () => Promise<void> {
  let shuttingDown: Promise<void> | null = null;
  const shutdown = () => {
    shuttingDown ??= (async () => {
      const timer = setTimeout(() => {
        logger.error('shutdown deadline passed; exiting');
        process.exit(1);
      }, deadlineMs);
      timer.unref();
      for (const [name, close] of steps) {
        try {
          await close();
        } catch (error) {
          logger.warn({ err: error, step: name }, 'shutdown step failed');
        }
      }
      logger.info('stopped');
    })();
    return shuttingDown;
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'shutting down');
      void shutdown().then(() => process.exit(0));
    });
  }
  return shutdown;
}

export interface HttpTimeouts {
  HTTP_HEADERS_TIMEOUT_MS: number;
  HTTP_REQUEST_TIMEOUT_MS: number;
}

/**
 * How long an idle keep-alive connection stays open. The gateway closes its idle connections to a
 * service after 4 s; the service must never close one first, or a request the gateway sends on it
 * at that moment meets a reset and, being a POST with its body streamed, is answered 503. Node's
 * 5 s left a margin of one second, which a gateway starved of CPU overran; this is the gateway's
 * own keep-alive toward its clients, so a direct client is treated as one through the gateway.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * A service's HTTP server, bounding how long a client may take over its headers and its whole
 * request. Node checks those deadlines on a timer; it runs often enough (a quarter of the
 * headers deadline, at most every 30 s, Node's default) that a client is cut off close to them.
 */
export function createHttpServer(handler: RequestListener, timeouts: HttpTimeouts): Server {
  const headersTimeout = timeouts.HTTP_HEADERS_TIMEOUT_MS;
  const requestTimeout = timeouts.HTTP_REQUEST_TIMEOUT_MS;
  if (headersTimeout > requestTimeout) {
    // Node refuses the pair; say which settings to change.
    throw new Error(
      `HTTP_HEADERS_TIMEOUT_MS (${headersTimeout}) must not be more than HTTP_REQUEST_TIMEOUT_MS (${requestTimeout})`,
    );
  }
  return createServer(
    {
      headersTimeout,
      requestTimeout,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(headersTimeout / 4))),
    },
    handler,
  );
}

export function listen(server: Server, port: number, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeIdleConnections();
  });
}
