import { type Db, DELIVERIES_CHANNEL, OUTBOX_CHANNEL, parseSecretKey } from '@recordbase/db';
import type { Logger } from '@recordbase/server-kit/logger';
import type { Metrics } from '@recordbase/server-kit/metrics';
import type { WebhookDispatcherConfig } from './config';
import { type DeliverSettings, deliverOnce } from './deliver';
import { fanOutEvent } from './fanout';
import { createListener, type Listener } from './listener';
import { createLoop, type Loop } from './loop';
import { createDispatcherMetrics, type DispatcherMetrics } from './metrics';
import { createQueues, type DispatchQueues } from './queues';
import { relayAll } from './relay';
import { OPEN_STATUSES, SCHEDULE_COLUMNS, type ScheduleRow, toEnqueue } from './schedule';
import type { Resolver } from './ssrf';
import { sweepOnce } from './sweeper';

/**
 * Wires the dispatcher: the relay (outbox → events queue, woken by NOTIFY, polling as fallback),
 * the fan-out and delivery workers, the sweep, and the LISTEN connection that also takes retry
 * requests from records-api (DELIVERIES_CHANNEL, payload = delivery id).
 */

export interface DispatcherOptions {
  db: Db;
  redisUrl: string;
  logger: Logger;
  /** The service's metrics; the dispatcher's own are registered on its registry. */
  metrics: Metrics;
  secretKey: Buffer;
  queuePrefix: string;
  retryScheduleMs: readonly number[];
  disableAfterMs: number;
  timeoutMs: number;
  concurrency: number;
  allowedCidrs: DeliverSettings['allowedCidrs'];
  pollIntervalMs: number;
  sweepIntervalMs: number;
  sweepGraceMs: number;
  /** For tests. */
  resolve?: Resolver;
}

export function dispatcherOptionsFromConfig(
  config: WebhookDispatcherConfig,
  deps: Pick<DispatcherOptions, 'db' | 'logger' | 'metrics'>,
): DispatcherOptions {
  return {
    ...deps,
    redisUrl: config.REDIS_URL,
    secretKey: parseSecretKey(config.WEBHOOK_SECRET_KEY),
    queuePrefix: config.QUEUE_PREFIX,
    retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE,
    disableAfterMs: config.WEBHOOK_DISABLE_AFTER,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    concurrency: config.DISPATCH_CONCURRENCY,
    allowedCidrs: config.WEBHOOK_ALLOWED_CIDRS,
    pollIntervalMs: config.DISPATCH_POLL_INTERVAL_MS,
    sweepIntervalMs: config.DISPATCH_SWEEP_INTERVAL_MS,
    sweepGraceMs: config.DISPATCH_SWEEP_GRACE_MS,
  };
}

export class Dispatcher {
  readonly metrics: DispatcherMetrics;
  private readonly queues: DispatchQueues;
  private readonly relay: Loop;
  private readonly sweeper: Loop;
  private readonly listener: Listener;
  private readonly deliverSettings: DeliverSettings;
  private started = false;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: DispatcherOptions) {
    const { db, logger } = options;
    this.metrics = createDispatcherMetrics(options.metrics.registry);
    this.queues = createQueues({
      redisUrl: options.redisUrl,
      prefix: options.queuePrefix,
      logger,
      deliveryConcurrency: options.concurrency,
    });
    this.deliverSettings = {
      pool: db.pool,
      secretKey: options.secretKey,
      retryScheduleMs: options.retryScheduleMs,
      disableAfterMs: options.disableAfterMs,
      timeoutMs: options.timeoutMs,
      allowedCidrs: options.allowedCidrs,
      logger,
      metrics: this.metrics,
      enqueue: (deliveries) => this.queues.enqueueDeliveries(deliveries),
      ...(options.resolve ? { resolve: options.resolve } : {}),
    };
    this.relay = createLoop(
      'outbox relay',
      options.pollIntervalMs,
      () => relayAll(db.pool, this.queues, this.metrics),
      logger,
    );
    this.sweeper = createLoop(
      'sweep',
      options.sweepIntervalMs,
      async () => {
        const swept = await sweepOnce({
          pool: db.pool,
          graceMs: options.sweepGraceMs,
          enqueueDeliveries: (deliveries) => this.queues.enqueueDeliveries(deliveries),
          fanOut: (eventId) => this.fanOut(eventId),
          metrics: this.metrics,
        });
        if (swept.deliveries > 0 || swept.events > 0) {
          logger.info(swept, 'sweep re-enqueued work the queue did not hold');
        }
      },
      logger,
    );
    this.listener = createListener({
      pool: db.pool,
      channels: [OUTBOX_CHANNEL, DELIVERIES_CHANNEL],
      onNotification: (channel, payload) => {
        if (channel === OUTBOX_CHANNEL) this.relay.wake();
        else if (channel === DELIVERIES_CHANNEL) void this.deliveryRequested(payload);
      },
      onConnected: () => this.relay.wake(),
      logger,
    });
  }

  /** Fans an event out and enqueues its deliveries. */
  private async fanOut(eventId: string): Promise<void> {
    const due = await fanOutEvent(this.options.db.pool, eventId);
    // Rows are committed: if this enqueue fails, the sweep enqueues them.
    await this.queues.enqueueDeliveries(due).catch((error: unknown) => {
      this.options.logger.warn({ err: error, eventId }, 'could not enqueue deliveries; the sweep will');
    });
  }

  /** A delivery made due outside the dispatcher (the API's retry): enqueue it now. */
  private async deliveryRequested(payload: string): Promise<void> {
    if (!/^\d{1,19}$/.test(payload)) return;
    try {
      const rows = await this.options.db.pool.query<ScheduleRow>(
        `SELECT ${SCHEDULE_COLUMNS} FROM webhook_deliveries d WHERE d.id = $1 AND d.status IN ${OPEN_STATUSES}`,
        [payload],
      );
      await this.queues.enqueueDeliveries(rows.rows.map(toEnqueue));
    } catch (error) {
      this.options.logger.warn(
        { err: error, deliveryId: payload },
        'could not enqueue a requested delivery; the sweep will',
      );
    }
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.queues.startWorkers({
      fanOut: (eventId) => this.fanOut(eventId),
      deliver: (deliveryId) => deliverOnce(this.deliverSettings, deliveryId),
    });
    this.listener.start();
    this.relay.start();
    this.sweeper.start();
    this.options.logger.info(
      { concurrency: this.options.concurrency, prefix: this.options.queuePrefix },
      'webhook dispatcher started',
    );
  }

  /** For /readyz: throws unless the workers run. */
  async readiness(): Promise<void> {
    if (!this.started || this.closing) throw new Error('not started');
    if (!this.queues.workersRunning()) throw new Error('workers are not running');
  }

  /**
   * Stops producing (relay, sweep, LISTEN), then closes the workers (waiting for attempts in
   * flight unless `force`), the queues and their Redis connections. The database is the caller's.
   */
  close(options: { force?: boolean } = {}): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([this.relay.stop(), this.sweeper.stop(), this.listener.close()]);
      // Attempts in flight end within their timeout; give them that and a little more.
      await this.queues.close({ ...options, timeoutMs: this.options.timeoutMs + 5000 });
    })();
    return this.closing;
  }
}
