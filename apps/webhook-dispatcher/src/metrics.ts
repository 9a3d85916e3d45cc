import client from 'prom-client';

/** What an attempt (or its absence) made of a delivery; `postponed`: its receiver was at its limit. */
export type DeliveryOutcomeLabel = 'succeeded' | 'retrying' | 'failed' | 'pending' | 'postponed' | 'skipped';

export interface DispatcherMetrics {
  /**
   * Deliveries by what became of them: succeeded, will be retried, failed for good; postponed
   * (receiver at its limit) without an attempt; skipped: closed unsent (inactive webhook, or one
   * that no longer hears the event).
   */
  deliveries: client.Counter<'outcome'>;
  /** Duration of one attempt (DNS to the end of the bounded response read). */
  deliveryDuration: client.Histogram<'outcome'>;
  /** From an event's transaction to the start of its dispatch. */
  eventLag: client.Histogram;
  /** Events in the outbox not yet dispatched, as of the last sweep. */
  outboxBacklog: client.Gauge;
}

/** Registered on the service's registry, so they appear on its `/metrics`. */
export function createDispatcherMetrics(registry: client.Registry): DispatcherMetrics {
  return {
    deliveries: new client.Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook deliveries by outcome (succeeded, retrying, failed, postponed, skipped)',
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
    eventLag: new client.Histogram({
      name: 'webhook_event_lag_seconds',
      help: 'Time from an event being written to the start of its dispatch',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 300],
      registers: [registry],
    }),
    outboxBacklog: new client.Gauge({
      name: 'webhook_outbox_undispatched_events',
      help: 'Outbox events whose deliveries are not recorded yet',
      registers: [registry],
    }),
  };
}
