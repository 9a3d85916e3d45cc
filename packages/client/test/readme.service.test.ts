import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { signatureHeaders } from '../../../apps/webhook-dispatcher/src/signing';
import { isRecordbaseError, type RecordbaseClient } from '../src/index';
import { fileFromPath, fileFromStream } from '../src/node';
import { WebhookVerifier } from '../src/webhook-verifier';
import { type Services, startServices } from './services';

/** The README's examples, as written there, against the running services. */

let services: Services;
let client: RecordbaseClient;
let dir: string;

beforeAll(async () => {
  services = await startServices();
  client = services.client();
  dir = await mkdtemp(join(tmpdir(), 'client-readme-'));
}, 120_000);
afterAll(async () => {
  await services?.stop();
  await rm(dir, { recursive: true, force: true });
});

it('runs the README: a nested filter, a view, an export, an upsert, an upload into an attachment field, a signature check', async () => {
  const base = await client.bases.create({
    name: 'CRM',
    tables: [
      {
        name: 'Deals',
        fields: [
          { name: 'Title', type: 'single_line_text' },
          { name: 'Email', type: 'email' },
          { name: 'Amount', type: 'number' },
          {
            name: 'Stage',
            type: 'single_select',
            template: { options: [{ name: 'Lead' }, { name: 'Won' }] },
          },
          { name: 'Contract', type: 'attachments' },
        ],
      },
    ],
  });
  await client.records.createMany(base.id, 'Deals', [
    { Title: 'small', Email: 'ada@example.com', Amount: 5, Stage: 'Won' },
    { Title: 'big', Email: 'x@example.com', Amount: 50_000, Stage: 'Won' },
    { Title: 'corp', Email: 'y@bigcorp.com', Amount: 1, Stage: 'Won' },
    { Title: 'lead', Email: 'z@bigcorp.com', Amount: 90_000, Stage: 'Lead' },
  ]);

  const filter = {
    and: [
      { field: 'Stage', equals: 'Won' },
      {
        or: [
          { field: 'Amount', greater_than: 10_000 },
          { field: 'Email', ends_with: '@bigcorp.com' },
        ],
      },
    ],
  };
  const page = await client.records.list(base.id, 'Deals', {
    filter,
    sort: [{ field: 'Amount', direction: 'desc' }],
    limit: 50,
  });
  expect(page.records.map((r) => r.fields.Title)).toEqual(['big', 'corp']);
  const titles: unknown[] = [];
  for await (const deal of client.records.iterate(base.id, 'Deals', { filter, limit: 1 }))
    titles.push(deal.fields.Title);
  expect(titles.sort()).toEqual(['big', 'corp']);

  await client.views.create(base.id, 'Deals', { name: 'Won', filter: { field: 'Stage', equals: 'Won' } });
  const big = await client.records.list(base.id, 'Deals', {
    view: 'Won',
    filter: { field: 'Amount', greater_than: 10_000 },
  });
  expect([big.total, big.records.map((r) => r.fields.Title)]).toEqual([1, ['big']]);

  const response = await client.records.export(base.id, 'Deals', {
    format: 'csv',
    view: 'Won',
    fields: ['Title', 'Amount'],
    sort: [{ field: 'Amount', direction: 'desc' }],
  });
  await pipeline(
    Readable.fromWeb(response.body! as NodeReadableStream),
    createWriteStream(join(dir, 'won-deals.csv')),
  );
  expect(await readFile(join(dir, 'won-deals.csv'), 'utf8')).toBe(
    'Title,Amount\nbig,50000\nsmall,5\ncorp,1\n',
  );
  await expect(
    client.records.export(base.id, 'Deals', { format: 'csv', view: 'Lost' }),
  ).rejects.toMatchObject({
    status: 400,
  });

  const email = base.tables[0]!.fields.find((field) => field.name === 'Email')!.id;
  const result = await client.records.upsert(base.id, 'Deals', {
    matchOn: [email],
    records: [
      { Email: 'ada@example.com', Stage: 'Won' },
      { Email: 'new@example.com', Title: 'New lead', Stage: 'Lead' },
    ],
  });
  expect(result.updatedRecordIds).toEqual([result.records[0]!.id]);
  expect(result.createdRecordIds).toEqual([result.records[1]!.id]);

  const pdf = join(dir, 'globex.pdf');
  await writeFile(pdf, '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
  const contract = await fileFromPath(pdf);
  const uploaded = await client.uploads.attachment(contract, {
    baseId: base.id,
    tableId: 'Deals',
    fieldId: 'Contract',
  });
  expect(uploaded.mimeType).toBe('application/pdf');
  const deal = await client.records.create(base.id, 'Deals', {
    Title: 'Globex',
    Contract: [{ url: uploaded.url }],
  });
  expect(deal.fields.Contract).toEqual([{ ...uploaded, signedUrl: expect.stringContaining('?token=') }]);
  const csv = await fileFromStream(Readable.from(['Title,Amount\n', 'Initech,7\n']), 'deals.csv');
  const { s3Key } = await client.uploads.csv(csv);
  await expect(client.imports.start(base.id, { s3Key, tableId: 'Deals' })).resolves.toMatchObject({
    status: 'queued',
  });

  const hook = await client.webhooks.create(base.id, {
    url: 'http://127.0.0.1:9/hook',
    events: ['record.updated'],
  });
  const verifier = new WebhookVerifier(hook.secret);
  const delivery = JSON.stringify({
    id: 'evt_0192d1c5-7e0a-7cc1-8a55-2f1f6f6f0b01',
    type: 'record.updated',
    timestamp: new Date().toISOString(),
    data: { tableId: base.tables[0]!.id, recordIds: [deal.id], records: [deal], changes: [] },
    metadata: { webhookId: hook.id, baseId: base.id, attempt: 1, source: 'public_api' },
  });
  const headers = signatureHeaders(hook.secret, 'evt_0192d1c5-7e0a-7cc1-8a55-2f1f6f6f0b01', delivery);
  const event = await verifier.verify(Buffer.from(delivery), headers);
  expect(event.type === 'record.updated' && event.data.changes).toEqual([]);

  const missing = await client.records
    .get(base.id, 'Deals', '0192d1c5-7e0a-7cc1-8a55-2f1f6f6f0b01')
    .catch((e) => e);
  expect(isRecordbaseError(missing, 'NOT_FOUND')).toBe(true);
});
