import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../../../apps/upload-service/test/browser/chromium';
import { type Services, startServices } from '../services';

/**
 * The client in a browser: its main entry bundled as a bundler would (nothing of Node reaches it),
 * loaded into a Chromium page of records-api's own origin, reads the change feed with
 * `changes.list()` and follows it with `changes.stream()` (fetch and a ReadableStream, with the
 * key in the Authorization header) while records are written, then stops by leaving the loop.
 */

jest.setTimeout(120_000);

let services: Services;
let browser: Browser;
let page: Page;
let baseId: string;

beforeAll(async () => {
  services = await startServices();
  const base = await services.client().bases.create({
    name: 'Browser feed',
    tables: [{ name: 'Notes', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  baseId = base.id;
  const bundle = await build({
    entryPoints: [`${__dirname}/../../src/index.ts`],
    bundle: true,
    format: 'iife',
    globalName: 'Recordbase',
    platform: 'browser',
    write: false,
  });
  browser = await launchChromium();
  page = await browser.newPage();
  // records-api's own origin, so the page's requests to it are same-origin.
  await page.goto(`${new URL(services.apiUrl).origin}/healthz`);
  await page.addScriptTag({ content: bundle.outputFiles[0]!.text });
});
afterAll(async () => {
  await browser?.close();
  await services?.stop();
});

test('changes.list() and changes.stream() work in Chromium', async () => {
  const setup = { apiUrl: services.apiUrl, apiKey: services.rootKey, baseId };
  const latest = await page.evaluate(async ({ apiUrl, apiKey, baseId }) => {
    const { RecordbaseClient } = (globalThis as unknown as { Recordbase: typeof import('../../src/index') })
      .Recordbase;
    const client = new RecordbaseClient({ apiUrl, apiKey });
    const page = await client.changes.list(baseId, { cursor: 'latest' });
    const target = globalThis as unknown as { streamed: string[]; streaming: Promise<void> };
    target.streamed = [];
    target.streaming = (async () => {
      for await (const change of client.changes.stream(baseId, {
        cursor: page.cursor,
        types: ['record.created'],
      })) {
        target.streamed.push((change.event.data as { recordIds: string[] }).recordIds[0]!);
        if (target.streamed.length === 3) break;
      }
    })();
    return page.cursor;
  }, setup);

  const client = services.client();
  const written: string[] = [];
  for (const name of ['one', 'two', 'three']) {
    written.push((await client.records.create(baseId, 'Notes', { Name: name })).id);
  }
  await page.waitForFunction(
    () => (globalThis as unknown as { streamed: string[] }).streamed.length >= 3,
    null,
    {
      timeout: 20_000,
    },
  );
  // The loop left after three: the stream is closed and the promise settles.
  await page.evaluate(() => (globalThis as unknown as { streaming: Promise<void> }).streaming);
  expect(await page.evaluate(() => (globalThis as unknown as { streamed: string[] }).streamed)).toEqual(
    written,
  );

  const listed = await page.evaluate(
    async ({ apiUrl, apiKey, baseId, cursor }) => {
      const { RecordbaseClient } = (globalThis as unknown as { Recordbase: typeof import('../../src/index') })
        .Recordbase;
      const answer = await new RecordbaseClient({ apiUrl, apiKey }).changes.list(baseId, {
        cursor,
        types: ['record.created'],
      });
      return answer.changes.map((change) => (change.data as { recordIds: string[] }).recordIds[0]);
    },
    { ...setup, cursor: latest },
  );
  expect(listed).toEqual(written);
});
