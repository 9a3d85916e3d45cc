import client from 'prom-client';

export type DeliveryOutcome = 'succeeded' | 'retrying' | 'failed' | 'skipped';

export interface DispatcherMetrics {
  /** Attempts by what became of the delivery: succeeded, will be retried, failed for good; skipped (inactive webhook). */
  deliveries: client.Counter<'outcome'>;
  /** Duration of one attempt (DNS to the end of the bounded response read). */
  deliveryDuration: client.Histogram<'outcome'>;
  /** Commit of an outbox event to its hand-over to BullMQ. */
  relayLag: client.Histogram;
  /** Events in the outbox not yet relayed, as of the last sweep. */
  outboxBacklog: client.Gauge;
}

/** Registered on the service's registry, so they appear on its `/metrics`. */
export function createDispatcherMetrics(registry: client.Registry): DispatcherMetrics {
  return {
    deliveries: new client.Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (succeeded, retrying, failed, skipped)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    deliveryDuration: new client.Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'Duration of webhook delivery attempts',
      labelNames: ['outcome'] as const,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    relayLag: new client.Histogram({
      name: 'webhook_relay_lag_seconds',
      help: 'Time from an outbox event being written to its relay to the queue',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 300],
      registers: [registry],
    }),
    outboxBacklog: new client.Gauge({
      name: 'webhook_outbox_unrelayed_events',
      help: 'Outbox events not yet relayed to the queue',
      registers: [registry],
    }),
  };
}
