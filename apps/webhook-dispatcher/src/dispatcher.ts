import {
  createListener,
  type Db,
  DELIVERIES_CHANNEL,
  type Listener,
  parseSecretKey,
  scheduleOf,
} from '@recordbase/db';
import type { Logger } from '@recordbase/server-kit/logger';
import type { Metrics } from '@recordbase/server-kit/metrics';
import { createLoop, type Loop } from '@recordbase/server-kit/periodic';
import type { Cidr, Resolver } from '@recordbase/server-kit/ssrf';
import type { AttemptSettings } from './attempt';
import type { WebhookDispatcherConfig } from './config';
import { ReceiverConnections } from './connections';
import { type DeliverDeps, deliverOnce } from './deliver';
import { createEventDispatch, type EventDispatch } from './event-dispatch';
import { createDispatcherMetrics, type DispatcherMetrics } from './metrics';
import { createQueues, type DispatchQueues } from './queues';
import { ReceiverLimits } from './receiver-limits';
import { createRecorder } from './recorder';
import { SigningKeys, SubscriptionCache } from './subscriptions';
import { pruneOnce } from './sweeps/retention';
import { sweepOnce } from './sweeps/sweeper';

/**
 * Wires the dispatcher: the event workers (events published by records-api), the delivery workers
 * (later attempts), the sweep, and the LISTEN connection that takes retry requests from
 * records-api (DELIVERIES_CHANNEL, payload = delivery id).
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
  /** Attempts in flight in all. */
  concurrency: number;
  /** Attempts in flight per webhook (as many more may wait; beyond, deliveries are put off). */
  receiverConcurrency: number;
  /** Events dispatched at once. */
  eventConcurrency: number;
  allowedCidrs: readonly Cidr[];
  sweepIntervalMs: number;
  sweepGraceMs: number;
  /** Retention of attempts and closed deliveries, of delivered events, and how often it runs. */
  attemptRetentionMs: number;
  eventRetentionMs: number;
  /** Retention of the record events history reads, and of the record and database trash. */
  historyRetentionMs: number;
  trashRetentionMs: number;
  pruneIntervalMs: number;
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
    receiverConcurrency: config.DISPATCH_RECEIVER_CONCURRENCY,
    eventConcurrency: config.DISPATCH_EVENT_CONCURRENCY,
    allowedCidrs: config.WEBHOOK_ALLOWED_CIDRS,
    sweepIntervalMs: config.DISPATCH_SWEEP_INTERVAL_MS,
    sweepGraceMs: config.DISPATCH_SWEEP_GRACE_MS,
    attemptRetentionMs: config.WEBHOOK_ATTEMPT_RETENTION,
    eventRetentionMs: config.CHANGES_RETENTION,
    historyRetentionMs: config.HISTORY_RETENTION,
    trashRetentionMs: config.TRASH_RETENTION,
    pruneIntervalMs: config.DISPATCH_PRUNE_INTERVAL_MS,
  };
}

/** Batches of old rows deleted per kind and per run, so one run stays short. */
const PRUNE_BATCHES_PER_RUN = 20;

/** A delivery put off because its receiver was at its limit is tried again after this. */
const MIN_POSTPONE_MS = 1000;

export class Dispatcher {
  readonly metrics: DispatcherMetrics;
  private readonly queues: DispatchQueues;
  private readonly connections: ReceiverConnections;
  private readonly limits: ReceiverLimits;
  private readonly dispatchEvent: EventDispatch;
  private readonly deliverDeps: DeliverDeps;
  private readonly inProgress = new Set<string>();
  private readonly sweeper: Loop;
  private readonly pruner: Loop;
  private readonly listener: Listener;
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
      eventConcurrency: options.eventConcurrency,
    });
    this.connections = new ReceiverConnections();
    this.limits = new ReceiverLimits(options.receiverConcurrency, options.concurrency);
    const limits = this.limits;
    const attempts: AttemptSettings = {
      timeoutMs: options.timeoutMs,
      allowedCidrs: options.allowedCidrs,
      retryScheduleMs: options.retryScheduleMs,
      connections: this.connections,
      ...(options.resolve ? { resolve: options.resolve } : {}),
    };
    const enqueue = (deliveries: Parameters<DispatchQueues['enqueueDeliveries']>[0]) =>
      this.queues.enqueueDeliveries(deliveries);
    const record = createRecorder({
      pool: db.pool,
      disableAfterMs: options.disableAfterMs,
      enqueue,
      logger,
      metrics: this.metrics,
    });
    // A slot frees at the latest when an attempt times out.
    const postponeMs = Math.max(MIN_POSTPONE_MS, Math.min(options.timeoutMs, 10_000));
    const dispatch = createEventDispatch({
      pool: db.pool,
      subscriptions: new SubscriptionCache(db.pool, options.secretKey, logger),
      limits,
      record,
      attempts,
      postponeMs,
      logger,
      metrics: this.metrics,
    });
    this.dispatchEvent = async (eventId) => {
      this.inProgress.add(eventId);
      try {
        await dispatch(eventId);
      } finally {
        this.inProgress.delete(eventId);
      }
    };
    this.deliverDeps = {
      pool: db.pool,
      limits,
      record,
      attempts,
      signingKeys: new SigningKeys(options.secretKey, logger),
      enqueue,
      postponeMs,
      logger,
      metrics: this.metrics,
    };
    this.sweeper = createLoop(
      'sweep',
      options.sweepIntervalMs,
      async () => {
        const swept = await sweepOnce({
          pool: db.pool,
          graceMs: options.sweepGraceMs,
          enqueueDeliveries: enqueue,
          eventQueued: (eventId) => this.queues.eventQueued(eventId),
          dispatching: (eventId) => this.inProgress.has(eventId),
          dispatchEvent: this.dispatchEvent,
          metrics: this.metrics,
        });
        if (swept.deliveries > 0 || swept.events > 0) {
          logger.info(swept, 'sweep took up work the queue did not hold');
        }
      },
      logger,
    );
    this.pruner = createLoop(
      'retention',
      options.pruneIntervalMs,
      async () => {
        const pruned = await pruneOnce(db.pool, {
          attemptRetentionMs: options.attemptRetentionMs,
          eventRetentionMs: options.eventRetentionMs,
          historyRetentionMs: options.historyRetentionMs,
          trashRetentionMs: options.trashRetentionMs,
          maxBatches: PRUNE_BATCHES_PER_RUN,
        });
        if (pruned.attempts + pruned.deliveries + pruned.events + pruned.trash + pruned.schemaTrash > 0) {
          logger.info(pruned, 'retention deleted old webhook history');
        }
      },
      logger,
    );
    this.listener = createListener({
      pool: db.pool,
      channels: [DELIVERIES_CHANNEL],
      onNotification: (_channel, payload) => void this.deliveryRequested(payload),
      logger,
    });
  }

  /** A delivery made due outside the dispatcher (the API's retry): enqueue it now. */
  private async deliveryRequested(payload: string): Promise<void> {
    if (!/^\d{1,19}$/.test(payload)) return;
    try {
      await this.queues.enqueueDeliveries(await scheduleOf(this.options.db.pool, [payload]));
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
      dispatchEvent: this.dispatchEvent,
      deliver: (deliveryId) => deliverOnce(this.deliverDeps, deliveryId),
    });
    this.listener.start();
    this.sweeper.start();
    this.pruner.start();
    this.options.logger.info(
      {
        concurrency: this.options.concurrency,
        receiverConcurrency: this.options.receiverConcurrency,
        prefix: this.options.queuePrefix,
      },
      'webhook dispatcher started',
    );
  }

  /** For /readyz: throws unless the workers run. */
  async readiness(): Promise<void> {
    if (!this.started || this.closing) throw new Error('not started');
    if (!this.queues.workersRunning()) throw new Error('workers are not running');
  }

  /**
   * Stops the sweep and LISTEN, then closes the workers (waiting for attempts in flight unless
   * `force`), the queues and their Redis connections, and the receiver connections. The database
   * is the caller's.
   */
  close(options: { force?: boolean } = {}): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([this.sweeper.stop(), this.pruner.stop(), this.listener.close()]);
      // Attempts in flight end within their timeout; give them that and a little more.
      await this.queues.close({ ...options, timeoutMs: this.options.timeoutMs + 5000 });
      await this.connections.close();
      this.limits.close();
    })();
    return this.closing;
  }
}
