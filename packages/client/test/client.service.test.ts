import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  type Database,
  isRecordbaseError,
  RecordbaseApiError,
  type RecordbaseClient,
  type Table,
} from '../src/index';
import { fileFromPath, fileFromStream } from '../src/node';
import { type Services, startServices } from './services';

/** Every route the client covers, against records-api and upload-service running as processes. */

let services: Services;
let client: RecordbaseClient;
let base: Database;

beforeAll(async () => {
  services = await startServices();
  client = services.client();
  base = await client.bases.create({
    name: 'Client',
    tables: [
      {
        name: 'People',
        fields: [
          { name: 'Name', type: 'single_line_text' },
          { name: 'Email', type: 'email' },
          { name: 'Score', type: 'number' },
          {
            name: 'Stage',
            type: 'single_select',
            template: { options: [{ name: 'Lead' }, { name: 'Won' }] },
          },
          { name: 'Photo', type: 'attachments' },
        ],
      },
    ],
  });
}, 120_000);
afterAll(async () => {
  await services?.stop();
});

const people = () => base.tables[0]!;
const fieldId = (name: string) => people().fields.find((field) => field.name === name)!.id;

describe('schema', () => {
  it('creates, reads, renames and deletes bases, tables and fields', async () => {
    expect(base.tables.map((table) => table.name)).toEqual(['People']);
    expect((await client.bases.list()).map((b) => b.id)).toContain(base.id);
    expect((await client.bases.get(base.id)).name).toBe('Client');
    expect((await client.bases.update(base.id, { name: 'Client tests' })).name).toBe('Client tests');

    const table = await client.tables.create(base.id, {
      name: 'Scratch',
      fields: [{ name: 'A', type: 'number' }],
    });
    expect((await client.tables.list(base.id)).map((t) => t.name)).toEqual(['People', 'Scratch']);
    expect((await client.tables.get(base.id, 'Scratch')).id).toBe(table.id);
    expect((await client.tables.update(base.id, table.id, { name: 'Scratch 2' })).name).toBe('Scratch 2');

    const field = await client.fields.create(base.id, table.id, { name: 'B', type: 'checkbox' });
    expect(await client.fields.get(base.id, table.id, 'B')).toEqual(field);
    expect((await client.fields.update(base.id, table.id, field.id, { name: 'C' })).name).toBe('C');
    await expect(client.fields.delete(base.id, table.id, field.id)).resolves.toEqual({
      success: true,
      message: 'Field deleted',
    });
    await expect(client.tables.delete(base.id, table.id)).resolves.toMatchObject({ success: true });

    const other = await client.bases.create({ name: 'Gone' });
    await client.bases.delete(other.id);
    const error = await client.bases.get(other.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordbaseApiError);
    expect(error).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('lists deleted tables and fields in the database trash and restores them as they were', async () => {
    const trashed = await client.bases.create({
      name: 'Trash',
      tables: [
        {
          name: 'Projects',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'Budget', type: 'currency' },
          ],
        },
        { name: 'Archive', fields: [{ name: 'Note', type: 'long_text' }] },
      ],
    });
    const [projects, archive] = trashed.tables as [Table, Table];
    const project = await client.records.create(trashed.id, 'Projects', { Name: 'Apollo', Budget: 1200.5 });
    await client.records.create(trashed.id, 'Archive', { Note: 'kept' });
    const budget = projects.fields[1]!;
    await client.fields.delete(trashed.id, 'Projects', budget.id);
    await client.tables.delete(trashed.id, 'Archive');
    await expect(client.tables.get(trashed.id, 'Archive')).rejects.toMatchObject({ status: 404 });

    // Each as it was, with who deleted it and when; a field with the id of its table.
    const trash = await client.bases.trash(trashed.id);
    const deletion = { deletedAt: expect.any(String), deletedBy: { id: 'root', name: expect.any(String) } };
    expect(trash).toEqual({
      tables: [{ ...archive, updatedAt: expect.any(String), ...deletion }],
      fields: [{ ...budget, tableId: projects.id, ...deletion }],
    });

    const restored = await client.bases.restoreFromTrash(trashed.id, {
      tableIds: [archive.id],
      fieldIds: [budget.id],
    });
    expect(restored).toEqual({ tables: [{ ...archive, updatedAt: expect.any(String) }], fields: [budget] });
    expect((await client.records.get(trashed.id, 'Projects', project.id)).fields).toEqual({
      Name: 'Apollo',
      Budget: 1200.5,
    });
    expect((await client.records.list(trashed.id, 'Archive')).records.map((r) => r.fields)).toEqual([
      { Note: 'kept' },
    ]);
    expect(await client.bases.trash(trashed.id)).toEqual({ tables: [], fields: [] });
    // Out of the trash now: a second restore is refused, naming it.
    const again = await client.bases
      .restoreFromTrash(trashed.id, { fieldIds: [budget.id] })
      .catch((e: unknown) => e);
    expect(again).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect((again as Error).message).toContain(budget.id);
    await client.bases.delete(trashed.id);
  });
});

describe('views', () => {
  it('saves, reads, changes, lists and deletes a view, its fields kept by id', async () => {
    const view = await client.views.create(base.id, 'People', {
      name: 'Scored leads',
      filter: {
        and: [
          { field: 'Stage', equals: 'Lead' },
          { field: 'Score', greater_than: 2 },
        ],
      },
      sort: [{ field: 'Score', direction: 'desc' }],
      fields: ['Name', 'Score'],
    });
    expect(view).toMatchObject({
      name: 'Scored leads',
      filter: {
        and: [
          { field: fieldId('Stage'), equals: 'Lead' },
          { field: fieldId('Score'), greater_than: 2 },
        ],
      },
      sort: [{ field: fieldId('Score'), direction: 'desc' }],
      fields: [fieldId('Name'), fieldId('Score')],
      search: null,
    });
    expect(await client.views.get(base.id, people().id, 'scored leads')).toEqual(view);
    const changed = await client.views.update(base.id, people().id, view.id, { search: 'ann', fields: null });
    expect(changed).toMatchObject({ id: view.id, search: 'ann', fields: null });
    expect(await client.views.list(base.id, people().id)).toEqual([changed]);
    const refused = await client.fields.delete(base.id, people().id, 'Score').catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    await expect(client.views.delete(base.id, people().id, view.id)).resolves.toEqual({
      success: true,
      message: 'View deleted',
    });
    expect(await client.views.list(base.id, people().id)).toEqual([]);
  });
});

describe('records', () => {
  it('writes one record, reads it with a projection, changes it and deletes it', async () => {
    const created = await client.records.create(base.id, 'People', { Name: 'Ada', Score: 3, Stage: 'Lead' });
    expect(created.fields).toMatchObject({ Name: 'Ada', Score: 3, Stage: 'Lead' });
    const read = await client.records.get(base.id, 'People', created.id, { fields: ['Name'] });
    expect(read.fields).toEqual({ Name: 'Ada' });
    const updated = await client.records.update(
      base.id,
      'People',
      created.id,
      { Score: ' 7 ' },
      { typecast: true },
    );
    expect(updated.fields.Score).toBe(7);
    await expect(client.records.delete(base.id, 'People', created.id)).resolves.toMatchObject({
      success: true,
    });
    const error = await client.records.get(base.id, 'People', created.id).catch((e: unknown) => e);
    expect(isRecordbaseError(error, 'NOT_FOUND')).toBe(true);
  });

  it('bulk creates, upserts on a field, updates and deletes by id, all answered as the contract says', async () => {
    const created = await client.records.createMany(base.id, 'People', [
      { Name: 'Grace', Email: 'grace@example.com', Score: 10 },
      { Name: 'Linus', Email: 'linus@example.com', Score: 20 },
    ]);
    expect(created.createdRecordIds).toEqual(created.records.map((r) => r.id));
    const upserted = await client.records.upsert(base.id, 'People', {
      matchOn: [fieldId('Email')],
      records: [
        { Email: 'grace@example.com', Score: 11 },
        { Email: 'new@example.com', Name: 'New' },
      ],
    });
    expect(upserted.updatedRecordIds).toEqual([created.records[0]!.id]);
    expect(upserted.createdRecordIds).toEqual([upserted.records[1]!.id]);
    expect(upserted.records[0]!.fields).toMatchObject({ Name: 'Grace', Score: 11 });

    const changed = await client.records.updateMany(base.id, 'People', [
      { id: created.records[1]!.id, fields: { Stage: 'Won' } },
    ]);
    expect(changed.updatedRecordIds).toEqual([created.records[1]!.id]);
    const ids = [...created.records.map((r) => r.id), upserted.records[1]!.id];
    await expect(client.records.deleteMany(base.id, 'People', ids)).resolves.toEqual({
      success: true,
      deletedIds: ids,
    });
  });

  it('lists with a nested filter, aggregates, and iterates over every page', async () => {
    const rows = Array.from({ length: 250 }, (_, i) => ({
      Name: `person ${i}`,
      Score: i,
      Stage: i % 3 === 0 ? 'Won' : 'Lead',
    }));
    for (let i = 0; i < rows.length; i += 100)
      await client.records.createMany(base.id, 'People', rows.slice(i, i + 100));

    const filter = {
      and: [
        { field: 'Stage', equals: 'Won' },
        {
          or: [
            { field: 'Score', less_than: 10 },
            { field: 'Score', greater_than_or_equal_to: 240 },
          ],
        },
      ],
    };
    const page = await client.records.list(base.id, 'People', {
      filter,
      sort: [{ field: 'Score', direction: 'asc' }],
    });
    expect(page.records.map((r) => r.fields.Score)).toEqual([0, 3, 6, 9, 240, 243, 246, 249]);
    expect(page).toMatchObject({ total: 8, hasMore: false, nextCursor: null });

    const sum = await client.records.aggregate(base.id, 'People', {
      groupBy: ['Stage'],
      aggregations: [{ fn: 'count' }, { field: 'Score', fn: 'sum' }],
    });
    const won = rows.filter((row) => row.Stage === 'Won');
    const lead = rows.filter((row) => row.Stage === 'Lead');
    const total = (some: typeof rows) => some.reduce((sum, row) => sum + row.Score, 0);
    expect(sum.groups).toEqual([
      { key: { Stage: 'Lead' }, values: [lead.length, total(lead)] },
      { key: { Stage: 'Won' }, values: [won.length, total(won)] },
    ]);

    const pages = [];
    for await (const one of client.records.pages(base.id, 'People', { limit: 100 }))
      pages.push(one.records.length);
    expect(pages).toEqual([100, 100, 50]);
    const seen = new Set<string>();
    for await (const record of client.records.iterate(base.id, 'People', { limit: 60, fields: ['Score'] })) {
      seen.add(record.id);
    }
    expect(seen.size).toBe(250);
  });

  it('reads a record’s history and the table’s, page by page, newest first', async () => {
    const created = await client.records.create(base.id, 'People', { Name: 'Hedy', Score: 1 });
    await client.records.update(base.id, 'People', created.id, { Score: 2, Stage: 'Won' });
    await client.records.delete(base.id, 'People', created.id);

    const first = await client.records.history(base.id, 'People', created.id, { limit: 2 });
    expect(first.revisions.map((revision) => revision.action)).toEqual(['deleted', 'updated']);
    expect(first.revisions[1]).toMatchObject({
      recordId: created.id,
      by: { id: 'root', name: expect.any(String) },
      source: 'public_api',
      changes: {
        [fieldId('Score')]: { before: 1, after: 2 },
        [fieldId('Stage')]: { before: null, after: 'Won' },
      },
    });
    expect(first.nextCursor).toEqual(expect.any(String));
    const last = await client.records.history(base.id, 'People', created.id, { cursor: first.nextCursor! });
    expect(last.revisions.map((revision) => revision.action)).toEqual(['created']);
    expect(last.nextCursor).toBeUndefined();

    // The table's history: the same revisions, the newest of the table; a record's cursor is refused.
    const table = await client.records.tableHistory(base.id, 'People', { limit: 3 });
    expect(table.revisions.map((revision) => revision.id)).toEqual(
      [...first.revisions, ...last.revisions].map((revision) => revision.id),
    );
    await expect(
      client.records.tableHistory(base.id, 'People', { cursor: first.nextCursor! }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    await expect(
      client.records.history(base.id, 'People', '0192d1c5-7e0a-7cc1-8a55-2f1f6f6f0b01'),
    ).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('restores a record to a revision', async () => {
    const created = await client.records.create(base.id, 'People', { Name: 'Ada', Score: 3 });
    await client.records.update(base.id, 'People', created.id, { Score: 9 });
    const { revisions } = await client.records.history(base.id, 'People', created.id);
    const creation = revisions.find((revision) => revision.action === 'created')!;
    const restored = await client.records.restoreRevision(base.id, 'People', created.id, creation.id);
    expect(restored.fields.Score).toBe(3);
    const [latest] = (await client.records.history(base.id, 'People', created.id, { limit: 1 })).revisions;
    expect(latest).toMatchObject({ action: 'restored', source: 'restore' });
  });

  it('lists a deleted record in the trash and restores it as it was', async () => {
    const before = await client.records.create(base.id, 'People', {
      Name: 'Grace',
      Email: 'grace@example.com',
      Score: 7,
      Stage: 'Won',
    });
    await client.records.delete(base.id, 'People', before.id);
    await expect(client.records.get(base.id, 'People', before.id)).rejects.toMatchObject({ status: 404 });

    // The most recently deleted first: the record as it read, who deleted it and when.
    const page = await client.records.trash(base.id, 'People', { limit: 1 });
    expect(page.records).toEqual([
      { record: before, deletedAt: expect.any(String), deletedBy: { id: 'root', name: expect.any(String) } },
    ]);
    if (page.nextCursor !== undefined) {
      const next = await client.records.trash(base.id, 'People', { cursor: page.nextCursor });
      expect(next.records.map((entry) => entry.record.id)).not.toContain(before.id);
    }

    const restored = await client.records.restoreFromTrash(base.id, 'People', [before.id]);
    expect(restored.records).toEqual([before]);
    expect(await client.records.get(base.id, 'People', before.id)).toEqual(before);
    // Out of the trash now: a second restore is refused, naming it.
    const again = await client.records
      .restoreFromTrash(base.id, 'People', [before.id])
      .catch((e: unknown) => e);
    expect(again).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect((again as Error).message).toContain(before.id);
  });

  it('throws the service error, its code and its message naming what was wrong', async () => {
    const error = await client.records.create(base.id, 'People', { Nmae: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordbaseApiError);
    expect(error).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    expect((error as Error).message).toMatch(/Nmae.*did you mean "Name"/);
  });
});

describe('API keys', () => {
  it('creates a scoped key whose client may read but not write, then revokes it', async () => {
    const key = await client.apiKeys.create({
      name: 'reader',
      scopes: ['records:read'],
      databaseIds: [base.id],
    });
    expect((await client.apiKeys.list()).map((k) => k.id)).toContain(key.id);
    const reader = services.client({ apiKey: key.key });
    await expect(reader.records.list(base.id, 'People', { limit: 1 })).resolves.toMatchObject({
      hasMore: true,
    });
    await expect(reader.records.create(base.id, 'People', { Name: 'no' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      status: 403,
    });
    await client.apiKeys.revoke(key.id);
    await expect(reader.records.list(base.id, 'People')).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });
});

describe('webhooks', () => {
  it('registers, reads, changes, lists deliveries of and deletes a webhook', async () => {
    const hook = await client.webhooks.create(base.id, {
      url: 'http://127.0.0.1:9/hook',
      events: ['record.updated'],
      tableId: 'People',
      fieldIds: ['Stage'],
    });
    expect(hook.secret).toMatch(/^whsec_/);
    expect(hook.fieldIds).toEqual([fieldId('Stage')]);
    expect(await client.webhooks.get(base.id, hook.id)).toEqual(
      expect.objectContaining({ id: hook.id, active: true, tableId: people().id }),
    );
    expect(
      (await client.webhooks.update(base.id, hook.id, { active: false, fieldIds: null })).fieldIds,
    ).toBeNull();
    expect((await client.webhooks.list(base.id)).map((w) => w.id)).toEqual([hook.id]);
    await expect(client.webhooks.deliveries(base.id, hook.id, { limit: 5 })).resolves.toEqual([]);
    await expect(client.webhooks.retryDelivery(base.id, hook.id, '999999')).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await client.webhooks.delete(base.id, hook.id);
    await expect(client.webhooks.get(base.id, hook.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('SQL', () => {
  it('queries with parameters and describes the tables', async () => {
    const answer = await client.sql.query(base.id, {
      query: 'SELECT count(*)::int AS n FROM "People" WHERE "Score" >= $1',
      params: [200],
    });
    expect(answer).toMatchObject({ rows: [[50]], rowCount: 1, truncated: false });
    const schema = await client.sql.schema(base.id);
    expect(schema.tables.map((t) => t.name)).toEqual(['People']);
  });
});

describe('files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'client-files-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('uploads a file into an attachment field, and downloads it by key and by signed link', async () => {
    const text = 'hello from the client\n'.repeat(100);
    const path = join(dir, 'notes.txt');
    await writeFile(path, text);
    const file = await fileFromPath(path, { type: 'text/plain' });
    const target = { baseId: base.id, tableId: 'People', fieldId: 'Photo' };
    const uploaded = await client.uploads.attachment(file, target);
    expect(uploaded).toMatchObject({ fileName: 'notes.txt', size: text.length, mimeType: 'text/plain' });

    const record = await client.records.create(base.id, 'People', {
      Name: 'with file',
      Photo: [{ url: uploaded.url }],
    });
    const [attachment] = record.fields.Photo as { url: string; signedUrl: string }[];
    expect(attachment!.url).toBe(uploaded.url);
    const download = await client.uploads.download(uploaded.url);
    expect(await download.text()).toBe(text);
    const part = await client.uploads.download(attachment!.signedUrl, { range: 'bytes=0-4' });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe('hello');
    const key = new URL(uploaded.url).pathname.replace(/^\/files\//, '');
    expect(client.uploads.fileUrl(decodeURIComponent(key))).toBe(uploaded.url);

    const streamed = await fileFromStream(Readable.from([Buffer.from('{"a":'), '1}']), 'data.json', {
      type: 'application/json',
    });
    await expect(client.uploads.attachment(streamed, target)).resolves.toMatchObject({
      fileName: 'data.json',
      mimeType: 'application/json',
    });
    const browserFile = new File(['<script>alert(1)</script>'], 'page.html', { type: 'text/html' });
    const refused = await client.uploads.attachment(browserFile, target).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    expect((refused as Error).message).toMatch(/not accepted as an attachment/);
  });

  it('refuses a stream past its limit before sending anything', async () => {
    const big = Readable.from([Buffer.alloc(600), Buffer.alloc(600)]);
    await expect(fileFromStream(big, 'big.bin', { maxBytes: 1000 })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
  });

  it('uploads a CSV and starts, reads, lists and cancels its import', async () => {
    const csv = new Blob(['Name,Score\nx,1\ny,2\n']);
    const uploaded = await client.uploads.csv(csv, { fileName: 'more people.csv' });
    expect(uploaded.s3Key).toMatch(/^imports\/.+\.csv$/);
    const started = await client.imports.start(base.id, { s3Key: uploaded.s3Key, tableId: 'People' });
    expect(started.status).toBe('queued');
    // No import worker runs here, so the import waits and can be cancelled.
    expect((await client.imports.get(base.id, started.id)).status).toBe('queued');
    expect((await client.imports.list(base.id)).map((i) => i.id)).toContain(started.id);
    const cancelled = await client.imports.cancel(base.id, started.id);
    expect(cancelled.status).toBe('failed');
    await expect(client.imports.cancel(base.id, started.id)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });
});
