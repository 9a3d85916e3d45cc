import type { Logger } from '@recordbase/server-kit/logger';
import type pg from 'pg';

/**
 * LISTEN on a few channels over one connection taken from the pool for good, reconnecting after
 * a loss. NOTIFY only lowers latency: whatever it announces is also found by polling, so a
 * notification missed while reconnecting costs a poll interval, nothing more. Every (re)connect
 * calls `onConnected`, for the caller to catch up.
 */
export interface Listener {
  start(): void;
  connected(): boolean;
  close(): Promise<void>;
}

export function createListener(options: {
  pool: pg.Pool;
  channels: readonly string[];
  onNotification(channel: string, payload: string): void;
  onConnected?(): void;
  logger: Logger;
  reconnectDelayMs?: number;
}): Listener {
  const { pool, logger } = options;
  let client: pg.PoolClient | undefined;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
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
    current.removeAllListeners('notification');
    current.release(error ?? true);
    retry();
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
