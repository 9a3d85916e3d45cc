import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { insertBase, insertKey, type TestBase } from '../fixtures';
import { type Harness, startHarness } from '../harness';
import { onePixelPng } from '../sniff-files';
import { launchChromium } from './chromium';
import { type PondResult, pondPage } from './pond-page';
import { type StaticSite, startStaticSite } from './static-site';

/**
 * A real browser uploads through the real FilePond widget, from a page on another origin, as on
 * a customer's site: the preflight, the CORS headers on answers and errors, and the multipart
 * request FilePond builds are all the browser's and FilePond's own, not a test client's.
 */

// Starting chromium and FilePond's perceived-progress delay (up to 1.5 s) take a while.
jest.setTimeout(120_000);

let h: Harness;
let base: TestBase;
let key: { id: string; authorization: string };
let site: StaticSite;
let uploadService: Server;
let uploadOrigin: string;
let browser: Browser;

beforeAll(async () => {
  h = await startHarness();
  base = await insertBase(h.db);
  key = await insertKey(h.db, ['files:write']);
  site = await startStaticSite();
  uploadService = createServer(h.appWith({ CORS_ORIGINS: [site.origin] }));
  await new Promise<void>((done) => uploadService.listen(0, '127.0.0.1', done));
  uploadOrigin = `http://127.0.0.1:${(uploadService.address() as AddressInfo).port}`;
  site.page(
    '/attachment.html',
    pondPage({
      url: `${uploadOrigin}/fileupload`,
      headers: {
        Authorization: key.authorization,
        'base-public-id': base.databaseId,
        'table-id': base.tableId,
        'field-id': base.filesFieldId,
      },
    }),
  );
  site.page(
    '/import.html',
    pondPage({ url: `${uploadOrigin}/csvupload`, headers: { Authorization: key.authorization } }),
  );
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  if (uploadService) {
    uploadService.closeAllConnections();
    await new Promise((done) => uploadService.close(done));
  }
  await site?.close();
  await h?.close();
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function storedBytes(storageKey: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await h.storage.get(storageKey)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function storedKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const storageKey of h.storage.list('')) keys.push(storageKey);
  return keys.sort();
}

/** The page's global object, as the page script fills it (types only: the code runs in the page). */
type PondGlobal = typeof globalThis & { pondResults: PondResult[] };

/**
 * Opens `path` of the customer's site, puts the file in FilePond's file input as a person's file
 * chooser would, and waits for FilePond's verdict on it.
 */
async function uploadThroughPond(
  path: string,
  file: { name: string; mimeType: string; buffer: Buffer },
): Promise<PondResult> {
  const page: Page = await browser.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  try {
    await page.goto(`${site.origin}${path}`);
    await page.locator('input.filepond--browser').setInputFiles(file);
    await page
      .waitForFunction(() => (globalThis as PondGlobal).pondResults.length > 0, null, { timeout: 60_000 })
      .catch((error: Error) => {
        throw new Error(`FilePond reported nothing: ${error.message}\n${problems.join('\n')}`);
      });
    const results = await page.evaluate(() => (globalThis as PondGlobal).pondResults);
    expect(results).toHaveLength(1);
    return results[0]!;
  } finally {
    await page.close();
  }
}

describe('FilePond in chromium, from another origin', () => {
  it('uploads a PNG to /fileupload: the answer, its row and its bytes', async () => {
    const png = onePixelPng(30, 60, 200);
    const result = await uploadThroughPond('/attachment.html', {
      name: 'pixel.png',
      mimeType: 'image/png',
      buffer: png,
    });
    expect(result.error).toBeNull();
    expect(result.filename).toBe('pixel.png');
    const answer = JSON.parse(result.serverId!);
    expect(answer).toEqual({
      url: expect.stringMatching(new RegExp(`^${uploadOrigin}/files/attachments/`)),
      fileName: 'pixel.png',
      size: png.length,
      mimeType: 'image/png',
    });
    const storageKey = new URL(answer.url).pathname.slice('/files/'.length);
    const row = await h.db.prisma.uploadedFile.findUnique({ where: { key: storageKey } });
    expect(row).toMatchObject({
      kind: 'attachment',
      databaseId: base.databaseId,
      tableId: base.tableId,
      fieldId: base.filesFieldId,
      fileName: 'pixel.png',
      mimeType: 'image/png',
      sha256: sha256(png),
      apiKeyId: key.id,
    });
    expect((await storedBytes(storageKey)).equals(png)).toBe(true);
  });

  it('uploads a CSV to /csvupload, answering its s3Key', async () => {
    const csv = Buffer.from('Name,Email\nAda,ada@example.com\nGrace,grace@example.com\n');
    const result = await uploadThroughPond('/import.html', {
      name: 'people.csv',
      mimeType: 'text/csv',
      buffer: csv,
    });
    expect(result.error).toBeNull();
    const answer = JSON.parse(result.serverId!);
    expect(answer).toEqual({
      url: `${uploadOrigin}/files/${answer.s3Key}`,
      fileName: 'people.csv',
      s3Key: expect.stringMatching(/^imports\/[0-9a-f-]{36}\/people\.csv$/),
    });
    const row = await h.db.prisma.uploadedFile.findUnique({ where: { key: answer.s3Key } });
    expect(row).toMatchObject({
      kind: 'import',
      databaseId: null,
      mimeType: 'text/csv',
      sha256: sha256(csv),
      apiKeyId: key.id,
    });
    expect((await storedBytes(answer.s3Key)).equals(csv)).toBe(true);
  });

  it("reports the server's 400 for an HTML page renamed .png, keeping nothing", async () => {
    const before = { keys: await storedKeys(), rows: await h.db.prisma.uploadedFile.count() };
    const result = await uploadThroughPond('/attachment.html', {
      name: 'innocent.png',
      mimeType: 'image/png',
      buffer: Buffer.from('<!DOCTYPE html><html><body><script>alert(1)</script></body></html>'),
    });
    // Status 400 and the body reached FilePond: without CORS headers on the error answer, the
    // browser would have hidden both (status 0).
    expect(result.error?.code).toBe(400);
    expect(JSON.parse(result.error!.body)).toEqual({
      error: { code: 'BAD_REQUEST', message: expect.any(String) },
    });
    expect(result.serverId).toBeNull();
    expect({ keys: await storedKeys(), rows: await h.db.prisma.uploadedFile.count() }).toEqual(before);
  });
});
