import { DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS, type JobPayload, jobQueues, parseJobPayload } from '../src/jobs';

describe('job catalog', () => {
  it('names the three queues', () => {
    expect(Object.values(jobQueues).map((queue) => queue.queueName)).toEqual([
      'events',
      'webhook-deliveries',
      'imports',
    ]);
  });

  it('carries only ids in payloads', () => {
    const eventPayload: JobPayload<'events'> = { eventId: '0190f2a4-5b6c-7d8e-9f00-112233445566' };
    expect(parseJobPayload('events', eventPayload)).toEqual(eventPayload);
    expect(() => parseJobPayload('events', { ...eventPayload, secret: 'whsec_x' })).toThrow();
    expect(() => parseJobPayload('events', { eventId: 'evt_1' })).toThrow();
    expect(parseJobPayload('webhookDeliveries', { deliveryId: '42' })).toEqual({ deliveryId: '42' });
    expect(() => parseJobPayload('webhookDeliveries', { deliveryId: 42 })).toThrow();
    expect(() => parseJobPayload('imports', {})).toThrow();
  });

  it('retries a webhook delivery once per step of the schedule', () => {
    expect(jobQueues.webhookDeliveries.retry.attempts).toBe(DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS.length + 1);
    expect(DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS[0]).toBe(5000);
  });
});
