import { createImportWorkerApp } from '@recordbase/import-worker/app';
import { createImportMetrics } from '@recordbase/import-worker/metrics';
import { type ImportWorker, startImportWorker } from '@recordbase/import-worker/worker';
import { createEventPublisher, type EventPublisher } from '@recordbase/queues';
import { createLogger } from '@recordbase/server-kit/logger';
import { createMetrics } from '@recordbase/server-kit/metrics';
import supertest from 'supertest';
import { createBase, type Harness, startHarness } from './harness';
import { type ImportFixture, importFixture } from './import-fixture';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let h: Harness;
let f: ImportFixture;
let worker: ImportWorker;
let baseId: string;
let events: EventPublisher;
const metrics = createMetrics('import-worker');
const logger = createLogger('import-metrics-test', 'silent');

beforeAll(async () => {
  h = await startHarness();
  f = await importFixture(h);
  events = createEventPublisher({ redisUrl: REDIS_URL, prefix: h.queuePrefix, logger });
  worker = startImportWorker({
    ctx: { db: h.db, storage: f.storage, events, logger },
    redisUrl: REDIS_URL,
    prefix: h.queuePrefix,
    sweepEveryMs: 500,
    metrics: createImportMetrics(metrics),
  });
  baseId = (await createBase(h, { name: 'Metrics' })).body.id;
});
afterAll(async () => {
  await worker.close();
  await events.close();
  await f.close();
  await h.close();
});

async function runImport(fileName: string, csv: string): Promise<string> {
  const s3Key = await f.upload(fileName, csv);
  const started = await h.api
    .post(`/api/v1/bases/${baseId}/imports`)
    .set('Authorization', h.bearer(h.rootKey))
    .send({ s3Key })
    .expect(202);
  return (await f.finished(baseId, started.body.id)).status;
}

/** The value of one series on the worker's /metrics. */
async function sample(series: string): Promise<number> {
  const app = createImportWorkerApp({ checks: {}, metrics, logger });
  const text = (await supertest(app).get('/metrics').expect(200)).text;
  const line = text.split('\n').find((candidate) => candidate.startsWith(series));
  if (!line) throw new Error(`no ${series} in:\n${text}`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('import worker metrics', () => {
  it('count each finished import by outcome and time it', async () => {
    expect(await sample('imports_total{outcome="succeeded"')).toBe(0);
    expect(await sample('imports_total{outcome="failed"')).toBe(0);
    expect(await runImport('people.csv', 'Name,Age\nAda,36\nLinus,54\n')).toBe('succeeded');
    expect(await runImport('broken.csv', 'A,B\n1,"unclosed\n2,3\n')).toBe('failed');
    expect(await sample('imports_total{outcome="succeeded"')).toBe(1);
    expect(await sample('imports_total{outcome="failed"')).toBe(1);
    expect(await sample('import_duration_seconds_count{service="import-worker",outcome="succeeded"')).toBe(1);
    expect(
      await sample('import_duration_seconds_sum{service="import-worker",outcome="succeeded"'),
    ).toBeGreaterThan(0);
  });
});
