import { randomBytes, randomUUID } from 'node:crypto';
import { jobQueues } from '@recordbase/contracts/jobs';
import { deleteKeysUnder } from '@recordbase/server-kit/redis-keys';
import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  addDeliveryJobs,
  addEventJobs,
  addImportJob,
  openEveryQueue,
  openQueue,
  openWorker,
  producerConnection,
  workerConnection,
} from '../src';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

let prefix: string;
let producer: Redis;
let consumer: Redis;
const opened: (Queue | Worker)[] = [];

beforeEach(() => {
  prefix = `test-queues-${randomBytes(6).toString('hex')}`;
  producer = producerConnection(REDIS_URL, 'queues-test:producer');
  consumer = workerConnection(REDIS_URL, 'queues-test:worker');
});
afterEach(async () => {
  for (const queueOrWorker of opened.splice(0)) await queueOrWorker.close();
  producer.disconnect();
  consumer.disconnect();
  await deleteKeysUnder(REDIS_URL, prefix);
});

const queueOf = (key: Parameters<typeof openQueue>[0]) => {
  const queue = openQueue(key, producer, prefix);
  opened.push(queue);
  return queue;
};

describe('connections', () => {
  it('gives producers a connection that fails at once while Redis is away, and workers one that waits', () => {
    expect(producer.options.enableOfflineQueue).toBe(false);
    expect(producer.options.maxRetriesPerRequest).toBe(1);
    expect(consumer.options.maxRetriesPerRequest).toBeNull();
  });
});

describe('events', () => {
  it('queues one job per event under its id, once however often it is published', async () => {
    const events = queueOf('events');
    const [first, second] = [randomUUID(), randomUUID()];
    await addEventJobs(events, [first, second]);
    await addEventJobs(events, [first]);
    const jobs = await events.getJobs(['waiting']);
    expect(jobs.map((job) => job.id).sort()).toEqual([first, second].sort());
    const job = jobs.find((candidate) => candidate.id === first)!;
    expect(job.name).toBe(jobQueues.events.jobName);
    expect(job.data).toEqual({ eventId: first });
    expect(job.opts.attempts).toBe(jobQueues.events.retry.attempts);
    expect(job.opts.backoff).toEqual(jobQueues.events.retry.backoff);
    // Finished jobs are kept in bounded numbers.
    expect(job.opts.removeOnComplete).toEqual({ count: 1000 });
    expect(job.opts.removeOnFail).toEqual({ count: 5000 });
  });

  it('refuses an event id its contract does not take, before anything reaches Redis', async () => {
    const events = queueOf('events');
    await expect(addEventJobs(events, ['not-a-uuid'])).rejects.toThrow();
    expect(await events.count()).toBe(0);
  });
});

describe('deliveries', () => {
  it('queues one job per attempt, delayed until due, and the same attempt once while it waits', async () => {
    const deliveries = queueOf('webhookDeliveries');
    const attempt = { deliveryId: '42', attempts: 1, dueAtMs: 1_000_000, delayMs: 60_000.4 };
    await addDeliveryJobs(deliveries, [attempt]);
    await addDeliveryJobs(deliveries, [attempt]);
    await addDeliveryJobs(deliveries, [{ ...attempt, attempts: 2, dueAtMs: 2_000_000, delayMs: -5 }]);
    const delayed = await deliveries.getJobs(['delayed']);
    expect(delayed.map((job) => [job.data, job.opts.delay, job.opts.attempts])).toEqual([
      [{ deliveryId: '42' }, 60_000, 1],
    ]);
    const waiting = await deliveries.getJobs(['waiting']);
    expect(waiting.map((job) => job.opts.delay ?? 0)).toEqual([0]);
  });
});

describe('imports', () => {
  it('queues an import once under its id, never retried by BullMQ', async () => {
    const imports = queueOf('imports');
    const importId = randomUUID();
    await addImportJob(imports, importId);
    await addImportJob(imports, importId);
    const jobs = await imports.getJobs(['waiting']);
    expect(jobs.map((job) => [job.id, job.name, job.data, job.opts.attempts])).toEqual([
      [importId, jobQueues.imports.jobName, { importId }, 1],
    ]);
  });
});

describe('workers', () => {
  it("hand the processor the job's checked payload, and fail a job whose payload breaks its contract", async () => {
    const imports = queueOf('imports');
    const seen: string[] = [];
    const failed = new Promise<string>((resolve) => {
      const worker = openWorker('imports', consumer, prefix, async ({ importId }) => {
        seen.push(importId);
      });
      worker.on('failed', (job) => resolve(String(job?.id)));
      opened.unshift(worker);
    });
    const importId = randomUUID();
    await imports.add(jobQueues.imports.jobName, { importId: 'forged', extra: 1 }, { jobId: 'forged' });
    expect(await failed).toBe('forged');
    await addImportJob(imports, importId);
    for (const giveUpAt = Date.now() + 10_000; seen.length === 0 && Date.now() < giveUpAt; )
      await new Promise((done) => setTimeout(done, 20));
    expect(seen).toEqual([importId]);
  });
});

it('opens every queue of the system, for those who read them', async () => {
  const queues = openEveryQueue(producer, prefix);
  opened.push(...queues);
  expect(queues.map((queue) => queue.name).sort()).toEqual(
    Object.values(jobQueues)
      .map((spec) => spec.queueName)
      .sort(),
  );
});
