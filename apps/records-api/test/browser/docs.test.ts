import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchChromium } from '../../../upload-service/test/browser/chromium';
import { type Harness, startHarness } from '../harness';

/**
 * A real browser opens /docs as a new user would: the reference renders from the service's own
 * assets, shows the list-records operation with its filter schema, and sends a request with a key
 * typed into the page, which the real API answers.
 */

// Starting chromium and rendering the whole reference take a while.
jest.setTimeout(120_000);

let h: Harness;
let server: Server;
let origin: string;
let browser: Browser;
let databaseId: string;
let tableId: string;

beforeAll(async () => {
  h = await startHarness();
  const created = await h.api
    .post('/api/v1/bases')
    .set('Authorization', h.bearer(h.rootKey))
    .send({
      name: 'Sales',
      tables: [
        {
          name: 'Deals',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            {
              name: 'Status',
              type: 'single_select',
              template: { options: [{ name: 'Open' }, { name: 'Won' }] },
            },
          ],
        },
      ],
    });
  expect(created.status).toBe(201);
  databaseId = created.body.id;
  tableId = created.body.tables[0].id;
  const records = await h.api
    .post(`/api/v1/bases/${databaseId}/tables/${tableId}/records/bulk`)
    .set('Authorization', h.bearer(h.rootKey))
    .send({
      records: [
        { Name: 'Acme renewal', Status: 'Open' },
        { Name: 'Globex expansion', Status: 'Won' },
      ],
    });
  expect(records.status).toBe(201);
  server = createServer(h.app);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  if (server) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
  await h?.close();
});

/** Opens /docs, recording every request that leaves the service and every page error. */
async function openDocs(): Promise<{ page: Page; elsewhere: string[]; problems: string[] }> {
  const page = await browser.newPage();
  const elsewhere: string[] = [];
  const problems: string[] = [];
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith('data:')) return route.continue();
    elsewhere.push(url);
    return route.abort();
  });
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  await page.goto(`${origin}/docs`);
  return { page, elsewhere, problems };
}

/** The text of an element once it is on the page. */
async function textOf(locator: Locator): Promise<string> {
  await locator.first().waitFor();
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered line breaks separate the schema's properties.
  return locator.first().innerText();
}

test('the reference renders from local assets only, without CSP violations or errors', async () => {
  const { page, elsewhere, problems } = await openDocs();
  await page.locator('#operations-Records-listRecords').waitFor();
  expect(await textOf(page.locator('.info .title'))).toContain('recordbase API');
  expect(elsewhere).toEqual([]);
  expect(problems).toEqual([]);
  await page.close();
});

test('list-records shows its filter schema and sends a request with a key typed into the page', async () => {
  const { page, elsewhere, problems } = await openDocs();
  const operation = page.locator('#operations-Records-listRecords');
  await operation.locator('.opblock-summary').click();

  // The request body's schema: the filter property, its two forms, and a condition's operators.
  await operation.getByRole('tab', { name: 'Schema' }).first().click();
  const schema = operation.locator('.opblock-section-request-body');
  // Each schema node has a head (its title and an accordion button) and a body.
  const node = (within: Locator, title: RegExp) =>
    within
      .locator('.json-schema-2020-12__title', { hasText: title })
      .first()
      .locator('xpath=ancestor::article[contains(@class, "json-schema-2020-12")][1]');
  const open = (schemaNode: Locator) =>
    schemaNode.locator('.json-schema-2020-12-head .json-schema-2020-12-accordion').first().click();
  const filter = node(schema, /^filter$/);
  await open(filter);
  await filter.locator('.json-schema-2020-12-keyword--anyOf .json-schema-2020-12-accordion').first().click();
  await open(node(filter, /FilterCondition/));
  const shown = await textOf(filter);
  expect(shown).toContain('A condition or a group of filters');
  expect(shown).toContain('FilterGroup');
  for (const operator of ['field', 'equals', 'contains', 'in', 'is_empty', 'greater_than']) {
    expect(shown).toMatch(new RegExp(`^${operator}(Expand all|string)`, 'm'));
  }

  // A key typed into the Authorize dialog, as a user would.
  await page.locator('button.authorize.unlocked').click();
  await page.locator('#auth-bearer-value').fill(h.rootKey);
  await page.getByRole('button', { name: 'Apply credentials' }).click();
  await page.locator('.dialog-ux .btn-done').click();

  await operation.getByRole('button', { name: 'Try it out' }).click();
  await operation.locator('input[placeholder="databaseId"]').fill(databaseId);
  await operation.locator('input[placeholder="tableId"]').fill(tableId);
  await operation
    .locator('textarea.body-param__text')
    .fill(JSON.stringify({ filter: { field: 'Status', equals: 'Won' }, limit: 10 }));
  const answered = page.waitForResponse((response) => response.url().endsWith('/records/list'));
  await operation.getByRole('button', { name: 'Execute' }).click();
  const response = await answered;

  expect(response.status()).toBe(200);
  const body = (await response.json()) as { records: { fields: { Name: string } }[]; total: number };
  expect(body.total).toBe(1);
  expect(body.records.map((record) => record.fields.Name)).toEqual(['Globex expansion']);
  // The page shows the answer too.
  const answer = await textOf(operation.locator('.live-responses-table'));
  expect(answer).toContain('200');
  expect(answer).toContain('Globex expansion');
  expect(elsewhere).toEqual([]);
  expect(problems).toEqual([]);
  await page.close();
});
