import { randomBytes, randomUUID } from 'node:crypto';
import { jobQueues } from '@recordbase/contracts/jobs';
import { loadImportWorkerConfig } from '@recordbase/import-worker/config';
import { stackEnv } from '@recordbase/launcher/stack';
import { createImportQueue, type ImportQueue } from '@recordbase/queues';
import { createLogger } from '@recordbase/server-kit/logger';
import { deleteKeysUnder } from '@recordbase/server-kit/redis-keys';
import { type Job, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config';

// Two installations that differ only in their database share one Redis, QUEUE_PREFIX unset in both.
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const suffix = randomBytes(4).toString('hex');
const stacks = ['a', 'b'].map((name) => {
  const env = stackEnv({
    databaseUrl: `postgresql://postgres@127.0.0.1:5432/qp_${name}_${suffix}`,
    redisUrl,
    // Only what an installation sets: no QUEUE_PREFIX of this process's, none of a throwaway stack.
    inherit: {},
    throwaway: false,
  });
  return { name, api: loadConfig(env), worker: loadImportWorkerConfig(env) };
});
const logger = createLogger('queue-prefix-test', 'silent');

describe('two stacks on one Redis', () => {
  const queues: ImportQueue[] = [];
  const workers: Worker[] = [];
  const connections: Redis[] = [];

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.close()));
    await Promise.all(queues.map((queue) => queue.close()));
    for (const connection of connections) connection.disconnect();
    for (const stack of stacks) await deleteKeysUnder(redisUrl, stack.api.QUEUE_PREFIX);
  });

  it('gives each database its own prefix, shared by the services of one stack', () => {
    const [a, b] = stacks;
    expect(a?.api.QUEUE_PREFIX).toBe(`rb-qp_a_${suffix}`);
    expect(a?.worker.QUEUE_PREFIX).toBe(a?.api.QUEUE_PREFIX);
    expect(b?.worker.QUEUE_PREFIX).toBe(b?.api.QUEUE_PREFIX);
    expect(a?.api.QUEUE_PREFIX).not.toBe(b?.api.QUEUE_PREFIX);
  });

  it("never hands one stack's import jobs to the other's worker", async () => {
    const perStack = 15;
    const queued = new Map<string, string[]>();
    const taken = new Map<string, string[]>();
    const done = stacks.map(
      (stack) =>
        new Promise<void>((resolve) => {
          const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
          connections.push(connection);
          const seen: string[] = [];
          taken.set(stack.name, seen);
          // Each stack's worker takes from the prefix its own import-worker config derives.
          const worker = new Worker(
            jobQueues.imports.queueName,
            async (job: Job<{ importId: string }>) => {
              seen.push(job.data.importId);
              if (seen.length >= perStack) resolve();
            },
            { connection, prefix: stack.worker.QUEUE_PREFIX, concurrency: 4 },
          );
          worker.on('error', () => {});
          workers.push(worker);
        }),
    );
    for (const stack of stacks) {
      // records-api's own enqueuer, with the prefix its config derives.
      const queue = createImportQueue({ redisUrl, prefix: stack.api.QUEUE_PREFIX, logger });
      queues.push(queue);
      const ids = Array.from({ length: perStack }, () => randomUUID());
      queued.set(stack.name, ids);
    }
    // Interleaved, so a shared queue would mix them in whatever order the workers poll.
    for (let index = 0; index < perStack; index++)
      for (const [position, stack] of stacks.entries())
        await queues[position]?.enqueue(queued.get(stack.name)?.[index] as string);
    await Promise.all(done);
    for (const stack of stacks)
      expect([...(taken.get(stack.name) ?? [])].sort()).toEqual([...(queued.get(stack.name) ?? [])].sort());
  });
});
