import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { startReceiver } from '../lib/receiver';
import { type Percentiles, percentiles } from './analyze';
import type { CaseSpec, WebhooksBenchConfig } from './config';
import { type CpuUsage, probeCpu } from './cpu';

/**
 * The receiver's baseline: how many deliveries per second the receiver child takes when nothing
 * else runs, from a node client that sends what the dispatcher sends (a Standard Webhooks signed
 * envelope per request, signed afresh with node:crypto, over keep-alive connections, spread over
 * the webhooks' paths) as fast as it is answered, with `concurrency` requests in flight. No
 * database, no services: the ceiling any webhook case could reach on this machine.
 */

export interface ReceiverBaselineResult {
  spec: CaseSpec;
  repeat: number;
  concurrency: number;
  /** Answered 200 within the measured window, per second. */
  deliveriesPerSecond: number;
  /** Request → answer at the client, ms. */
  latency: Percentiles;
  requests: number;
  errors: number;
  /** Receipts the receiver verified (all, warm-up included) and rejected. */
  verified: number;
  invalid: number;
  cpu: CpuUsage;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runReceiverBaseline(
  config: WebhooksBenchConfig,
  spec: CaseSpec,
  repeat: number,
): Promise<ReceiverBaselineResult> {
  const receiver = await startReceiver(config.verify);
  const hooks = Array.from({ length: Math.max(1, spec.webhooks) }, (_, index) => ({
    index,
    webhookId: index + 1,
    secret: `whsec_${randomBytes(24).toString('base64')}`,
  }));
  await receiver.register(hooks);
  const keys = hooks.map((hook) => Buffer.from(hook.secret.slice(6), 'base64'));
  const origin = new URL(receiver.urlFor(0)).origin;
  const client = new Pool(origin, { connections: config.receiverConcurrency, pipelining: 1 });
  const warmupMs = 1000;
  const started = Date.now();
  const measuredFrom = started + warmupMs;
  const stopAt = measuredFrom + config.baselineMs;
  const latencies: number[] = [];
  let requests = 0;
  let errors = 0;
  let answeredInWindow = 0;
  let sequence = 0;
  const cpuProbe = sleep(warmupMs).then(() =>
    probeCpu(undefined, { 'load generator': process.pid, receiver: receiver.pid }),
  );
  const worker = async () => {
    while (Date.now() < stopAt) {
      const index = sequence++ % hooks.length;
      const hook = hooks[index]!;
      const id = `evt_${randomUUID()}`;
      const seconds = Math.floor(Date.now() / 1000);
      const body = `{"id":"${id}","type":"record.created","timestamp":"${new Date().toISOString()}","data":{"tableId":"tbl_bench","recordIds":["rec_${sequence}"]},"metadata":${JSON.stringify({ webhookId: hook.webhookId, baseId: 'db_bench', attempt: 1, source: 'api' })}}`;
      const signature = createHmac('sha256', keys[index]!)
        .update(`${id}.${seconds}.${body}`)
        .digest('base64');
      const sentAt = Date.now();
      const sentPerf = performance.now();
      requests += 1;
      try {
        const response = await client.request({
          method: 'POST',
          path: `/h/${hook.index}`,
          headers: {
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': String(seconds),
            'webhook-signature': `v1,${signature}`,
          },
          body,
        });
        await response.body.dump();
        const answeredAt = Date.now();
        if (response.statusCode !== 200) errors += 1;
        else if (sentAt >= measuredFrom && answeredAt <= stopAt) {
          answeredInWindow += 1;
          latencies.push(performance.now() - sentPerf);
        }
      } catch {
        errors += 1;
        await sleep(10);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: config.receiverConcurrency }, () => worker()));
    const cpu = await (await cpuProbe).stop();
    const stats = await receiver.flush();
    return {
      spec,
      repeat,
      concurrency: config.receiverConcurrency,
      deliveriesPerSecond: answeredInWindow / (config.baselineMs / 1000),
      latency: percentiles(latencies),
      requests,
      errors,
      verified: stats.verified,
      invalid: stats.invalid,
      cpu,
    };
  } finally {
    await client.close();
    await receiver.close();
  }
}
