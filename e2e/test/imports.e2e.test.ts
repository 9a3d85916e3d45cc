import type { RecordbaseClient } from '@recordbase/client';
import { clientOf } from './client';
import { type Receiver, startReceiver } from './receiver';
import { type Stack, startStack } from './stack';

/**
 * An import as a user runs it, across the services: the file uploaded to upload-service, the
 * import started through records-api, run by the import worker, which is SIGKILLed half-way:
 * restarted, it takes the import up again from the start and every row lands exactly once.
 */

const ROWS = 150_000;
let stack: Stack;
let client: RecordbaseClient;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  stack = await startStack({ env: { IMPORT_JOB_LOCK_MS: '2000' } });
  client = clientOf(stack);
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

async function uploadCsv(name: string, csv: string): Promise<string> {
  const uploaded = await client.uploads.csv(new Blob([csv]), { fileName: name });
  expect(uploaded.fileName).toBe(name);
  return uploaded.s3Key;
}

const statusOf = (baseId: string, importId: string) => client.imports.get(baseId, importId);

it('a worker killed mid-import: after its restart the import completes with every row exactly once', async () => {
  const base = await client.bases.create({ name: 'E2E imports' });
  const lines = Array.from({ length: ROWS }, (_, index) => `person ${index},${index},${index % 2 === 0}`);
  const s3Key = await uploadCsv('people.csv', `Name,Number,Even\n${lines.join('\n')}\n`);
  const started = await client.imports.start(base.id, { s3Key });
  expect(started.status).toBe('queued');

  // Killed once the import is under way: past its first pass or into its copy.
  for (;;) {
    const status = await statusOf(base.id, started.id);
    if (status.status === 'running' && (status.rowsTotal !== null || status.rowsImported > 0)) break;
    expect(['queued', 'running']).toContain(status.status);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await stack.kill('import-worker', 'SIGKILL');
  await stack.start('import-worker');

  const deadline = Date.now() + 120_000;
  let status = await statusOf(base.id, started.id);
  while (status.status !== 'succeeded' && status.status !== 'failed' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    status = await statusOf(base.id, started.id);
  }
  expect(status).toMatchObject({ status: 'succeeded', rowsImported: ROWS, rowsTotal: ROWS });

  // Exactly once: as many records as rows, each name once, and no second table.
  const sql = await client.sql.query(base.id, {
    query:
      'SELECT count(*) AS records, count(DISTINCT "Name") AS names, sum("Number") AS total FROM "people"',
  });
  expect(sql.rows).toEqual([[ROWS, ROWS, (ROWS * (ROWS - 1)) / 2]]);
  const tables = await client.tables.list(base.id);
  expect(tables.map((table) => table.name)).toEqual(['people']);
}, 240_000);

it("delivers an import's records to webhook subscribers: record.created, source import, every id once", async () => {
  const base = await client.bases.create({
    name: 'E2E import events',
    tables: [{ name: 'Leads', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  const hook = await client.webhooks.create(base.id, { url: receiver.url, events: ['record.created'] });
  const names = Array.from({ length: 2500 }, (_, index) => `lead ${index}`);
  const s3Key = await uploadCsv('leads.csv', `Name\n${names.join('\n')}\n`);
  const started = await client.imports.start(base.id, { s3Key, tableId: 'Leads' });
  expect(started.status).toBe('queued');
  const deliveries = await receiver.waitFor(3, 60_000, { webhookId: hook.id, distinct: true });
  const events = deliveries.map((delivery) => delivery.json);
  for (const event of events) {
    expect(event).toMatchObject({
      type: 'record.created',
      metadata: { source: 'import', baseId: base.id },
    });
  }
  const ids = events.flatMap((event) => event.data.recordIds as string[]);
  expect(new Set(ids).size).toBe(2500);
  const listed = await client.records.list(base.id, 'Leads', { limit: 1 });
  expect(listed.total).toBe(2500);
}, 120_000);
