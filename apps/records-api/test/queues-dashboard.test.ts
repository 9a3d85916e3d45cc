import { randomBytes } from 'node:crypto';
import { apiKeyScopes } from '@recordbase/contracts/api-keys';
import { jobQueues } from '@recordbase/contracts/jobs';
import { createQueueInspector } from '@recordbase/queues';
import { createMetrics, registerQueueMetrics } from '@recordbase/server-kit/metrics';
import { deleteKeysUnder } from '@recordbase/server-kit/redis-keys';
import { type Harness, startHarness } from './harness';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let h: Harness;
let root: string;

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
});
afterAll(() => h.close());

async function createKey(): Promise<string> {
  const response = await h.api
    .post('/api/v1/api-keys')
    .set('Authorization', root)
    .send({
      name: 'everything but root',
      scopes: apiKeyScopes,
    })
    .expect(201);
  return response.body.key;
}

const basic = (password: string) => `Basic ${Buffer.from(`operator:${password}`).toString('base64')}`;

describe('queue dashboard (/admin/queues)', () => {
  it('asks for the root key when none is given (401 with a Basic challenge)', async () => {
    const response = await h.api.get('/admin/queues').expect(401);
    expect(response.headers['www-authenticate']).toMatch(/^Basic realm=/);
    expect(response.body.error).toEqual({
      code: 'UNAUTHORIZED',
      message: expect.stringContaining('root API key'),
    });
  });

  it('refuses a key with every scope that is not the root key (403), as bearer or as Basic password', async () => {
    const key = await createKey();
    for (const header of [h.bearer(key), basic(key)]) {
      const response = await h.api.get('/admin/queues').set('Authorization', header).expect(403);
      expect(response.body.error).toEqual({
        code: 'FORBIDDEN',
        message: 'The queue dashboard is for the root API key only',
      });
      await h.api.get('/admin/queues/api/queues').set('Authorization', header).expect(403);
    }
  });

  it('refuses a wrong Basic password (401)', async () => {
    await h.api.get('/admin/queues').set('Authorization', basic('not-the-root-key')).expect(401);
  });

  it('shows the root key the page and the three queues, read-only', async () => {
    for (const header of [root, basic(h.rootKey)]) {
      const page = await h.api.get('/admin/queues').set('Authorization', header).expect(200);
      expect(page.headers['content-type']).toMatch(/text\/html/);
      // Asset links are relative to the mount path, so the page works behind it.
      expect(page.text).toContain('<base href="/admin/queues/" />');
    }
    await h.api.get('/admin/queues/static/favicon-32x32.png').set('Authorization', root).expect(200);
    const api = await h.api.get('/admin/queues/api/queues').set('Authorization', root).expect(200);
    const queues = api.body.queues as { name: string; readOnlyMode: boolean }[];
    expect(queues.map((queue) => queue.name).sort()).toEqual(
      Object.values(jobQueues)
        .map((spec) => spec.queueName)
        .sort(),
    );
    expect(queues.every((queue) => queue.readOnlyMode)).toBe(true);
  });

  it('refuses to change jobs or queues, even for the root key', async () => {
    for (const path of [
      '/api/queues/imports/retry/failed',
      '/api/queues/events/pause',
      '/api/queues/events/empty',
    ]) {
      const response = await h.api.put(`/admin/queues${path}`).set('Authorization', root).send({});
      expect({ path, status: response.status, body: response.body }).toEqual({
        path,
        status: 405,
        body: { error: { key: 'ERRORS.QUEUE_READ_ONLY' } },
      });
    }
  });
});

describe('queue metrics', () => {
  it('records-api /metrics has request durations and job counts of every queue', async () => {
    await h.api.get('/api/v1/bases').set('Authorization', root).expect(200);
    const response = await h.api.get('/metrics').expect(200);
    expect(response.text).toMatch(
      /http_request_duration_seconds_count\{[^}]*route="\/api\/v1\/bases"[^}]*\} [1-9]/,
    );
    for (const spec of Object.values(jobQueues))
      for (const state of ['waiting', 'active', 'delayed', 'failed'])
        expect(response.text).toMatch(
          new RegExp(`queue_jobs\\{[^}]*queue="${spec.queueName}",state="${state}"[^}]*\\} \\d+`),
        );
  });

  it('counts the jobs Redis holds, per queue and state', async () => {
    const prefix = `test-metrics-${randomBytes(6).toString('hex')}`;
    const inspector = createQueueInspector({ redisUrl: REDIS_URL, prefix });
    try {
      const { registry } = createMetrics('queue-metrics-test');
      registerQueueMetrics(registry, inspector.queues);
      const imports = inspector.queues().find((queue) => queue.name === jobQueues.imports.queueName);
      if (!imports) throw new Error('no imports queue');
      await imports.add('run-import', { importId: 'a' });
      await imports.add('run-import', { importId: 'b' });
      await imports.add('run-import', { importId: 'c' }, { delay: 3_600_000 });
      const text = await registry.metrics();
      expect(text).toContain('queue_jobs{queue="imports",state="waiting",service="queue-metrics-test"} 2');
      expect(text).toContain('queue_jobs{queue="imports",state="delayed",service="queue-metrics-test"} 1');
      expect(text).toContain('queue_jobs{queue="events",state="waiting",service="queue-metrics-test"} 0');
    } finally {
      await inspector.close();
      await deleteKeysUnder(REDIS_URL, prefix);
    }
  });
});
