import { createBase, type Harness, startHarness } from './harness';
import { deeplyNested, expectRefused, type HostileRequest, transportCases } from './hostile';

/** Webhook routes against NUL bytes, bad encodings, huge and nested values, wrong types. */

let h: Harness;
let root: string;
let base: string;
let webhookId: number;

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
  const created = await createBase(h, {
    name: 'Hostile webhooks',
    tables: [{ name: 'T', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  base = created.body.id;
  const webhook = await h.api
    .post(`/api/v1/bases/${base}/webhooks`)
    .set('Authorization', root)
    .send({ url: 'https://example.com/hook', events: ['record.created'] })
    .expect(201);
  webhookId = webhook.body.id;
});
afterAll(() => h.close());

const valid = { url: 'https://example.com/x', events: ['record.created'] };

function cases(): HostileRequest[] {
  const create = { method: 'post' as const, path: `/bases/${base}/webhooks` };
  const change = { method: 'patch' as const, path: `/bases/${base}/webhooks/${webhookId}` };
  return [
    { name: 'NUL in a url', ...create, body: { ...valid, url: 'https://example.com/\u0000' } },
    { name: 'a NUL-bearing host', ...create, body: { ...valid, url: 'https://exa\u0000mple.com/' } },
    { name: 'a newline in a url', ...create, body: { ...valid, url: 'https://example.com/a\nb' } },
    { name: 'a javascript: url', ...create, body: { ...valid, url: 'javascript:alert(1)' } },
    {
      name: 'a url past 2,048 characters',
      ...create,
      body: { ...valid, url: `https://example.com/${'a'.repeat(2100)}` },
    },
    { name: 'NUL in a tableId', ...create, body: { ...valid, tableId: 'T\u0000' } },
    { name: 'a tableId naming no table', ...create, body: { ...valid, tableId: 'Nope' } },
    { name: 'NUL in an event type', ...create, body: { ...valid, events: ['record.created\u0000'] } },
    { name: 'no events', ...create, body: { ...valid, events: [] } },
    { name: '100,000 events', ...create, body: { ...valid, events: Array(100_000).fill('record.created') } },
    {
      name: 'events nested 100,000 deep',
      ...create,
      body: `{"url":"https://example.com/x","events":${deeplyNested(100_000, '"record.created"')}}`,
    },
    { name: 'NUL in a changed url', ...change, body: { url: 'https://example.com/\u0000' } },
    { name: 'NUL in a changed tableId', ...change, body: { tableId: '\u0000' } },
    { name: 'active as a string', ...change, body: { active: 'false' } },
    { name: 'an empty change', ...change, body: {} },
    {
      name: 'NUL in the webhook id of the path',
      method: 'delete',
      path: `/bases/${base}/webhooks/1%00`,
      status: 400,
    },
    {
      name: 'a malformed percent-encoding in the webhook id',
      method: 'get',
      path: `/bases/${base}/webhooks/%E0%A4%A`,
    },
    {
      name: 'NUL in a delivery-log limit',
      method: 'get',
      path: `/bases/${base}/webhooks/${webhookId}/deliveries?limit=1%00`,
    },
    {
      name: 'a delivery-log limit past the bound',
      method: 'get',
      path: `/bases/${base}/webhooks/${webhookId}/deliveries?limit=100000`,
    },
    {
      name: 'NUL in a delivery id',
      method: 'post',
      path: `/bases/${base}/webhooks/${webhookId}/deliveries/1%00/retry`,
      status: 400,
    },
    ...transportCases(create, valid),
    ...transportCases(change, { active: false }),
  ];
}

describe('webhook routes refuse hostile input, writing nothing', () => {
  const names = (() => {
    base = '00000000-0000-4000-8000-000000000000';
    webhookId = 1;
    return cases().map((c, index) => [
      c.name,
      `${c.method.toUpperCase()} ${c.path.replace(base, ':id')}`,
      index,
    ]);
  })();

  it.each(names)('%s (%s)', async (_name, _route, index) => {
    await expectRefused(h, cases()[index as number]!, root);
  });
});
