import type pg from 'pg';

/**
 * LISTEN on a few channels over one connection taken from the pool for good, reconnecting after
 * a loss. NOTIFY only lowers latency: whatever it announces is also found by polling, so a
 * notification missed while reconnecting costs a poll interval, nothing more. Every (re)connect
 * calls `onConnected`, for the caller to catch up.
 *
 * A connection that only listens never writes, so one lost without a word reaching the process (a
 * network partition, a host gone, a middlebox dropping it) would look up for ever: a heartbeat
 * query finds out, and an unanswered one ends the connection for a new one.
 */
export interface Listener {
  start(): void;
  connected(): boolean;
  close(): Promise<void>;
}

/** Where a listener tells of a lost connection (a service's pino logger is one). */
export interface ListenerLogger {
  warn(details: object, message: string): void;
  warn(message: string): void;
}

/** How often the connection must answer a round trip, and how long it may take. */
const HEARTBEAT_INTERVAL_MS = 30_000;
const HEARTBEAT_TIMEOUT_MS = 10_000;

export function createListener(options: {
  /**
   * A pool whose connections have an 'error' listener from the moment they connect
   * (survivesLostConnections: createDb's pool is one): the listener's own comes too late for a
   * backend terminated as the pool hands its connection out.
   */
  pool: pg.Pool;
  channels: readonly string[];
  onNotification(channel: string, payload: string): void;
  onConnected?(): void;
  logger: ListenerLogger;
  reconnectDelayMs?: number;
  heartbeatIntervalMs?: number;
  heartbeatTimeoutMs?: number;
}): Listener {
  const { pool, logger } = options;
  let client: pg.PoolClient | undefined;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let connecting: Promise<void> | undefined;

  const retry = () => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(connect, options.reconnectDelayMs ?? 1000);
    timer.unref();
  };

  const drop = (current: pg.PoolClient, error?: Error) => {
    if (client !== current) return;
    client = undefined;
    clearTimeout(heartbeat);
    current.removeAllListeners('notification');
    // Releasing with an error ends the connection, destroying the socket under a pending query.
    current.release(error ?? true);
    retry();
  };

  const scheduleHeartbeat = (current: pg.PoolClient) => {
    if (client !== current) return;
    clearTimeout(heartbeat);
    heartbeat = setTimeout(() => {
      if (client !== current) return;
      const deadline = setTimeout(() => {
        logger.warn('LISTEN connection does not answer; reconnecting');
        drop(current, new Error('no answer to a heartbeat'));
      }, options.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS);
      deadline.unref();
      current.query('SELECT 1').then(
        () => {
          clearTimeout(deadline);
          scheduleHeartbeat(current);
        },
        (error: Error) => {
          clearTimeout(deadline);
          if (client === current) logger.warn({ err: error }, 'LISTEN connection lost; reconnecting');
          drop(current, error);
        },
      );
    }, options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS);
    heartbeat.unref();
  };

  function connect(): void {
    if (closed || client || connecting) return;
    connecting = (async () => {
      let current: pg.PoolClient | undefined;
      try {
        current = await pool.connect();
        const taken = current;
        taken.on('notification', (message) => options.onNotification(message.channel, message.payload ?? ''));
        taken.on('error', (error) => {
          logger.warn({ err: error }, 'LISTEN connection lost; reconnecting');
          drop(taken, error);
        });
        for (const channel of options.channels) {
          await taken.query(`LISTEN "${channel.replaceAll('"', '""')}"`);
        }
        if (closed) {
          taken.release(true);
          return;
        }
        client = taken;
        scheduleHeartbeat(taken);
        options.onConnected?.();
      } catch (error) {
        logger.warn({ err: error }, 'cannot LISTEN; retrying');
        current?.release(true);
        retry();
      }
    })().finally(() => {
      connecting = undefined;
    });
  }

  return {
    start() {
      connect();
    },
    connected() {
      return client !== undefined;
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      clearTimeout(heartbeat);
      await connecting;
      const current = client;
      client = undefined;
      if (current) {
        current.removeAllListeners('notification');
        await current.query('UNLISTEN *').catch(() => {});
        current.release(true);
      }
    },
  };
}
