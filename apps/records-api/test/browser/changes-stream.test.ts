import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { freePort, REPO_ROOT } from '@recordbase/launcher';
import { findNginx, launchGateway, type RunningGateway } from '@recordbase/launcher/gateway';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../../upload-service/test/browser/chromium';
import { type Harness, startHarness } from '../harness';

/**
 * A page in Chromium follows a database's change stream through the nginx gateway with the
 * browser's own EventSource, authenticated by a stream token (an EventSource cannot send an
 * Authorization header): events arrive as they commit, and when the connection to records-api
 * breaks, the browser reconnects by itself with Last-Event-ID and misses nothing.
 */

jest.setTimeout(120_000);

let h: Harness;
let server: Server;
let gateway: RunningGateway;
let browser: Browser;
let page: Page;
let baseId: string;

beforeAll(async () => {
  const nginx = findNginx();
  // A missing nginx fails loudly: .ci/run installs nginx-light, and a skip would test nothing.
  if (!nginx) throw new Error('The browser stream test needs nginx (apt-get install nginx-light)');
  h = await startHarness();
  server = createServer(h.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const api = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  gateway = launchGateway({
    nginx,
    port: await freePort(),
    host: '127.0.0.1',
    dataDir: join(REPO_ROOT, '.data', 'test', `gateway-${randomBytes(6).toString('hex')}`),
    recordsApi: [api],
    // Not reached by this test; the gateway needs an upstream for its upload routes.
    uploadService: [api],
    output: 'pipe',
  });
  await gateway.ready;
  const base = await h.api
    .post('/api/v1/bases')
    .set('Authorization', h.bearer(h.rootKey))
    .send({
      name: 'Live',
      tables: [{ name: 'Orders', fields: [{ name: 'Name', type: 'single_line_text' }] }],
    })
    .expect(201);
  baseId = base.body.id;
  browser = await launchChromium();
  page = await browser.newPage();
});
afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await h?.close();
});

async function createOrders(names: string[]): Promise<string[]> {
  const response = await fetch(`${gateway.url}/api/v1/bases/${baseId}/tables/Orders/records/bulk`, {
    method: 'POST',
    headers: { authorization: h.bearer(h.rootKey), 'content-type': 'application/json' },
    body: JSON.stringify({ records: names.map((Name) => ({ Name })) }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { records: { id: string }[] }).records.map((record) => record.id);
}

/** What the page's EventSource has received: each event's id and first record id. */
const received = () =>
  page.evaluate(() => (globalThis as unknown as { received: { id: string; recordId: string }[] }).received);

async function waitForCount(count: number) {
  await page.waitForFunction(
    (expected) => (globalThis as unknown as { received: unknown[] }).received.length >= expected,
    count,
    { timeout: 20_000 },
  );
}

test('a page follows the stream through the gateway with a token, and resumes after a break', async () => {
  // The key stays on the server side: the page gets only a token for this database's stream.
  const key = await h.api
    .post('/api/v1/api-keys')
    .set('Authorization', h.bearer(h.rootKey))
    .send({ name: 'page', scopes: ['records:read'] })
    .expect(201);
  const issued = await fetch(`${gateway.url}/api/v1/bases/${baseId}/changes/stream-tokens`, {
    method: 'POST',
    headers: { authorization: h.bearer(key.body.key) },
  });
  expect(issued.status).toBe(201);
  const { token } = (await issued.json()) as { token: string };

  // A page of the gateway's own origin, so the EventSource is same-origin.
  await page.goto(`${gateway.url}/healthz`);
  await page.evaluate(
    ({ url }) => {
      const target = globalThis as unknown as { received: { id: string; recordId: string }[]; opens: number };
      target.received = [];
      target.opens = 0;
      // EventSource is the browser's own; Node's types do not declare it.
      const { EventSource } = globalThis as unknown as {
        EventSource: new (
          url: string,
        ) => {
          addEventListener(
            type: string,
            listener: (event: { data?: string; lastEventId?: string }) => void,
          ): void;
        };
      };
      const source = new EventSource(url);
      source.addEventListener('open', () => {
        target.opens += 1;
      });
      source.addEventListener('record.created', (event) => {
        const body = JSON.parse(event.data!) as { data: { recordIds: string[] } };
        target.received.push({ id: event.lastEventId!, recordId: body.data.recordIds[0]! });
      });
    },
    { url: `/api/v1/bases/${baseId}/changes/stream?cursor=latest&token=${encodeURIComponent(token)}` },
  );
  await page.waitForFunction(() => (globalThis as unknown as { opens: number }).opens >= 1, null, {
    timeout: 20_000,
  });

  const first = await createOrders(['first']);
  const second = await createOrders(['second']);
  await waitForCount(2);
  expect((await received()).map((event) => event.recordId)).toEqual([...first, ...second]);

  // records-api drops every connection: nginx ends the page's stream, and the EventSource
  // reconnects by itself, sending the last id it received.
  server.closeAllConnections();
  await page.waitForFunction(() => (globalThis as unknown as { opens: number }).opens >= 2, null, {
    timeout: 20_000,
  });
  const third = await createOrders(['third']);
  await waitForCount(3);
  const events = await received();
  expect(events.map((event) => event.recordId)).toEqual([...first, ...second, ...third]);
  expect(new Set(events.map((event) => event.id)).size).toBe(3);
});
